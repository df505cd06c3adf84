// The rows of the statements tables and the reads over them that both the lifecycle repository
// and the agent tools' read-only model (mcp/read-model.ts) run: the statement list query. (An
// operation's row and its mapping: db/operation-rows.ts.)

/** An account's last balance as the bank reported it (kopecks). */
export interface BalanceRow {
  balance: number;
  currency: string;
  as_of: string;
}

export type StatementStatus = "processing" | "ready" | "failed";
export type BankState = "pending" | "requested" | "done";

export interface StatementRow {
  id: string;
  bank_account_id: string;
  api_token_id: string | null;
  source: "integration" | "ui" | "import" | "sync";
  external_id: string | null;
  date_from: string;
  date_to: string;
  status: StatementStatus;
  bank_state: BankState;
  bank_request_id: string | null;
  attempts: number;
  next_poll_at_ms: number;
  error_code: string | null;
  error_message: string | null;
  bank_error_code: string | null;
  opening_balance: number | null;
  closing_balance: number | null;
  total_credit: number | null;
  total_debit: number | null;
  operations_count: number | null;
  fetched_at: string | null;
  /** JSON array of DocType (see `docTypes`); null before ready, or if made ready before it was kept. */
  doc_types: string | null;
  created_at: string;
  /** SHA-256 of the 1C file an imported statement came from; null for ordered ones. */
  import_sha256: string | null;
  /** Until when a poller holds it (0: nobody). */
  lease_until_ms: number;
  /** A sync's piece: "{run}/{date_from}/{date_to}" (sync/repository.ts); null for other sources. */
  sync_key: string | null;
}

export interface StatementListFilter {
  apiTokenId?: string;
  bankAccountIds?: string[];
  status?: StatementStatus;
  before?: { created_at: string; id: string };
  limit: number;
}

/** The statement list query, shared by the repository and the agent tools' read-only model;
 *  null when no account is allowed (nothing to list). */
export function statementListQuery(
  filter: StatementListFilter,
): { sql: string; params: (string | number)[] } | null {
  const where: string[] = [];
  const params: (string | number)[] = [];
  if (filter.apiTokenId !== undefined) {
    where.push("api_token_id = ?");
    params.push(filter.apiTokenId);
  }
  if (filter.bankAccountIds !== undefined) {
    if (filter.bankAccountIds.length === 0) return null;
    where.push(`bank_account_id IN (${filter.bankAccountIds.map(() => "?").join(",")})`);
    params.push(...filter.bankAccountIds);
  }
  if (filter.status !== undefined) {
    where.push("status = ?");
    params.push(filter.status);
  }
  if (filter.before) {
    where.push("(created_at < ? OR (created_at = ? AND id < ?))");
    params.push(filter.before.created_at, filter.before.created_at, filter.before.id);
  }
  params.push(filter.limit);
  const sql = `SELECT * FROM statements ${where.length ? `WHERE ${where.join(" AND ")}` : ""}
                ORDER BY created_at DESC, id DESC LIMIT ?`;
  return { sql, params };
}
