// What one statement costs against PostgreSQL, three ways (not part of `make bench`):
//   bun run bench/pg-statements.ts postgres://…   (an empty database of your own; a table is made)
// PgSyncClient (the stores' synchronous client), postgres.js awaited one statement at a time, and
// postgres.js with 8 statements in flight. A primary-key read and a one-row insert, 20,000 each
// after 2,000 to warm up; prints microseconds per statement.
import postgres from "postgres";
import { PgSyncClient } from "../src/db/pg/sync-client";

const url = process.argv[2];
if (!url) throw new Error("usage: bun run bench/pg-statements.ts postgres://…");
const N = 20_000;
const READ = "SELECT id, name FROM bench_items WHERE id = $1";
const WRITE = "INSERT INTO bench_items (id, name) VALUES ($1, 'ёлка')";

const sync = new PgSyncClient(url, { timeoutMs: 10_000 });
sync.run("DROP TABLE IF EXISTS bench_items");
sync.run('CREATE TABLE bench_items (id bigint PRIMARY KEY, name text COLLATE "C" NOT NULL)');
sync.run("INSERT INTO bench_items SELECT g, 'ёлка' FROM generate_series(1, 100000) g");

function perStatement(run: () => void): number {
  const t0 = performance.now();
  run();
  return ((performance.now() - t0) / N) * 1000;
}
async function perStatementAsync(run: () => Promise<void>): Promise<number> {
  const t0 = performance.now();
  await run();
  return ((performance.now() - t0) / N) * 1000;
}

let next = 1_000_000;
const rows: [string, number, number][] = [];
for (let i = 0; i < 2000; i++) sync.query(READ, [i + 1]);
rows.push([
  "PgSyncClient",
  perStatement(() => {
    for (let i = 0; i < N; i++) sync.query(READ, [(i % 100_000) + 1]);
  }),
  perStatement(() => {
    for (let i = 0; i < N; i++) sync.run(WRITE, [next++]);
  }),
]);
sync.close();

const sql = postgres(url, { max: 8, onnotice: () => {} });
for (let i = 0; i < 2000; i++) await sql.unsafe(READ, [i + 1], { prepare: true });
rows.push([
  "postgres.js, one at a time",
  await perStatementAsync(async () => {
    for (let i = 0; i < N; i++) await sql.unsafe(READ, [(i % 100_000) + 1], { prepare: true });
  }),
  await perStatementAsync(async () => {
    for (let i = 0; i < N; i++) await sql.unsafe(WRITE, [next++], { prepare: true });
  }),
]);
const lanes = async (text: string, param: () => number) => {
  let done = 0;
  const lane = async () => {
    while (done < N) {
      done++;
      await sql.unsafe(text, [param()], { prepare: true });
    }
  };
  await Promise.all(Array.from({ length: 8 }, lane));
};
let r = 0;
rows.push([
  "postgres.js, 8 in flight",
  await perStatementAsync(() => lanes(READ, () => (r++ % 100_000) + 1)),
  await perStatementAsync(() => lanes(WRITE, () => next++)),
]);
await sql`DROP TABLE bench_items`;
await sql.end();

console.log("| client | read µs | insert µs |\n|---|---|---|");
for (const [name, read, write] of rows) console.log(`| ${name} | ${read.toFixed(0)} | ${write.toFixed(0)} |`);
