// What the agent tools read, and nothing else: plain SELECTs over a connection that the database
// itself refuses to write through (store.readPort). No method here writes; the connection could not.
import { searchOperations as searchOnPostgres } from "../db/pg/operations-search";
import type { RowCache } from "../db/row-cache";
import type { SqlPort } from "../db/sql-port";
import type { StatementOperation } from "../formats/types";
import {
  type BalanceRow,
  OPERATION_COLUMNS,
  operationFromRow,
  type StatementListFilter,
  type StatementRow,
  statementListQuery,
} from "../statements/queries";

export interface CompanyRecord {
  company_id: string;
  name: string;
  inn: string;
  kpp: string | null;
}

export interface OperationFilter {
  bankAccountId: string;
  dateFrom: string;
  dateTo: string;
  amountMinKopecks?: number;
  amountMaxKopecks?: number;
  counterpartyInn?: string;
  direction?: "credit" | "debit";
  /** The words of the text looked for, as `searchWords` gives them (never empty). */
  words?: string[];
  after?: { doc_date: string; operation_id: string };
  limit: number;
}

type OperationRow = Parameters<typeof operationFromRow>[0];

export class McpReadModel {
  private readonly companyStmt;
  private readonly balanceStmt;
  private readonly statementStmt;
  private readonly statementOpsStmt;
  private readonly statementRangeStmt;

  /**
   * `balances`: kept in memory, shared with the repository that writes them (see `balance`);
   * without it (tests of the queries alone) every balance is read from the database.
   */
  constructor(
    readonly port: SqlPort,
    private readonly balances: RowCache<BalanceRow> | null = null,
  ) {
    this.companyStmt = port.prepare<CompanyRecord, [string]>(
      "SELECT id AS company_id, name, inn, kpp FROM companies WHERE id = ?",
    );
    this.balanceStmt = port.prepare<BalanceRow, [string]>(
      "SELECT balance, currency, as_of FROM balances WHERE bank_account_id = ?",
    );
    this.statementStmt = port.prepare<StatementRow, [string]>("SELECT * FROM statements WHERE id = ?");
    this.statementOpsStmt = port.prepare<OperationRow, [string, string, number]>(
      `SELECT ${OPERATION_COLUMNS}
         FROM statement_operations so
         JOIN operations o ON o.bank_account_id = ? AND o.operation_id = so.operation_id
        WHERE so.statement_id = ?
        ORDER BY so.seq LIMIT ?`,
    );
    this.statementRangeStmt = port.prepare<{ first: string | null; last: string | null }, [string, string]>(
      `SELECT MIN(o.doc_date) AS first, MAX(o.doc_date) AS last
         FROM statement_operations so
         JOIN operations o ON o.bank_account_id = ? AND o.operation_id = so.operation_id
        WHERE so.statement_id = ?`,
    );
  }

  company(id: string): CompanyRecord | null {
    return this.companyStmt.get(id) ?? null;
  }

  /**
   * Every get_balance reads one, so balances are kept in memory: the statements repository
   * forgets one it writes, and another process's commit empties them all. Treat the result as
   * read-only.
   */
  balance(bankAccountId: string): BalanceRow | null {
    if (!this.balances) return this.balanceStmt.get(bankAccountId) ?? null;
    return this.balances.get(bankAccountId, () => this.balanceStmt.get(bankAccountId) ?? null);
  }

  statement(id: string): StatementRow | null {
    return this.statementStmt.get(id) ?? null;
  }

  /** Statements of the accounts, every source, newest first; keyset paging on (created_at, id). */
  statements(q: StatementListFilter & { bankAccountIds: string[] }): StatementRow[] {
    const query = statementListQuery(q);
    return query ? this.port.prepare<StatementRow, (string | number)[]>(query.sql).all(...query.params) : [];
  }

  /** The first `limit` operations of a statement, in the bank's order. */
  statementOperations(
    statement: Pick<StatementRow, "id" | "bank_account_id">,
    limit: number,
  ): StatementOperation[] {
    return this.statementOpsStmt.all(statement.bank_account_id, statement.id, limit).map(operationFromRow);
  }

  statementDateRange(statement: Pick<StatementRow, "id" | "bank_account_id">): {
    first: string | null;
    last: string | null;
  } {
    return (
      this.statementRangeStmt.get(statement.bank_account_id, statement.id) ?? { first: null, last: null }
    );
  }

  /**
   * Stored operations of one account (never the bank), ordered by (doc_date, operation_id).
   * Operations are unique per (account, operation_id), so one held by two overlapping statements
   * comes back once. Served by operations_date_idx / operations_inn_idx / operations_amount_idx
   * and the full-text index on SQLite; on PostgreSQL by its own (pg/operations-search.ts).
   */
  searchOperations(f: OperationFilter): StatementOperation[] {
    if (this.port.dialect === "postgres") return searchOnPostgres(this.port, f);
    const where = ["o.bank_account_id = ?", "o.doc_date >= ?", "o.doc_date <= ?"];
    const params: (string | number)[] = [f.bankAccountId, f.dateFrom, f.dateTo];
    if (f.amountMinKopecks !== undefined) {
      where.push("o.amount >= ?");
      params.push(f.amountMinKopecks);
    }
    if (f.amountMaxKopecks !== undefined) {
      where.push("o.amount <= ?");
      params.push(f.amountMaxKopecks);
    }
    if (f.counterpartyInn !== undefined) {
      where.push("o.counterparty_inn = ?");
      params.push(f.counterpartyInn);
    }
    if (f.direction !== undefined) {
      where.push("o.direction = ?");
      params.push(f.direction);
    }
    if (f.after) {
      where.push("(o.doc_date > ? OR (o.doc_date = ? AND o.operation_id > ?))");
      params.push(f.after.doc_date, f.after.doc_date, f.after.operation_id);
    }
    // With a counterparty, its index serves both the filter and the order; left to itself the
    // planner prefers the date index for the ORDER BY and scans the whole period.
    const from = `operations o ${f.counterpartyInn !== undefined ? "INDEXED BY operations_inn_idx" : ""}`;
    const order = "ORDER BY o.doc_date, o.operation_id";
    const run = (sql: string, p: (string | number)[]) =>
      this.port
        .prepare<OperationRow, (string | number)[]>(sql)
        .all(...p)
        .map(operationFromRow);
    if (f.words === undefined) {
      return run(`SELECT ${OPERATION_COLUMNS} FROM ${from} WHERE ${where.join(" AND ")} ${order} LIMIT ?`, [
        ...params,
        f.limit,
      ]);
    }
    // Text. Listing every match of a common word costs as much as the word is common, so the next
    // candidates in order are checked against the full-text index within their rowid range (one
    // account's operations are stored roughly in date order, so the range is narrow), in growing
    // windows. That answer is exact once it fills the page or covers every candidate. A word still
    // short of a page after the widest window is rare: its few matches are listed and fetched by id.
    const match = ftsQuery(f.words);
    for (const window of [f.limit * 4, f.limit * 40, f.limit * 400]) {
      const candidates = this.port
        .prepare<{ id: number }, (string | number)[]>(
          `SELECT o.id FROM ${from} WHERE ${where.join(" AND ")} ${order} LIMIT ?`,
        )
        .all(...params, window)
        .map((r) => r.id);
      if (candidates.length === 0) return [];
      const matched = new Set(
        this.port
          .prepare<{ id: number }, [string, number, number]>(
            "SELECT rowid AS id FROM operations_fts WHERE operations_fts MATCH ? AND rowid BETWEEN ? AND ?",
          )
          .all(match, Math.min(...candidates), Math.max(...candidates))
          .map((r) => r.id),
      );
      const hits = candidates.filter((id) => matched.has(id)).slice(0, f.limit);
      if (hits.length === f.limit || candidates.length < window) {
        if (hits.length === 0) return [];
        return run(
          `SELECT ${OPERATION_COLUMNS} FROM operations o WHERE o.id IN (${hits.map(() => "?").join(",")}) ${order}`,
          hits,
        );
      }
    }
    return run(
      `SELECT ${OPERATION_COLUMNS} FROM operations o NOT INDEXED
        WHERE o.id IN (SELECT rowid FROM operations_fts WHERE operations_fts MATCH ?) AND ${where.join(" AND ")}
        ${order} LIMIT ?`,
      [match, ...params, f.limit],
    );
  }
}

/**
 * The words of free text a search looks for: split on white space, ё read as е, words without a
 * letter or digit dropped, at most `maxWords`. Null when nothing searchable is left. Each store
 * folds and splits a word further the way its index does (FTS5 here, svc_words on PostgreSQL).
 */
export function searchWords(text: string, maxWords = 12): string[] | null {
  // The index holds ё as е (migration 0008): so does the query.
  const words = text
    .replaceAll("ё", "е")
    .replaceAll("Ё", "Е")
    .split(/\s+/u)
    .filter((w) => /[\p{L}\p{N}]/u.test(w))
    .slice(0, maxWords);
  return words.length === 0 ? null : words;
}

/**
 * Search words as an FTS5 query: each word becomes a quoted string token (inner quotes doubled),
 * so no FTS5 operator or column filter can come from the user, with a prefix star; words are ANDed.
 */
export function ftsQuery(words: string[]): string {
  return words.map((w) => `"${w.replaceAll('"', '""')}"*`).join(" ");
}
