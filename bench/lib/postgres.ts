// PostgreSQL for the benchmarks: a throwaway server (scripts/pg-test.sh), the readiness of
// statements over the REST API (the replicas' database is no file to open), and the table that
// bench/pg-search.ts prints.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Sql } from "postgres";
import { ROOT } from "../../test/helpers/server";
import { BENCH_DIR } from "./wrk";

interface ThrowawayPostgres {
  /** postgres://svc@127.0.0.1:PORT/postgres */
  url: string;
  stop(): void;
}

/** A server of its own in a fresh directory; null when PostgreSQL is not installed. */
export async function startPostgres(): Promise<ThrowawayPostgres | null> {
  const dir = mkdtempSync(join(tmpdir(), "svc-bench-pg-"));
  const script = join(ROOT, "scripts/pg-test.sh");
  // Immediate shutdown and the directory removed: nothing of a benchmark's cluster is kept.
  const stop = () => {
    Bun.spawnSync(["bash", script, "stop", dir], { stdout: "ignore", stderr: "ignore" });
  };
  const started = Bun.spawnSync(["bash", script, "start", dir], { stdout: "pipe", stderr: "pipe" });
  if (started.exitCode !== 0) {
    stop();
    const err = started.stderr.toString();
    if (err.includes("not installed")) return null;
    throw new Error(`pg-test.sh start: ${err}`);
  }
  try {
    return { url: (await Bun.file(join(dir, "url")).text()).trim(), stop };
  } catch (e) {
    stop();
    throw e;
  }
}

/** What the numbers were measured with: pg-test.sh turns durability off, so commits never wait
 *  for the disk; a durable server would be slower on every write. */
export async function serverSettings(sql: Sql): Promise<Record<string, string>> {
  const rows = await sql<{ name: string; setting: string }[]>`
    SELECT name, setting FROM pg_settings
     WHERE name IN ('server_version', 'fsync', 'full_page_writes', 'synchronous_commit', 'max_connections')
     ORDER BY name`;
  return {
    ...Object.fromEntries(rows.map((r) => [r.name, r.setting])),
    note: "throwaway cluster (scripts/pg-test.sh), durability off: not a durable setup",
  };
}

/** The URL of the database `sql` is connected to, on the server at `serverUrl`. */
export async function databaseUrl(serverUrl: string, sql: Sql): Promise<string> {
  const [row] = await sql<{ db: string }[]>`SELECT current_database() AS db`;
  const url = new URL(serverUrl);
  url.pathname = `/${row!.db}`;
  return url.toString();
}

/** Polls each statement with its own token until all are ready; throws on a failed one. */
export async function waitReadyOverHttp(
  url: string,
  polls: { token: string; id: string }[],
  timeoutMs: number,
): Promise<number> {
  const started = performance.now();
  let pending = polls;
  for (;;) {
    const still: typeof polls = [];
    for (const p of pending) {
      const res = await fetch(`${url}/api/v1/integration/statements/${p.id}`, {
        headers: { authorization: `Bearer ${p.token}` },
      });
      const text = await res.text();
      if (res.status !== 200) throw new Error(`poll ${p.id}: HTTP ${res.status} ${text}`);
      const { status } = JSON.parse(text) as { status: string };
      if (status === "failed") throw new Error(`statement ${p.id} failed: ${text}`);
      if (status !== "ready") still.push(p);
    }
    pending = still;
    if (pending.length === 0) return performance.now() - started;
    if (performance.now() - started > timeoutMs)
      throw new Error(`${pending.length} of ${polls.length} statements not ready in time`);
    await Bun.sleep(50);
  }
}

export interface SearchRow {
  class: string;
  page: string;
  rows: number;
  p50_ms: number;
  p99_ms: number;
  max_ms: number;
}

/**
 * bench/pg-search.ts in its own process, in a database of its own on the server at `serverUrl`
 * (it loads 1M operations, then measures): its table rows, and its other lines (load times,
 * load average) as notes.
 */
export async function runPgSearch(serverUrl: string): Promise<{ rows: SearchRow[]; notes: string[] }> {
  const proc = Bun.spawn([process.execPath, "run", join(BENCH_DIR, "pg-search.ts")], {
    cwd: ROOT,
    env: { ...process.env, SVC_TEST_DATABASE_URL: serverUrl },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "inherit",
  });
  const [out, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited]);
  if (code !== 0) throw new Error(`bench/pg-search.ts exited with ${code}:\n${out}`);
  const rows: SearchRow[] = [];
  const notes: string[] = [];
  for (const line of out.split("\n")) {
    // The first line is the machine's description, already in the results.
    if (line.trim() === "" || line.startsWith("{")) continue;
    if (!line.startsWith("|")) {
      notes.push(line);
      continue;
    }
    const cells = line
      .slice(1, -1)
      .split("|")
      .map((c) => c.trim());
    if (cells.length !== 6 || cells[0] === "query class" || cells[0]!.startsWith("---")) continue;
    const [name, page, found, p50, p99, max] = cells as [string, string, string, string, string, string];
    rows.push({
      class: name,
      page,
      rows: Number(found),
      p50_ms: Number(p50),
      p99_ms: Number(p99),
      max_ms: Number(max),
    });
  }
  if (rows.length === 0 || rows.some((r) => [r.rows, r.p50_ms, r.p99_ms, r.max_ms].some(Number.isNaN)))
    throw new Error(`bench/pg-search.ts: no table read from its output:\n${out}`);
  return { rows, notes };
}
