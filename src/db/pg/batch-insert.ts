// Several rows of one table on PostgreSQL in one statement, its columns as arrays (a round trip
// per row was most of an agent call's time there). One statement is atomic by itself: no
// transaction around it (two round trips fewer).
import type { SqlArray, SqlPort, SqlValue } from "../sql-port";

export function postgresBatchInsert(
  port: SqlPort,
  table: string,
  columns: readonly string[],
  bigintColumns: readonly string[],
): (rows: SqlValue[][]) => void {
  const names = columns.join(", ");
  const one = port.prepare<unknown, SqlValue[]>(
    `INSERT INTO ${table} (${names}) VALUES (${columns.map(() => "?").join(", ")})`,
  );
  const many = port.prepare<unknown, SqlArray[]>(
    `INSERT INTO ${table} (${names})
     SELECT ${names}
       FROM unnest(${columns.map((c) => (bigintColumns.includes(c) ? "?::bigint[]" : "?::text[]")).join(", ")})
            WITH ORDINALITY AS t(${names}, n)
      ORDER BY n`,
  );
  return (rows) => {
    if (rows.length === 1) {
      one.run(...rows[0]!);
      return;
    }
    many.run(...columns.map((_, i) => rows.map((r) => r[i] as string | number | null)));
  };
}
