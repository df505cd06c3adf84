// search_operations' one slot in the store, written once per dialect (db/sqlite/operations-search.ts: FTS5 within the account's
// rowids; db/pg/operations-search.ts: the account-keyed GIN index), the same rows in the same order, and the same totals.
import type { StatementOperation } from "../formats/types";
import type { OperationFilter, TotalsFilter } from "./operation-filter";
import type { OperationTotals } from "./operation-rows";
import {
  searchOperations as searchOnPostgres,
  operationTotals as totalsOnPostgres,
} from "./pg/operations-search";
import type { SearchLimits } from "./search-limits";
import type { SqlPort } from "./sql-port";
import {
  searchOperations as searchOnSqlite,
  operationTotals as totalsOnSqlite,
} from "./sqlite/operations-search";

/** Stored operations of one account matching the filter, ordered by (doc_date, operation_id). */
export function searchOperations(
  port: SqlPort,
  f: OperationFilter,
  limits: SearchLimits,
): StatementOperation[] {
  return port.dialect === "postgres"
    ? searchOnPostgres(port, f, undefined, limits.postgresMs)
    : searchOnSqlite(port, f, limits);
}

/**
 * How many stored operations of the account match the filter in the whole period, and their
 * credit and debit sums: the operations `searchOperations` gives over all pages, each once.
 * Within the same budget as a search (SearchBudgetExceeded past it).
 */
export function operationTotals(port: SqlPort, f: TotalsFilter, limits: SearchLimits): OperationTotals {
  return port.dialect === "postgres"
    ? totalsOnPostgres(port, f, limits.postgresMs)
    : totalsOnSqlite(port, f, limits);
}
