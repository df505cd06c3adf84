// What the agent tools read, and nothing else: plain SELECTs over a connection that the database
// itself refuses to write through (store.readPort). No method here writes; the connection could not.
import { DEFAULT_TIMEZONE } from "../core/clock";
import type { OperationFilter, TotalsFilter } from "../db/operation-filter";
import { OPERATION_COLUMNS, type OperationTotals, operationFromRow } from "../db/operation-rows";
import type { RowCache } from "../db/row-cache";
import { SEARCH_LIMITS, type SearchLimits } from "../db/search-limits";
import { type OperationSearches, searchesHere } from "../db/search-threads";
import type { SqlPort } from "../db/sql-port";
import type { StatementOperation } from "../formats/types";
import { type Coverage, CoverageReader } from "../statements/coverage";
import {
  type BalanceRow,
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

type OperationRow = Parameters<typeof operationFromRow>[0];

export class McpReadModel {
  private readonly companyStmt;
  private readonly balanceStmt;
  private readonly statementStmt;
  private readonly statementOpsStmt;
  private readonly statementRangeStmt;
  private readonly coverageReader;

  /**
   * `balances`: kept in memory, shared with the repository that writes them (see `balance`);
   * without it (tests of the queries alone) every balance is read from the database.
   * `searchLimits`: what one search may cost (see SearchLimits).
   * `timeZone`: the business time zone, in which a day ends (coverage).
   * `searches`: where searches run (the store's threads; by default here, over `port`).
   */
  constructor(
    readonly port: SqlPort,
    private readonly balances: RowCache<BalanceRow> | null = null,
    readonly searchLimits: SearchLimits = SEARCH_LIMITS,
    timeZone: string = DEFAULT_TIMEZONE,
    private readonly searches: OperationSearches = searchesHere(port),
  ) {
    this.coverageReader = new CoverageReader(port, timeZone);
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
   * Stored operations of one account (never the bank), ordered by (doc_date, operation_id), each
   * once; a text search within its budget (db/operation-search.ts, on either store).
   */
  searchOperations(f: OperationFilter): Promise<StatementOperation[]> {
    return this.searches.search(f, this.searchLimits);
  }

  /** Which days of `from`..`to` the ready statements of the account hold, as of `now` (statements/coverage.ts). */
  coverage(bankAccountId: string, from: string, to: string, now: Date): Coverage {
    return this.coverageReader.read(bankAccountId, from, to, now);
  }

  /**
   * The count and credit and debit sums (kopecks) of every stored operation of one account in the
   * whole period that matches the filter: the operations `searchOperations` gives over all pages,
   * each once; within the same budget.
   */
  searchTotals(f: TotalsFilter): Promise<OperationTotals> {
    return this.searches.totals(f, this.searchLimits);
  }
}
