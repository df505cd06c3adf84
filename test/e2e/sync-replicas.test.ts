// lanes: sqlite postgres
// Sync orders each piece once however many processes run it (decisions §16): on PostgreSQL three
// `svc serve` replicas share one database and the bank sees one request per piece; on SQLite one
// server is killed (kill -9) twice while its sync runs and starts again, and nothing is lost or
// ordered twice. Real processes, the sandbox bank, real time.
import { afterAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { DEFAULT_TIMEZONE, dateInZone } from "../../src/core/clock";
import { shiftIsoDay } from "../../src/formats/dates";
import { withAccountKey } from "../../src/formats/validators";
import { onPostgres, serverStoreEnv } from "../helpers/pg";
import { type RunningProcess, removeTempDirs, startServe, tempDir } from "../helpers/server";

/** A harness limit for a test that starts processes, not a performance assertion. */
const E2E_TIMEOUT_MS = 90_000;
const ACCOUNTS = 4;
const env = {
  SVC_SECRET_KEY: Buffer.alloc(32, 9).toString("base64"),
  SVC_BANK_POLL_INTERVAL_MS: "100",
  SVC_POLL_LEASE_SECONDS: "1",
};

const running: RunningProcess[] = [];
afterAll(async () => {
  for (const r of running) await r.stop("SIGKILL");
  removeTempDirs();
});

async function start(dbPath: string, storeEnv: Record<string, string>): Promise<RunningProcess> {
  const server = await startServe({ dbPath, env: { ...env, ...storeEnv } });
  running.push(server);
  return server;
}

async function body<T>(res: Promise<Response>): Promise<T> {
  const r = await res;
  expect(r.ok).toBe(true);
  return (await r.json()) as T;
}

/** A company with `ACCOUNTS` sandbox accounts, each switched to sync through `servers` in turn. */
async function syncingAccounts(servers: RunningProcess[], seed: number): Promise<string[]> {
  const [first] = servers as [RunningProcess];
  const company = await body<{ company_id: string }>(
    first.admin("POST", "/companies", { name: "ООО Синхрон", inn: "7719617469" }),
  );
  const ids: string[] = [];
  for (let i = 0; i < ACCOUNTS; i++) {
    const account = await body<{ bank_account_id: string }>(
      first.admin("POST", "/bank-accounts", {
        company_id: company.company_id,
        bank: "sandbox",
        account_number: withAccountKey(`40702810${String(seed * 100 + i).padStart(12, "0")}`, "044525225"),
        bik: "044525225",
      }),
    );
    ids.push(account.bank_account_id);
  }
  for (const [i, id] of ids.entries()) {
    const server = servers[i % servers.length] as RunningProcess;
    await body(server.admin("PUT", `/bank-accounts/${id}/sync`, { enabled: true }));
  }
  return ids;
}

interface Coverage {
  date_from: string;
  missing: unknown[];
  partial: unknown[];
}

/** Waits until every account holds every day since its `since` up to yesterday (bounded). */
async function untilCovered(server: RunningProcess, ids: string[]): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    let done = true;
    for (const id of ids) {
      const sync = await body<{ since: string }>(server.admin("GET", `/bank-accounts/${id}/sync`));
      const yesterday = shiftIsoDay(dateInZone(new Date(), DEFAULT_TIMEZONE), -1);
      const c = await body<Coverage>(
        server.admin("GET", `/bank-accounts/${id}/coverage?date_from=${sync.since}&date_to=${yesterday}`),
      );
      if (c.missing.length + c.partial.length > 0) done = false;
    }
    if (done) return;
    if (Date.now() > deadline) throw new Error("the accounts did not fill within the harness limit");
    await Bun.sleep(100);
  }
}

interface SandboxRequest {
  kind: string;
  date_from: string;
  date_to: string;
  client_ref: string;
}

/** Per account: its sync statements' periods, and the bank's requests for each period. */
async function ordersOf(server: RunningProcess, id: string) {
  const { statements } = await body<{ statements: { source: string; date_from: string; date_to: string }[] }>(
    server.admin("GET", `/statements?bank_account_id=${id}&limit=500`),
  );
  const { requests } = await body<{ requests: SandboxRequest[] }>(
    server.admin("GET", `/sandbox/requests?bank_account_id=${id}`),
  );
  const periods = statements
    .filter((s) => s.source === "sync")
    .map((s) => `${s.date_from}..${s.date_to}`)
    .sort();
  const asked = requests.filter((r) => r.kind === "statement_request");
  const refsByPeriod = new Map<string, Set<string>>();
  for (const r of asked) {
    const period = `${r.date_from}..${r.date_to}`;
    refsByPeriod.set(period, (refsByPeriod.get(period) ?? new Set()).add(r.client_ref));
  }
  return { periods, requests: asked.length, refsByPeriod };
}

describe.if(onPostgres)("three replicas on one PostgreSQL database", () => {
  test(
    "each piece is ordered once and the bank sees one request per piece",
    async () => {
      const storeEnv = serverStoreEnv();
      const dir = tempDir();
      const replicas = await Promise.all([0, 1, 2].map((i) => start(join(dir, `unused-${i}.db`), storeEnv)));
      const ids = await syncingAccounts(replicas, 1);
      await untilCovered(replicas[2] as RunningProcess, ids);
      for (const id of ids) {
        const { periods, requests, refsByPeriod } = await ordersOf(replicas[1] as RunningProcess, id);
        // 90 days back to today: three pieces of at most 31 days, none twice.
        expect(periods).toHaveLength(3);
        expect(new Set(periods).size).toBe(3);
        expect(requests).toBe(3);
        expect([...refsByPeriod.keys()].sort()).toEqual(periods);
      }
    },
    E2E_TIMEOUT_MS,
  );
});

describe.if(!onPostgres)("one SQLite server killed twice while it syncs", () => {
  test(
    "after two kill -9 and a restart every day is held and no piece is ordered twice",
    async () => {
      const dbPath = join(tempDir(), "svc.db");
      const first = await start(dbPath, {});
      const ids = await syncingAccounts([first], 2);
      // Killed while its pieces go to the bank and are polled…
      await first.stop("SIGKILL");
      // …and again right after it started over (its poller takes up the leases at once).
      const second = await start(dbPath, {});
      await second.stop("SIGKILL");
      const third = await start(dbPath, {});
      await untilCovered(third, ids);
      for (const id of ids) {
        const { periods, refsByPeriod } = await ordersOf(third, id);
        expect(periods).toHaveLength(3);
        expect(new Set(periods).size).toBe(3);
        // A request a kill interrupted may be sent again, always with its piece's own reference.
        expect([...refsByPeriod.keys()].sort()).toEqual(periods);
        for (const refs of refsByPeriod.values()) expect(refs.size).toBe(1);
      }
    },
    E2E_TIMEOUT_MS,
  );
});
