// search_operations' one slot in the store, written once per dialect (db/sqlite/operations-search.ts: FTS5 within the account's
// rowids; db/pg/operations-search.ts: the account-keyed GIN index), the same rows in the same order.
import type { StatementOperation } from "../formats/types";
import type { OperationFilter } from "./operation-filter";
import { searchOperations as searchOnPostgres } from "./pg/operations-search";
import type { SearchLimits } from "./search-limits";
import type { SqlPort } from "./sql-port";
import { searchOperations as searchOnSqlite } from "./sqlite/operations-search";

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
