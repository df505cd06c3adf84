// Several rows of one table on SQLite: one transaction of the one prepared insert (no round trips
// to pay for there).
import type { SqlPort, SqlValue } from "../sql-port";

export function sqliteBatchInsert(
  port: SqlPort,
  table: string,
  columns: readonly string[],
): (rows: SqlValue[][]) => void {
  const insert = port.prepare<unknown, SqlValue[]>(
    `INSERT INTO ${table} (${columns.join(", ")}) VALUES (${columns.map(() => "?").join(", ")})`,
  );
  return (rows) => {
    port.transaction(() => {
      for (const row of rows) insert.run(...row);
    });
  };
}
