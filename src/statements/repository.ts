// Statement orders, their operations and cached balances. Writes that belong together run in one
// synchronous BEGIN IMMEDIATE transaction.
import type { Database, Statement } from "bun:sqlite";
import { type ExternalChanges, RowCache } from "../db/sqlite/row-cache";
import type { StoredCsvValues } from "../formats/csv";
import { DOC_TYPES, type OneCVersion, type StatementOperation } from "../formats/types";
import { oneCDocumentSql } from "./onec-sql";

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
  source: "integration" | "ui";
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
  opening_balance: number | null;
  closing_balance: number | null;
  total_credit: number | null;
  total_debit: number | null;
  operations_count: number | null;
  fetched_at: string | null;
  /** JSON array of DocType (see `docTypes`); null before ready, or if made ready before it was kept. */
  doc_types: string | null;
  created_at: string;
}

/** Distinct kinds in DOC_TYPES order (a kind it lacks, which no export can write, last). */
function inDocTypeOrder(kinds: Iterable<string>): string[] {
  const rank = (kind: string) => {
    const i = (DOC_TYPES as readonly string[]).indexOf(kind);
    return i < 0 ? DOC_TYPES.length : i;
  };
  return [...new Set(kinds)].sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0));
}

export interface NewStatement {
  id: string;
  bank_account_id: string;
  api_token_id: string | null;
  source: "integration" | "ui";
  external_id: string | null;
  date_from: string;
  date_to: string;
  created_at: string;
}

export type OrderOutcome = { kind: "created"; row: StatementRow } | { kind: "existing"; row: StatementRow };

export interface StoredOperation extends StatementOperation {
  seq?: number;
}

interface OperationDbRow {
  operation_id: string;
  direction: "credit" | "debit";
  doc_type: StatementOperation["doc_type"];
  doc_number: string;
  doc_date: string;
  amount: number;
  currency: string;
  purpose: string;
  payer_name: string;
  payer_inn: string;
  payer_kpp: string;
  payer_account: string;
  payer_bank_name: string;
  payer_bank_bik: string;
  payer_bank_corr_account: string;
  payee_name: string;
  payee_inn: string;
  payee_kpp: string;
  payee_account: string;
  payee_bank_name: string;
  payee_bank_bik: string;
  payee_bank_corr_account: string;
  uin: string | null;
  purpose_code: string | null;
  priority: string | null;
}

export const OPERATION_COLUMNS = `o.operation_id, o.direction, o.doc_type, o.doc_number, o.doc_date, o.amount, o.currency,
  o.purpose, o.payer_name, o.payer_inn, o.payer_kpp, o.payer_account, o.payer_bank_name, o.payer_bank_bik,
  o.payer_bank_corr_account, o.payee_name, o.payee_inn, o.payee_kpp, o.payee_account, o.payee_bank_name,
  o.payee_bank_bik, o.payee_bank_corr_account, o.uin, o.purpose_code, o.priority`;

function hasConcat(sqlite: Database): boolean {
  try {
    sqlite.query("SELECT concat('a', 'b')").get();
    return true;
  } catch {
    return false;
  }
}

export function operationFromRow(r: OperationDbRow): StatementOperation {
  return {
    operation_id: r.operation_id,
    direction: r.direction,
    doc_type: r.doc_type,
    doc_number: r.doc_number,
    doc_date: r.doc_date,
    amount: r.amount,
    currency: r.currency,
    purpose: r.purpose,
    payer: {
      name: r.payer_name,
      inn: r.payer_inn,
      kpp: r.payer_kpp,
      account: r.payer_account,
      bank_name: r.payer_bank_name,
      bank_bik: r.payer_bank_bik,
      bank_corr_account: r.payer_bank_corr_account,
    },
    payee: {
      name: r.payee_name,
      inn: r.payee_inn,
      kpp: r.payee_kpp,
      account: r.payee_account,
      bank_name: r.payee_bank_name,
      bank_bik: r.payee_bank_bik,
      bank_corr_account: r.payee_bank_corr_account,
    },
    uin: r.uin,
    purpose_code: r.purpose_code,
    priority: r.priority,
  };
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

export interface ReadyResult {
  opening_balance: number;
  closing_balance: number;
  total_credit: number;
  total_debit: number;
  operations_count: number;
  fetched_at: string;
  /** Document kinds among the stored operations (what storeOperations returned, all chunks). */
  doc_types: Iterable<string>;
}

export class StatementRepository {
  private readonly byId;
  private readonly byTokenExternal;
  private readonly insertStmt;
  private readonly insertOp;
  private readonly storedDocType;
  private readonly linkOp;
  private readonly opsJsonPage;
  private readonly opsCsvPage;
  private readonly opsAt;
  private readonly opsOneCPage = new Map<
    OneCVersion,
    Statement<Record<string, unknown>, [string, string, number, number]>
  >();
  private readonly dueStmt;

  // Statement rows read by id (every poll reads one), kept while nothing writes them. Without
  // `changes` (tests of the queries alone) nothing is kept.
  private readonly rows: RowCache<StatementRow> | null;

  // Whether SQLite lays out the 1C documents (concat() came with SQLite 3.44: Bun carries a newer
  // one, but on some systems it loads the system library). Without it every document is left to
  // the field writer, as `document` null says.
  private readonly layOutOneC: boolean;

  // Balances kept in memory for readers on other connections (the agent tools): a balance
  // written here is forgotten there.
  private readonly balanceRows: RowCache<BalanceRow> | null;

  constructor(
    private readonly sqlite: Database,
    changes?: ExternalChanges,
    options: { layOutOneC?: boolean; balanceRows?: RowCache<BalanceRow> } = {},
  ) {
    this.rows = changes ? new RowCache(changes) : null;
    this.balanceRows = options.balanceRows ?? null;
    this.layOutOneC = options.layOutOneC ?? hasConcat(sqlite);
    this.byId = sqlite.query<StatementRow, [string]>("SELECT * FROM statements WHERE id = ?");
    this.byTokenExternal = sqlite.query<StatementRow, [string, string]>(
      "SELECT * FROM statements WHERE api_token_id = ? AND external_id = ?",
    );
    this.insertStmt = sqlite.query(
      `INSERT INTO statements (id, bank_account_id, api_token_id, source, external_id, date_from, date_to, status,
                               bank_state, attempts, next_poll_at_ms, created_at)
       VALUES ($id, $bank_account_id, $api_token_id, $source, $external_id, $date_from, $date_to, 'processing',
               'pending', 0, 0, $created_at)`,
    );
    this.insertOp = sqlite.query(
      `INSERT OR IGNORE INTO operations (bank_account_id, operation_id, doc_date, direction, doc_type, doc_number,
         amount, currency, purpose, counterparty_inn, payer_name, payer_inn, payer_kpp, payer_account,
         payer_bank_name, payer_bank_bik, payer_bank_corr_account, payee_name, payee_inn, payee_kpp, payee_account,
         payee_bank_name, payee_bank_bik, payee_bank_corr_account, uin, purpose_code, priority)
       VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21,
               ?22, ?23, ?24, ?25, ?26, ?27)`,
    );
    this.storedDocType = sqlite.query<{ doc_type: string }, [string, string]>(
      "SELECT doc_type FROM operations WHERE bank_account_id = ? AND operation_id = ?",
    );
    this.linkOp = sqlite.query(
      "INSERT OR REPLACE INTO statement_operations (statement_id, seq, operation_id) VALUES (?, ?, ?)",
    );
    this.opsAt = sqlite.query<OperationDbRow & { seq: number }, [string, string, string]>(
      `SELECT so.seq, ${OPERATION_COLUMNS}
         FROM statement_operations so
         JOIN operations o ON o.bank_account_id = ? AND o.operation_id = so.operation_id
        WHERE so.statement_id = ? AND so.seq IN (SELECT value FROM json_each(?))
        ORDER BY so.seq`,
    );
    // The csv export's values, in CSV_COLUMNS order after seq (amount still in kopecks), read as
    // arrays: no object per row.
    this.opsCsvPage = sqlite.query<Record<string, unknown>, [string, string, number, number]>(
      `SELECT so.seq, o.doc_date, o.doc_number, o.amount, o.currency, o.direction, o.payer_inn, o.payer_name,
              o.payer_account, o.payee_inn, o.payee_name, o.payee_account, o.purpose
         FROM statement_operations so
         JOIN operations o ON o.bank_account_id = ? AND o.operation_id = so.operation_id
        WHERE so.statement_id = ? AND so.seq > ? AND so.seq <= ?
        ORDER BY so.seq`,
    );
    // The json export's operation objects, built by SQLite itself: the same keys and values as
    // `operationJson` (amounts in rubles with at most two decimals), without a JS object per row.
    const party = (p: string) =>
      `json_object('name', o.${p}_name, 'inn', o.${p}_inn, 'kpp', o.${p}_kpp, 'account', o.${p}_account,
         'bank_name', o.${p}_bank_name, 'bank_bik', o.${p}_bank_bik, 'bank_corr_account', o.${p}_bank_corr_account)`;
    this.opsJsonPage = sqlite.query<{ seq: number; json: string }, [string, string, number, number]>(
      `SELECT so.seq, json_object('operation_id', o.operation_id, 'direction', o.direction, 'doc_type', o.doc_type,
              'doc_number', o.doc_number, 'doc_date', o.doc_date,
              'amount', CASE WHEN o.amount % 100 = 0 THEN o.amount / 100 ELSE o.amount / 100.0 END,
              'currency', o.currency, 'purpose', o.purpose, 'payer', ${party("payer")}, 'payee', ${party("payee")}) AS json
         FROM statement_operations so
         JOIN operations o ON o.bank_account_id = ? AND o.operation_id = so.operation_id
        WHERE so.statement_id = ? AND so.seq > ? AND so.seq <= ?
        ORDER BY so.seq`,
    );
    this.dueStmt = sqlite.query<StatementRow, [number, number]>(
      `SELECT * FROM statements WHERE status = 'processing' AND next_poll_at_ms <= ?
        ORDER BY next_poll_at_ms, created_at LIMIT ?`,
    );
  }

  /** Treat the result as read-only: it may be shared with other requests. */
  findById(id: string): StatementRow | null {
    if (!this.rows) return this.byId.get(id) ?? null;
    return this.rows.get(id, () => this.byId.get(id) ?? null);
  }

  /** A write to statement `id`: its cached row goes, also when the write fails. */
  private writing(id: string, write: () => unknown): void {
    if (this.rows) this.rows.write(id, write);
    else write();
  }

  /**
   * Creates the order unless (token, external_id) already exists, atomically. The unique index on
   * (api_token_id, external_id) is the final guard, also across processes.
   */
  createOrFind(s: NewStatement): OrderOutcome {
    return this.sqlite
      .transaction((): OrderOutcome => {
        if (s.api_token_id !== null && s.external_id !== null) {
          const existing = this.byTokenExternal.get(s.api_token_id, s.external_id);
          if (existing) return { kind: "existing", row: existing };
        }
        this.insertStmt.run({ ...s });
        return { kind: "created", row: this.byId.get(s.id)! };
      })
      .immediate();
  }

  /** Removes an order that must not exist (its bank cannot serve it); nothing references it yet. */
  delete(id: string): void {
    this.writing(id, () =>
      this.sqlite.query("DELETE FROM statements WHERE id = ? AND bank_state = 'pending'").run(id),
    );
  }

  markRequested(id: string, bankRequestId: string, nextPollAtMs: number): void {
    this.writing(id, () =>
      this.sqlite
        .query(
          `UPDATE statements SET bank_state = 'requested', bank_request_id = ?, next_poll_at_ms = ?, attempts = attempts + 1
            WHERE id = ? AND bank_state = 'pending'`,
        )
        .run(bankRequestId, nextPollAtMs, id),
    );
  }

  reschedule(id: string, nextPollAtMs: number): void {
    this.writing(id, () =>
      this.sqlite
        .query("UPDATE statements SET next_poll_at_ms = ?, attempts = attempts + 1 WHERE id = ?")
        .run(nextPollAtMs, id),
    );
  }

  markFailed(id: string, code: string, message: string): void {
    this.writing(id, () =>
      this.sqlite
        .query(
          `UPDATE statements SET status = 'failed', bank_state = 'done', error_code = ?, error_message = ?
            WHERE id = ? AND status = 'processing'`,
        )
        .run(code, message, id),
    );
  }

  /**
   * Stores one chunk of a statement's operations (idempotent: a re-run after a crash is harmless).
   * Returns the document kinds of the stored rows: an operation stored before (by an overlapping
   * statement) keeps its stored row, whose kind is the one the exports show.
   */
  storeOperations(
    statementId: string,
    bankAccountId: string,
    firstSeq: number,
    ops: StatementOperation[],
  ): Set<string> {
    const docTypes = new Set<string>();
    this.sqlite
      .transaction(() => {
        let seq = firstSeq;
        for (const op of ops) {
          const counterparty = op.direction === "credit" ? op.payer.inn : op.payee.inn;
          const inserted = this.insertOp.run(
            bankAccountId,
            op.operation_id,
            op.doc_date,
            op.direction,
            op.doc_type,
            op.doc_number,
            op.amount,
            op.currency,
            op.purpose,
            counterparty,
            op.payer.name,
            op.payer.inn,
            op.payer.kpp,
            op.payer.account,
            op.payer.bank_name,
            op.payer.bank_bik,
            op.payer.bank_corr_account,
            op.payee.name,
            op.payee.inn,
            op.payee.kpp,
            op.payee.account,
            op.payee.bank_name,
            op.payee.bank_bik,
            op.payee.bank_corr_account,
            op.uin ?? null,
            op.purpose_code ?? null,
            op.priority ?? null,
          ).changes;
          if (inserted === 1) docTypes.add(op.doc_type);
          else {
            const stored = this.storedDocType.get(bankAccountId, op.operation_id);
            if (stored) docTypes.add(stored.doc_type);
          }
          this.linkOp.run(statementId, seq, op.operation_id);
          seq += 1;
        }
      })
      .immediate();
    return docTypes;
  }

  /** Completes a statement; with `balance` also caches the account balance, in the same transaction. */
  markReady(
    id: string,
    r: ReadyResult,
    balance: { bank_account_id: string; balance: number; currency: string; as_of: string } | null,
  ): void {
    this.writing(id, () =>
      this.sqlite
        .transaction(() => {
          this.sqlite
            .query(
              `UPDATE statements SET status = 'ready', bank_state = 'done', opening_balance = ?, closing_balance = ?,
                  total_credit = ?, total_debit = ?, operations_count = ?, fetched_at = ?, doc_types = ?
            WHERE id = ? AND status = 'processing'`,
            )
            .run(
              r.opening_balance,
              r.closing_balance,
              r.total_credit,
              r.total_debit,
              r.operations_count,
              r.fetched_at,
              JSON.stringify(inDocTypeOrder(r.doc_types)),
              id,
            );
          // Cut off any rows beyond the final count (left by an interrupted earlier attempt).
          this.sqlite
            .query("DELETE FROM statement_operations WHERE statement_id = ? AND seq > ?")
            .run(id, r.operations_count);
          if (balance) this.upsertBalance(balance);
        })
        .immediate(),
    );
  }

  upsertBalance(b: BalanceRow & { bank_account_id: string }): void {
    const write = () =>
      this.sqlite
        .query(
          `INSERT INTO balances (bank_account_id, balance, currency, as_of) VALUES (?, ?, ?, ?)
         ON CONFLICT(bank_account_id) DO UPDATE SET balance = excluded.balance, currency = excluded.currency,
           as_of = excluded.as_of WHERE excluded.as_of >= balances.as_of`,
        )
        .run(b.bank_account_id, b.balance, b.currency, b.as_of);
    if (this.balanceRows) this.balanceRows.write(b.bank_account_id, write);
    else write();
  }

  balance(bankAccountId: string): BalanceRow | null {
    return (
      this.sqlite
        .query<BalanceRow, [string]>(
          "SELECT balance, currency, as_of FROM balances WHERE bank_account_id = ?",
        )
        .get(bankAccountId) ?? null
    );
  }

  due(nowMs: number, limit: number): StatementRow[] {
    return this.dueStmt.all(nowMs, limit);
  }

  /** The operations at these positions of a statement, in seq order. */
  operationsAt(
    statement: Pick<StatementRow, "id" | "bank_account_id">,
    seqs: number[],
  ): { seq: number; op: StatementOperation }[] {
    return this.opsAt
      .all(statement.bank_account_id, statement.id, JSON.stringify(seqs))
      .map((r) => ({ seq: r.seq, op: operationFromRow(r) }));
  }

  /** A statement's operations after `afterSeq` through `lastSeq` as stored csv values
   *  (CSV_COLUMNS order, amount in kopecks). */
  operationsCsvPage(
    statement: Pick<StatementRow, "id" | "bank_account_id">,
    afterSeq: number,
    lastSeq: number,
  ): { seq: number; values: StoredCsvValues }[] {
    return this.opsCsvPage
      .values(statement.bank_account_id, statement.id, afterSeq, lastSeq)
      .map((v) => ({ seq: v[0] as number, values: v.slice(1) as StoredCsvValues }));
  }

  /** A statement's operations after `afterSeq` through `lastSeq` as 1C documents laid out by
   *  SQLite (`oneCDocumentSql`); `document` is null for a row the field writer must write. */
  operationsOneCPage(
    statement: Pick<StatementRow, "id" | "bank_account_id">,
    version: OneCVersion,
    afterSeq: number,
    lastSeq: number,
  ): { seq: number; document: string | null }[] {
    let query = this.opsOneCPage.get(version);
    if (!query) {
      query = this.sqlite.query<Record<string, unknown>, [string, string, number, number]>(
        `SELECT so.seq, ${this.layOutOneC ? oneCDocumentSql(version).expression : "NULL"}
           FROM statement_operations so
           JOIN operations o ON o.bank_account_id = ? AND o.operation_id = so.operation_id
          WHERE so.statement_id = ? AND so.seq > ? AND so.seq <= ?
          ORDER BY so.seq`,
      );
      this.opsOneCPage.set(version, query);
    }
    return query
      .values(statement.bank_account_id, statement.id, afterSeq, lastSeq)
      .map((v) => ({ seq: v[0] as number, document: v[1] as string | null }));
  }

  /** A statement's operations after `afterSeq` through `lastSeq` as json export objects (JSON text). */
  operationsJsonPage(
    statement: Pick<StatementRow, "id" | "bank_account_id">,
    afterSeq: number,
    lastSeq: number,
  ): { seq: number; json: string }[] {
    return this.opsJsonPage.all(statement.bank_account_id, statement.id, afterSeq, lastSeq);
  }

  /** The document kinds among a ready statement's operations, in DOC_TYPES order: as kept when
   *  it became ready, else read from its operations (every one of them). */
  docTypes(statement: Pick<StatementRow, "id" | "doc_types">): string[] {
    if (statement.doc_types !== null) return JSON.parse(statement.doc_types) as string[];
    const found = this.sqlite
      .query<{ doc_type: string }, [string]>(
        `SELECT DISTINCT o.doc_type FROM statement_operations so
           JOIN statements s ON s.id = so.statement_id
           JOIN operations o ON o.bank_account_id = s.bank_account_id AND o.operation_id = so.operation_id
          WHERE so.statement_id = ?`,
      )
      .all(statement.id)
      .map((r) => r.doc_type);
    return inDocTypeOrder(found);
  }

  /** Statements newest first; keyset paging on (created_at, id). */
  list(filter: StatementListFilter): StatementRow[] {
    const query = statementListQuery(filter);
    return query ? this.sqlite.query<StatementRow, (string | number)[]>(query.sql).all(...query.params) : [];
  }
}
