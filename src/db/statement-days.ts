// The day table of statement coverage (statement_days): a ready statement's days written in one
// statement whatever its length (an import may span years), each day's fetched_at kept at the
// newest of the statements holding it. The days are counted out by the database itself, each
// dialect its own way; migrations 0019 (SQLite) and 0013 (PostgreSQL) fill the table the same way
// for the statements made ready before it existed.
import type { SqlPort } from "./sql-port";

const KEEP_NEWEST = `ON CONFLICT (bank_account_id, day) DO UPDATE SET fetched_at = excluded.fetched_at
   WHERE excluded.fetched_at > statement_days.fetched_at`;

const SQLITE = `WITH RECURSIVE held (bank_account_id, day, date_to, fetched_at) AS (
    SELECT bank_account_id, date_from, date_to, fetched_at FROM statements
     WHERE id = ? AND status = 'ready' AND fetched_at IS NOT NULL
    UNION ALL
    SELECT bank_account_id, date(day, '+1 day'), date_to, fetched_at FROM held WHERE day < date_to
  )
  INSERT INTO statement_days (bank_account_id, day, fetched_at)
  SELECT bank_account_id, day, fetched_at FROM held WHERE day IS NOT NULL
  ${KEEP_NEWEST}`;

const POSTGRES = `INSERT INTO statement_days (bank_account_id, day, fetched_at)
  SELECT s.bank_account_id, to_char(d, 'YYYY-MM-DD'), s.fetched_at
    FROM statements s
   CROSS JOIN LATERAL generate_series(s.date_from::timestamp, s.date_to::timestamp, interval '1 day') AS d
   WHERE s.id = ? AND s.status = 'ready' AND s.fetched_at IS NOT NULL
  ${KEEP_NEWEST}`;

/** Records the days of ready statement `id` (nothing for a statement that is not ready). */
export function statementDaysWriter(port: SqlPort): (statementId: string) => void {
  const statement = port.prepare<unknown, [string]>(port.dialect === "postgres" ? POSTGRES : SQLITE);
  return (statementId) => {
    statement.run(statementId);
  };
}
