// The sandbox bank's own record of the calls it received, so tests and the admin page can see
// exactly what the service asked of the bank. The service persists it; tests keep it in memory.

export type SandboxRequestKind = "statement_request" | "statement_poll" | "balance" | "payment_submit";

export interface SandboxRequestEntry {
  at: Date;
  bank_account_id: string;
  kind: SandboxRequestKind;
  date_from: string | null;
  date_to: string | null;
  client_ref: string | null;
}

export interface SandboxRequestLog {
  record(entry: SandboxRequestEntry): void;
}

export class InMemorySandboxRequestLog implements SandboxRequestLog {
  readonly entries: SandboxRequestEntry[] = [];

  record(entry: SandboxRequestEntry): void {
    this.entries.push({ ...entry });
  }

  forAccount(bankAccountId: string): SandboxRequestEntry[] {
    return this.entries.filter((e) => e.bank_account_id === bankAccountId);
  }

  clear(): void {
    this.entries.length = 0;
  }
}
