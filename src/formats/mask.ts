// Masks are cut from one string of stars: `repeat` per call showed in the poll's profile.
const STARS = "*".repeat(64);
const stars = (n: number) => (n <= STARS.length ? STARS.slice(0, n) : "*".repeat(n));

/** A 20-digit account number as agents and lists see it: first 4 and last 4 digits. */
export function maskAccountNumber(account: string): string {
  if (account.length <= 8) return stars(account.length);
  return account.slice(0, 4) + stars(account.length - 8) + account.slice(-4);
}
