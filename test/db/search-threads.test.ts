// lanes: sqlite postgres
// search_operations' searches run in worker threads with read-only connections of their own
// (db/search-threads.ts), so that no search holds the server's thread: the same answers as a
// search in this thread, searches beyond the threads wait for one, errors keep their kind, and a
// closed store ends its threads.
import { afterEach, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { searchWords } from "../../src/db/operation-filter";
import { SEARCH_LIMITS, SearchBudgetExceeded } from "../../src/db/search-limits";
import { type OperationSearches, searchesHere, searchesInThreads } from "../../src/db/search-threads";
import { StoreUnavailable } from "../../src/db/sql-port";
import type { TestApp } from "../helpers/app";
import { makeTestApp } from "../helpers/app";
import { onPostgres } from "../helpers/pg";
import { tempDir } from "../helpers/server";
import { lowThreads, mainThreadNormal } from "../helpers/thread-policy";
import { callTool, initSession, readyStatement } from "../mcp/helpers";

const PERIOD = { dateFrom: "2026-10-01", dateTo: "2026-10-31" };
const opened: OperationSearches[] = [];
const apps: TestApp[] = [];

afterEach(() => {
  for (const s of opened.splice(0)) s.close();
  for (const t of apps.splice(0)) {
    // Its search threads end with it (on PostgreSQL the database stays, for the next test).
    t.services.store.searches.close();
    if (t.services.store.kind === "sqlite") t.services.database.close();
  }
});

/** An app on a database other connections can open (a file on SQLite), with a ready month. */
async function appWithMonth(env: Record<string, string> = {}) {
  const options = onPostgres ? {} : { dbPath: join(tempDir("search-threads-"), "svc.db") };
  const t = makeTestApp(env, "2026-11-20T09:00:00Z", options);
  apps.push(t);
  const w = t.fixtures.world({ purpose: "mcp", ops_per_day: 20 });
  const accountId = w.account.bank_account_id;
  await readyStatement(t, accountId, "2026-10-01", "2026-10-31");
  return { t, w, accountId };
}

async function appWithMemory() {
  const t = makeTestApp();
  const w = t.fixtures.world({ purpose: "mcp", ops_per_day: 20 });
  await readyStatement(t, w.account.bank_account_id, "2026-10-01", "2026-10-31");
  return { t, accountId: w.account.bank_account_id };
}

/** search_operations over the month for «оплата», 20 a page, in a session of its own. */
async function searchMonth(t: TestApp, token: string, accountId: string) {
  const session = await initSession(t, token);
  return callTool(t, token, session, "search_operations", {
    bank_account_id: accountId,
    date_from: "2026-10-01",
    date_to: "2026-10-31",
    query: "оплата",
    limit: 20,
  });
}

function threadsOf(t: TestApp, threads: number): OperationSearches {
  const location = t.services.store.workerLocation;
  if (location === null) throw new Error("no database other connections can open");
  const searches = searchesInThreads(location, threads);
  opened.push(searches);
  return searches;
}

describe("searches in worker threads", () => {
  test("search_operations runs in the store's threads and answers as a search here does", async () => {
    const { t, w, accountId } = await appWithMonth();
    const store = t.services.store;
    expect(store.searches.threads).toBe(0);
    const r = await searchMonth(t, w.token, accountId);
    expect(r.isError).toBe(false);
    // The page and the totals, each in a thread of its own.
    expect(store.searches.threads).toBe(2);
    const here = searchesHere(store.readPort);
    const words = searchWords("оплата") as string[];
    const f = { bankAccountId: accountId, ...PERIOD, words };
    const rows = await here.search({ ...f, limit: 21 }, SEARCH_LIMITS);
    const totals = await here.totals(f, SEARCH_LIMITS);
    expect(rows.length).toBe(21);
    const got = r.structuredContent as { operations: { operation_id: string }[]; totals: { count: number } };
    expect(got.operations.map((o) => o.operation_id)).toEqual(rows.slice(0, 20).map((o) => o.operation_id));
    expect(got.totals.count).toBe(totals.count);
  }, 60_000);

  test.skipIf(process.platform !== "linux")(
    "its threads give way to the server's (nicer by 10), unless SVC_LONG_WORK_PRIORITY=normal",
    async () => {
      // Normal first: no thread of an earlier low search is left to start threads of its own.
      for (const priority of ["normal", "low"]) {
        const { t, w, accountId } = await appWithMonth({ SVC_LONG_WORK_PRIORITY: priority });
        const before = lowThreads();
        const r = await searchMonth(t, w.token, accountId);
        expect(r.isError).toBe(false);
        expect(t.services.store.searches.threads).toBe(2);
        const started = lowThreads().filter((tid) => !before.includes(tid));
        if (priority === "low") expect(started.length).toBeGreaterThanOrEqual(2);
        else expect(started).toEqual([]);
        expect(mainThreadNormal()).toBe(true);
      }
    },
    60_000,
  );

  test("the same rows and totals as here for every kind of filter, more searches than threads at once", async () => {
    const { t, accountId } = await appWithMonth();
    const threads = threadsOf(t, 1);
    const here = searchesHere(t.services.store.readPort);
    const base = { bankAccountId: accountId, ...PERIOD };
    const filters = [
      { ...base },
      { ...base, direction: "debit" as const },
      { ...base, amountMinKopecks: 100_000 },
      { ...base, words: searchWords("оплата договору") as string[] },
      { ...base, words: ["сувенир"] },
    ];
    // Ten at once through one thread: they wait their turn, each gets its own answer.
    const [rows, totals] = await Promise.all([
      Promise.all(filters.map((f) => threads.search({ ...f, limit: 50 }, SEARCH_LIMITS))),
      Promise.all(filters.map((f) => threads.totals(f, SEARCH_LIMITS))),
    ]);
    expect(threads.threads).toBe(1);
    for (const [i, f] of filters.entries()) {
      expect(rows[i]).toEqual(await here.search({ ...f, limit: 50 }, SEARCH_LIMITS));
      expect(totals[i]).toEqual(await here.totals(f, SEARCH_LIMITS));
    }
    expect(rows[0]!.length).toBe(50);
    expect(totals[4]!.count).toBe(0);
  }, 60_000);

  test("a search over its budget fails as SearchBudgetExceeded, and the thread goes on", async () => {
    const { t, accountId } = await appWithMonth();
    const threads = threadsOf(t, 1);
    const tight = { ...SEARCH_LIMITS, candidateRows: 10, textLookups: 1, postgresMs: 1 };
    const f = { bankAccountId: accountId, ...PERIOD, words: searchWords("оплата") as string[] };
    // PostgreSQL's budget is time: a 1 ms budget may still be enough for a warm small search.
    const outcome = await threads.totals(f, tight).then(
      () => "answered",
      (e: unknown) => e,
    );
    if (!onPostgres || outcome !== "answered") expect(outcome).toBeInstanceOf(SearchBudgetExceeded);
    expect((await threads.totals(f, SEARCH_LIMITS)).count).toBeGreaterThan(0);
    expect(threads.threads).toBe(1);
  }, 60_000);

  test("closing ends the threads: a waiting search and any after it fail as StoreUnavailable", async () => {
    const { t, accountId } = await appWithMonth();
    const threads = threadsOf(t, 1);
    const f = { bankAccountId: accountId, ...PERIOD };
    const running = threads.totals(f, SEARCH_LIMITS).then(
      (v) => v,
      (e: unknown) => e,
    );
    const waiting = threads.totals(f, SEARCH_LIMITS).then(
      () => "answered",
      (e: unknown) => e,
    );
    threads.close();
    expect(await waiting).toBeInstanceOf(StoreUnavailable);
    // The running one was answered before the close reached it, or ends with the thread.
    const first = await running;
    if (first instanceof Error) expect(first).toBeInstanceOf(StoreUnavailable);
    expect(threads.threads).toBe(0);
    expect(await threads.search({ ...f, limit: 1 }, SEARCH_LIMITS).catch((e: unknown) => e)).toBeInstanceOf(
      StoreUnavailable,
    );
  }, 60_000);

  test("SVC_SEARCH_THREADS=0, or an in-memory database: searches run here", async () => {
    const { t, accountId } = await appWithMonth({ SVC_SEARCH_THREADS: "0" });
    const f = { bankAccountId: accountId, ...PERIOD };
    expect((await t.services.store.searches.totals(f, SEARCH_LIMITS)).count).toBe(20 * 31);
    expect(t.services.store.searches.threads).toBe(0);
    if (!onPostgres) {
      const memory = await appWithMemory();
      expect(memory.t.services.store.workerLocation).toBeNull();
      const g = { bankAccountId: memory.accountId, ...PERIOD };
      expect((await memory.t.services.store.searches.totals(g, SEARCH_LIMITS)).count).toBe(20 * 31);
      expect(memory.t.services.store.searches.threads).toBe(0);
    }
  }, 60_000);
});
