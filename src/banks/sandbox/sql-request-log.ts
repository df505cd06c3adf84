// The sandbox bank's own request log, persisted so that tests and operators can see exactly which
// calls reached the (sandbox) bank.

import type { SqlPort } from "../../db/sql-port";
import type { SandboxRequestEntry, SandboxRequestLog } from "./request-log";

export interface SandboxRequestView {
  at: string;
  bank_account_id: string;
  kind: string;
  date_from: string | null;
  date_to: string | null;
  client_ref: string | null;
}

export class SqlSandboxRequestLog implements SandboxRequestLog {
  private readonly insert;

  constructor(private readonly port: SqlPort) {
    this.insert = port.prepare<
      unknown,
      [string, string, string, string | null, string | null, string | null]
    >(
      "INSERT INTO sandbox_requests (at, bank_account_id, kind, date_from, date_to, client_ref) VALUES (?, ?, ?, ?, ?, ?)",
    );
  }

  record(e: SandboxRequestEntry): void {
    this.insert.run(e.at.toISOString(), e.bank_account_id, e.kind, e.date_from, e.date_to, e.client_ref);
  }

  list(bankAccountId?: string, limit = 1000): SandboxRequestView[] {
    const sql = `SELECT at, bank_account_id, kind, date_from, date_to, client_ref FROM sandbox_requests
                  ${bankAccountId ? "WHERE bank_account_id = ?" : ""} ORDER BY id LIMIT ?`;
    const params = bankAccountId ? [bankAccountId, limit] : [limit];
    return this.port.prepare<SandboxRequestView, (string | number)[]>(sql).all(...params);
  }
}
