// lanes: postgres
// The throwaway PostgreSQL that `make test` starts (scripts/pg-test.sh), reached the way the
// PostgreSQL store will reach it: postgres.js through drizzle-orm's postgres-js driver, on Bun.
// Checks what the store will lean on: queries with parameters, exact 64-bit integers, a byte-order
// collation for Cyrillic keys, transactions, an advisory lock (migrations), LISTEN/NOTIFY (emptying other replicas' caches).
import { afterAll, expect, test } from "bun:test";
import { sql as raw } from "drizzle-orm";
import { drizzle } from "drizzle-orm/postgres-js";
import postgres from "postgres";

const URL = process.env.SVC_TEST_DATABASE_URL;
// `make test` always sets it; a run of this file alone without a server says so instead of passing.
const client = URL ? postgres(URL, { max: 4, onnotice: () => {} }) : null;

afterAll(async () => {
  await client?.end({ timeout: 5 });
});

test("the suite's PostgreSQL answers through postgres.js and drizzle", async () => {
  expect(
    URL,
    "SVC_TEST_DATABASE_URL: run through make test (scripts/run-tests.sh starts the server)",
  ).toBeString();
  const sql = client!;
  const db = drizzle(sql);
  await sql`CREATE TABLE IF NOT EXISTS smoke (id bigint PRIMARY KEY, name text COLLATE "C" NOT NULL)`;
  await sql.begin(async (tx) => {
    await tx`DELETE FROM smoke`;
    await tx`INSERT INTO smoke ${tx([
      { id: 9_007_199_254_740_991, name: "Ёлка" },
      { id: 2, name: "ёж" },
    ])}`;
  });
  const rows = await db.execute<{ id: string; name: string }>(
    raw`SELECT id::text, name FROM smoke ORDER BY name`,
  );
  expect(rows.map((r) => [r.id, r.name])).toEqual([
    ["9007199254740991", "Ёлка"],
    ["2", "ёж"],
  ]);
  const [locked] = await sql`SELECT pg_try_advisory_lock(hashtext('svc:migrate')) AS ok`;
  expect(locked?.ok).toBe(true);
  await sql`SELECT pg_advisory_unlock(hashtext('svc:migrate'))`;
});

test("LISTEN/NOTIFY reaches another connection", async () => {
  expect(URL).toBeString();
  const sql = client!;
  const heard = new Promise<string>((resolve) => {
    void sql.listen("svc_cache", (payload) => resolve(payload));
  });
  // The listener's connection is set up asynchronously; notify until it hears.
  let payload: string | null = null;
  for (let i = 0; i < 50 && payload === null; i++) {
    await sql`SELECT pg_notify('svc_cache', '7')`;
    payload = await Promise.race([heard, Bun.sleep(50).then(() => null)]);
  }
  expect(payload).toBe("7");
});
