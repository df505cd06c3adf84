// What each dialect does its own way, picked here from the port so that the stores above it
// never ask which database they hold (docs/architecture.md, "dialect slots"). Each answer is
// implemented once per dialect, in sqlite/ and pg/.
import type { OperationWriter } from "./operation-values";
import { postgresBatchInsert } from "./pg/batch-insert";
import { postgresOperationWriter } from "./pg/operation-writer";
import type { SqlPort, SqlValue } from "./sql-port";
import { sqliteBatchInsert } from "./sqlite/batch-insert";
import { sqliteOperationWriter } from "./sqlite/operation-writer";

/** How a statement's operations are stored, chunk by chunk (the same rows on both). */
export function operationWriter(port: SqlPort): OperationWriter {
  return port.dialect === "postgres" ? postgresOperationWriter(port) : sqliteOperationWriter(port);
}

/**
 * Writes several rows of `table` (values in `columns` order), in order, all or none: SQLite in one
 * transaction of prepared inserts, PostgreSQL in one statement (its `bigintColumns` sent as
 * bigint arrays, the rest as text).
 */
export function batchInsert(
  port: SqlPort,
  table: string,
  columns: readonly string[],
  options: { bigintColumns: readonly string[] },
): (rows: SqlValue[][]) => void {
  return port.dialect === "postgres"
    ? postgresBatchInsert(port, table, columns, options.bigintColumns)
    : sqliteBatchInsert(port, table, columns);
}

/**
 * `table` as a FROM clause that reads a range of its ids by the primary key alone: on SQLite
 * `NOT INDEXED` (a range of at most a few thousand rowids; no index can do better, and the planner
 * would pick one of the filters' indexes); PostgreSQL's planner finds the key range itself.
 */
export function byKeyRange(port: SqlPort, table: string): string {
  return port.dialect === "sqlite" ? `${table} NOT INDEXED` : table;
}
