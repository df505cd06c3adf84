// Statements of a database made before statement_days existed, and the rows its migration (SQLite
// 0019, PostgreSQL 0013) must derive from them: per account and day, the newest fetched_at of the
// ready statements holding the day; statements processing or failed give none.
import { expect } from "bun:test";
import type { SqlPort } from "../../src/db/sql-port";
import { CoverageReader } from "../../src/statements/coverage";

const CREATED = "2026-01-01T00:00:00.000Z";

type Old = [id: string, account: string, from: string, to: string, status: string, fetchedAt: string | null];

const STATEMENTS: Old[] = [
  ["s1", "a1", "2026-10-30", "2026-11-02", "ready", "2026-11-03T08:00:00.000Z"],
  // Overlaps s1 and is newer: 11-01 and 11-02 take its fetched_at. Fetched at 13:00 in Moscow on
  // its last day: that day is partial.
  ["s2", "a1", "2026-11-01", "2026-11-05", "ready", "2026-11-05T10:00:00.000Z"],
  // Older than s2 on its one day: changes nothing.
  ["s3", "a1", "2026-11-02", "2026-11-02", "ready", "2026-11-02T12:00:00.000Z"],
  ["s4", "a1", "2026-11-10", "2026-11-12", "processing", null],
  ["s5", "a1", "2026-11-13", "2026-11-14", "failed", null],
  // Across a year's end and a leap day.
  ["s6", "a1", "2023-12-30", "2024-01-01", "ready", "2024-03-05T00:00:00.000Z"],
  ["s7", "a1", "2024-02-28", "2024-03-01", "ready", "2024-03-05T00:00:00.000Z"],
  ["s8", "a2", "2026-11-01", "2026-11-01", "ready", "2026-11-02T00:00:00.000Z"],
];

const BACKFILLED_DAYS: [account: string, day: string, fetchedAt: string][] = [
  ["a1", "2023-12-30", "2024-03-05T00:00:00.000Z"],
  ["a1", "2023-12-31", "2024-03-05T00:00:00.000Z"],
  ["a1", "2024-01-01", "2024-03-05T00:00:00.000Z"],
  ["a1", "2024-02-28", "2024-03-05T00:00:00.000Z"],
  ["a1", "2024-02-29", "2024-03-05T00:00:00.000Z"],
  ["a1", "2024-03-01", "2024-03-05T00:00:00.000Z"],
  ["a1", "2026-10-30", "2026-11-03T08:00:00.000Z"],
  ["a1", "2026-10-31", "2026-11-03T08:00:00.000Z"],
  ["a1", "2026-11-01", "2026-11-05T10:00:00.000Z"],
  ["a1", "2026-11-02", "2026-11-05T10:00:00.000Z"],
  ["a1", "2026-11-03", "2026-11-05T10:00:00.000Z"],
  ["a1", "2026-11-04", "2026-11-05T10:00:00.000Z"],
  ["a1", "2026-11-05", "2026-11-05T10:00:00.000Z"],
  ["a2", "2026-11-01", "2026-11-02T00:00:00.000Z"],
];
const BACKFILLED = BACKFILLED_DAYS.map(([bank_account_id, day, fetched_at]) => ({
  bank_account_id,
  day,
  fetched_at,
}));

/** Company c1 with accounts a1 and a2 and the statements above, in columns every migration since 0015 has. */
export function insertOldStatements(port: SqlPort): void {
  port
    .prepare(
      "INSERT INTO companies (id, name, inn, kpp, created_at) VALUES ('c1', 'ООО Ромашка', '7707083893', NULL, ?)",
    )
    .run(CREATED);
  const account = port.prepare(
    `INSERT INTO bank_accounts (id, company_id, bank, account_number, bik, currency, alias, created_at)
     VALUES (?, 'c1', 'sandbox', ?, '044525104', 'RUB', ?, ?)`,
  );
  account.run("a1", "40702810000000000001", "one", CREATED);
  account.run("a2", "40702810000000000002", "two", CREATED);
  const statement = port.prepare(
    `INSERT INTO statements (id, bank_account_id, source, date_from, date_to, status, bank_state, fetched_at, created_at)
     VALUES (?, ?, 'ui', ?, ?, ?, 'done', ?, ?)`,
  );
  for (const [id, accountId, from, to, status, fetchedAt] of STATEMENTS) {
    statement.run(id, accountId, from, to, status, fetchedAt, CREATED);
  }
}

/** The migrated database holds exactly BACKFILLED, and coverage reads it at once. */
export function expectBackfilled(port: SqlPort): void {
  const rows = port
    .prepare("SELECT bank_account_id, day, fetched_at FROM statement_days ORDER BY bank_account_id, day")
    .all();
  expect(rows).toEqual(BACKFILLED);
  const coverage = new CoverageReader(port, "Europe/Moscow").read(
    "a1",
    "2026-10-29",
    "2026-11-11",
    new Date("2026-11-20T09:00:00Z"),
  );
  expect(coverage).toEqual({
    complete: false,
    covered: [{ date_from: "2026-10-30", date_to: "2026-11-04" }],
    partial: [{ date: "2026-11-05", as_of: "2026-11-05T10:00:00.000Z" }],
    missing: [
      { date_from: "2026-10-29", date_to: "2026-10-29" },
      { date_from: "2026-11-06", date_to: "2026-11-11" },
    ],
  });
}
