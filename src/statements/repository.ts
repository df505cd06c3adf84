// Statement orders (their lifecycle from order to ready or failed), the operations they hold and
// cached balances. Writes that belong together run in one synchronous transaction (SQLite: BEGIN
// IMMEDIATE; PostgreSQL: serializable, run again after a conflict). Portable SQL on the stores'
// port. How operations are written is each dialect's own (db/dialect.ts), what the exports read in
// db/export-reads.ts.
import { operationWriter } from "../db/dialect";
import type { OperationWriter } from "../db/operation-values";
import { type CacheChanges, RowCache } from "../db/row-cache";
import type { SqlPort } from "../db/sql-port";
import { statementDaysWriter } from "../db/statement-days";
import { inDocTypeOrder, type StatementOperation } from "../formats/types";
import { type BalanceRow, type StatementListFilter, type StatementRow, statementListQuery } from "./queries";

export type { BalanceRow, BankState, StatementListFilter, StatementRow, StatementStatus } from "./queries";

/** What an order (or an import) is stored with; the rest of the row starts at its defaults. */
export type NewStatement = Pick<
  StatementRow,
  | "id"
  | "bank_account_id"
  | "api_token_id"
  | "source"
  | "external_id"
  | "date_from"
  | "date_to"
  | "created_at"
> & {
  import_sha256?: string | null;
  /** When the poller first takes it (default 0: at once). */
  next_poll_at_ms?: number;
  /** Held by its creator until then (default 0: nobody holds it). */
  lease_until_ms?: number;
};

export type OrderOutcome = { kind: "created"; row: StatementRow } | { kind: "existing"; row: StatementRow };

export interface StoredOperation extends StatementOperation {
  seq?: number;
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
  private readonly importOfToken;
  private readonly importOfOperator;
  private readonly insertStmt;
  private readonly storeChunk: OperationWriter;
  private readonly dueStmt;
  private readonly takeLeaseStmt;
  private readonly extendLeaseStmt;
  private readonly recordDays;

  // Statement rows read by id (every poll reads one), kept while nothing writes them. Without
  // `changes` (tests of the queries alone) nothing is kept.
  private readonly rows: RowCache<StatementRow> | null;

  // Balances kept in memory for readers on other connections (the agent tools): a balance
  // written here is forgotten there.
  private readonly balanceRows: RowCache<BalanceRow> | null;

  constructor(
    private readonly port: SqlPort,
    changes?: CacheChanges,
    options: { balanceRows?: RowCache<BalanceRow> } = {},
  ) {
    this.rows = changes ? new RowCache(changes, "statements") : null;
    this.balanceRows = options.balanceRows ?? null;
    this.byId = port.prepare<StatementRow, [string]>("SELECT * FROM statements WHERE id = ?");
    this.byTokenExternal = port.prepare<StatementRow, [string, string]>(
      "SELECT * FROM statements WHERE api_token_id = ? AND external_id = ?",
    );
    // The first statement imported from one file to one account by one owner (on the account index).
    const imported = `SELECT * FROM statements WHERE bank_account_id = ? AND source = 'import' AND import_sha256 = ?`;
    this.importOfToken = port.prepare<StatementRow, [string, string, string]>(
      `${imported} AND api_token_id = ? ORDER BY created_at, id LIMIT 1`,
    );
    this.importOfOperator = port.prepare<StatementRow, [string, string]>(
      `${imported} AND api_token_id IS NULL ORDER BY created_at, id LIMIT 1`,
    );
    this.insertStmt = port.prepare<unknown, (string | number | null)[]>(
      `INSERT INTO statements (id, bank_account_id, api_token_id, source, external_id, date_from, date_to, status,
                               bank_state, attempts, next_poll_at_ms, created_at, import_sha256, lease_until_ms)
       VALUES (?, ?, ?, ?, ?, ?, ?, 'processing', 'pending', 0, ?, ?, ?, ?)`,
    );
    this.storeChunk = operationWriter(port);
    this.recordDays = statementDaysWriter(port);
    this.takeLeaseStmt = port.prepare<StatementRow, [number, string, number]>(
      `UPDATE statements SET lease_until_ms = ?
        WHERE id = ? AND status = 'processing' AND lease_until_ms <= ?
       RETURNING *`,
    );
    this.extendLeaseStmt = port.prepare<unknown, [number, string]>(
      "UPDATE statements SET lease_until_ms = ? WHERE id = ?",
    );
    // Held statements are left out: another poller works on them (takeLease would refuse them).
    this.dueStmt = port.prepare<StatementRow, [number, number, number]>(
      `SELECT * FROM statements WHERE status = 'processing' AND next_poll_at_ms <= ? AND lease_until_ms <= ?
        ORDER BY next_poll_at_ms, created_at LIMIT ?`,
    );
  }

  /** Treat the result as read-only: it may be shared with other requests. */
  findById(id: string): StatementRow | null {
    if (!this.rows) return this.byId.get(id) ?? null;
    return this.rows.get(id, () => this.byId.get(id) ?? null);
  }

  /** The statement of a token's external_id (never a cached row). */
  findByExternalId(apiTokenId: string, externalId: string): StatementRow | null {
    return this.byTokenExternal.get(apiTokenId, externalId) ?? null;
  }

  /**
   * The statement already imported from the file with this SHA-256 to this account by this token
   * (null: by the operator), if any: the same file again makes no second statement.
   */
  findImport(bankAccountId: string, sha256: string, apiTokenId: string | null): StatementRow | null {
    return (
      (apiTokenId === null
        ? this.importOfOperator.get(bankAccountId, sha256)
        : this.importOfToken.get(bankAccountId, sha256, apiTokenId)) ?? null
    );
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
    return this.port.transaction((): OrderOutcome => {
      if (s.api_token_id !== null && s.external_id !== null) {
        const existing = this.byTokenExternal.get(s.api_token_id, s.external_id);
        if (existing) return { kind: "existing", row: existing };
      }
      this.insertStmt.run(
        s.id,
        s.bank_account_id,
        s.api_token_id,
        s.source,
        s.external_id,
        s.date_from,
        s.date_to,
        s.next_poll_at_ms ?? 0,
        s.created_at,
        s.import_sha256 ?? null,
        s.lease_until_ms ?? 0,
      );
      return { kind: "created", row: this.byId.get(s.id)! };
    });
  }

  /**
   * A statement that arrives whole (a bank's own file): created ready with its operations and, when
   * given, the balance it ends with, in one transaction, unless (token, external_id) exists already.
   */
  createReady(
    s: NewStatement,
    ready: Omit<ReadyResult, "operations_count" | "doc_types">,
    operations: StatementOperation[],
    balance: (BalanceRow & { bank_account_id: string }) | null,
  ): OrderOutcome {
    return this.port.transaction((): OrderOutcome => {
      const outcome = this.createOrFind(s);
      if (outcome.kind === "existing") return outcome;
      const kinds = new Set<string>();
      for (let first = 0; first < operations.length; first += 2000) {
        const chunk = operations.slice(first, first + 2000);
        for (const kind of this.storeOperations(s.id, s.bank_account_id, first + 1, chunk)) kinds.add(kind);
      }
      this.markReady(s.id, { ...ready, operations_count: operations.length, doc_types: [...kinds] }, balance);
      return { kind: "created", row: this.byId.get(s.id)! };
    });
  }

  /** Removes an order that must not exist (its bank cannot serve it); nothing references it yet. */
  delete(id: string): void {
    this.writing(id, () =>
      this.port.prepare("DELETE FROM statements WHERE id = ? AND bank_state = 'pending'").run(id),
    );
  }

  /**
   * Takes statement `id` for one poller until `untilMs`, if it is still processing and nobody holds
   * it at `nowMs` (one statement, atomic on either store: of several replicas one gets it). Returns
   * the row as that statement left it, never a cached one, or null.
   */
  takeLease(id: string, nowMs: number, untilMs: number): StatementRow | null {
    let taken: StatementRow | null = null;
    this.writing(id, () => {
      taken = this.takeLeaseStmt.get(untilMs, id, nowMs);
    });
    return taken;
  }

  /** Moves the end of a held lease (a long store renews it between chunks). */
  extendLease(id: string, untilMs: number): void {
    this.writing(id, () => this.extendLeaseStmt.run(untilMs, id));
  }

  releaseLease(id: string): void {
    this.writing(id, () => this.extendLeaseStmt.run(0, id));
  }

  /** Lets every lease go (only for the one server of a database, at its start); how many were held. */
  releaseAllLeases(): number {
    let freed = 0;
    const release = () => {
      freed = this.port
        .prepare("UPDATE statements SET lease_until_ms = 0 WHERE lease_until_ms > 0")
        .run().changes;
    };
    if (this.rows) this.rows.writeAll(release);
    else release();
    return freed;
  }

  markRequested(id: string, bankRequestId: string, nextPollAtMs: number): void {
    this.writing(id, () =>
      this.port
        .prepare(
          `UPDATE statements SET bank_state = 'requested', bank_request_id = ?, next_poll_at_ms = ?, attempts = attempts + 1
            WHERE id = ? AND bank_state = 'pending'`,
        )
        .run(bankRequestId, nextPollAtMs, id),
    );
  }

  reschedule(id: string, nextPollAtMs: number): void {
    this.writing(id, () =>
      this.port
        .prepare("UPDATE statements SET next_poll_at_ms = ?, attempts = attempts + 1 WHERE id = ?")
        .run(nextPollAtMs, id),
    );
  }

  /** `bankCode`: the bank's own code of the refusal, when it gave one. */
  markFailed(id: string, code: string, message: string, bankCode: string | null = null): void {
    this.writing(id, () =>
      this.port
        .prepare(
          `UPDATE statements SET status = 'failed', bank_state = 'done', error_code = ?, error_message = ?,
                  bank_error_code = ?
            WHERE id = ? AND status = 'processing'`,
        )
        .run(code, message, bankCode, id),
    );
  }

  /** Stores one chunk of a statement's operations; the kinds of the stored rows (OperationWriter). */
  storeOperations(
    statementId: string,
    bankAccountId: string,
    firstSeq: number,
    ops: StatementOperation[],
  ): Set<string> {
    return this.storeChunk(statementId, bankAccountId, firstSeq, ops);
  }

  /**
   * One chunk of an import (storeOperations) and its statement's lease moved to `leaseUntilMs`, in
   * one transaction: whoever stores the chunks holds the statement while it does, and nobody else
   * writes for it in between (a worker thread's connection, the server's thread never waiting).
   */
  storeImportChunk(
    statementId: string,
    bankAccountId: string,
    firstSeq: number,
    ops: StatementOperation[],
    leaseUntilMs: number,
  ): Set<string> {
    return this.port.transaction(() => {
      const kinds = this.storeOperations(statementId, bankAccountId, firstSeq, ops);
      this.extendLease(statementId, leaseUntilMs);
      return kinds;
    });
  }

  /**
   * Completes a statement; with `balance` also caches the account balance, in the same transaction.
   * The one place a statement becomes ready: its days go into statement_days here too.
   */
  markReady(
    id: string,
    r: ReadyResult,
    balance: { bank_account_id: string; balance: number; currency: string; as_of: string } | null,
  ): void {
    this.writing(id, () =>
      this.port.transaction(() => {
        const { changes } = this.port
          .prepare(
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
        // The days it holds, for coverage (statements/coverage.ts); a statement already ready has them.
        if (changes > 0) this.recordDays(id);
        // Cut off any rows beyond the final count (left by an interrupted earlier attempt).
        this.port
          .prepare("DELETE FROM statement_operations WHERE statement_id = ? AND seq > ?")
          .run(id, r.operations_count);
        if (balance) this.upsertBalance(balance);
      }),
    );
  }

  upsertBalance(b: BalanceRow & { bank_account_id: string }): void {
    const write = () =>
      this.port
        .prepare(
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
      this.port
        .prepare<BalanceRow, [string]>(
          "SELECT balance, currency, as_of FROM balances WHERE bank_account_id = ?",
        )
        .get(bankAccountId) ?? null
    );
  }

  due(nowMs: number, limit: number): StatementRow[] {
    return this.dueStmt.all(nowMs, nowMs, limit);
  }

  /** Statements newest first; keyset paging on (created_at, id). */
  list(filter: StatementListFilter): StatementRow[] {
    const query = statementListQuery(filter);
    return query ? this.port.prepare<StatementRow, (string | number)[]>(query.sql).all(...query.params) : [];
  }
}
