/** A 20-digit account number as agents and lists see it: first 4 and last 4 digits. */
export function maskAccountNumber(account: string): string {
  if (account.length <= 8) return "*".repeat(account.length);
  return `${account.slice(0, 4)}${"*".repeat(account.length - 8)}${account.slice(-4)}`;
}
