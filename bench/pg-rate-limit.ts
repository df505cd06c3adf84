// The PostgreSQL rate limiter (src/db/pg/rate-limiter.ts) on its own: hits per second and the
// latency of one hit, from 32 hits in flight through one postgres.js pool of 10 connections,
// (a) spread over 100 keys (tokens), (b) all on one key (every hit waits for the same row lock).
//   bun run bench/pg-rate-limit.ts [hits per case]
// Uses SVC_BENCH_DATABASE_URL if set, otherwise a throwaway cluster (scripts/pg-test.sh); either
// way in a database of its own, migrated with migrations-pg/ and dropped at the end.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { drizzle } from "drizzle-orm/postgres-js";
import { migrate } from "drizzle-orm/postgres-js/migrator";
import postgres from "postgres";
import { systemClock } from "../src/core/clock";
import { PostgresRateLimiter } from "../src/db/pg/rate-limiter";
import { ROOT } from "../test/helpers/server";

const hits = Number(process.argv[2] ?? 50_000);
const inFlight = 32;

let clusterDir: string | null = null;
let serverUrl = process.env.SVC_BENCH_DATABASE_URL;
if (!serverUrl) {
  clusterDir = mkdtempSync(join(tmpdir(), "svc-bench-pg-"));
  const started = Bun.spawnSync(["bash", "scripts/pg-test.sh", "start", clusterDir], { cwd: ROOT });
  if (started.exitCode !== 0) throw new Error(`pg-test.sh start: ${started.stderr.toString()}`);
  serverUrl = (await Bun.file(join(clusterDir, "url")).text()).trim();
}
const admin = postgres(serverUrl, { max: 1, onnotice: () => {} });
const name = `svc_bench_rl_${crypto.randomUUID().replaceAll("-", "")}`;
await admin.unsafe(`CREATE DATABASE ${name}`);
const url = new URL(serverUrl);
url.pathname = `/${name}`;
const sql = postgres(url.toString(), { max: 10, onnotice: () => {} });

try {
  await migrate(drizzle(sql), { migrationsFolder: join(ROOT, "migrations-pg") });
  // The real clock: a run that crosses a minute also pays for its sweep, as a server would.
  const limiter = new PostgresRateLimiter(sql, systemClock);
  const run = async (label: string, keyOf: (i: number) => string) => {
    const latencies = new Float64Array(hits);
    let next = 0;
    const worker = async () => {
      for (let i = next++; i < hits; i = next++) {
        const started = performance.now();
        await limiter.hit(keyOf(i), 1_000_000);
        latencies[i] = performance.now() - started;
      }
    };
    const started = performance.now();
    await Promise.all(Array.from({ length: inFlight }, worker));
    const seconds = (performance.now() - started) / 1000;
    latencies.sort();
    const at = (q: number) => latencies[Math.min(hits - 1, Math.floor(q * hits))]!.toFixed(2);
    process.stdout.write(
      `${label}: ${Math.round(hits / seconds)} hits/s, p50 ${at(0.5)} ms, p99 ${at(0.99)} ms\n`,
    );
  };
  await run("warm-up", (i) => `warm-${i % 100}`);
  await run("100 keys", (i) => `key-${i % 100}`);
  await run("one key", () => "one-key");
} finally {
  await sql.end({ timeout: 5 });
  await admin.unsafe(`DROP DATABASE ${name}`);
  await admin.end({ timeout: 5 });
  if (clusterDir) Bun.spawnSync(["bash", "scripts/pg-test.sh", "stop", clusterDir], { cwd: ROOT });
}
