// lanes: sqlite postgres
// search_operations' totals (decisions §15): the count and the credit and debit sums of every stored
// operation that matches the filters in the whole asked period, not only the page. They equal the
// sums over every page of a cursor walk, are the same on every page, count an operation two
// statements hold once, are zeros when nothing matches, and stay within the search's budget.
import { beforeAll, describe, expect, test } from "bun:test";
import { SEARCH_LIMITS, type SearchLimits } from "../../src/db/search-limits";
import {
  callTool,
  initSession,
  makeTestAppWith,
  type Op,
  readyStatement,
  type ToolResultBody,
} from "./helpers";

interface Totals {
  count: number;
  total_credit: number;
  total_debit: number;
}

const PERIOD = { date_from: "2026-10-21", date_to: "2026-11-20" };
// A harness limit, not a performance assertion: the walks are many calls on PostgreSQL.
const HARNESS_MS = 120_000;

/**
 * An agent reading one account with two ready statements that overlap by ten days: the
 * operations of those days are held by both.
 */
async function installation(limits?: SearchLimits) {
  const t = makeTestAppWith({ searchLimits: limits });
  const w = t.fixtures.world({ purpose: "mcp", ops_per_day: 10 });
  const accountId = w.account.bank_account_id;
  await readyStatement(t, accountId, "2026-10-21", "2026-11-10");
  await readyStatement(t, accountId, "2026-11-01", "2026-11-20");
  const session = await initSession(t, w.token);
  const search = (args: Record<string, unknown>) =>
    callTool(t, w.token, session, "search_operations", { bank_account_id: accountId, ...PERIOD, ...args });
  return { t, accountId, search };
}

type Search = Awaited<ReturnType<typeof installation>>["search"];

let shared: Awaited<ReturnType<typeof installation>>;
let everything: Op[];
beforeAll(async () => {
  shared = await installation();
  everything = (await walk(shared.search, { limit: 100 })).ops;
}, HARNESS_MS);

function totalsOf(r: ToolResultBody): Totals {
  expect(r.isError).toBe(false);
  return r.structuredContent.totals as Totals;
}

/** Every page of a cursor walk: the operations, and the totals each page gave. */
async function walk(search: Search, args: Record<string, unknown>) {
  const ops: Op[] = [];
  const totals: Totals[] = [];
  let cursor: string | null = null;
  do {
    const r = await search(cursor ? { ...args, cursor } : args);
    totals.push(totalsOf(r));
    ops.push(...(r.structuredContent.operations as Op[]));
    cursor = r.structuredContent.next_cursor as string | null;
  } while (cursor !== null && totals.length < 500);
  expect(cursor).toBeNull();
  return { ops, totals };
}

const kopecks = (rubles: number) => Math.round(rubles * 100);

/** Totals in kopecks, as the service sums them. */
function inKopecks(t: Totals) {
  return { count: t.count, credit: kopecks(t.total_credit), debit: kopecks(t.total_debit) };
}

function sumsOf(ops: Op[]) {
  const sum = (direction: Op["direction"]) =>
    ops.filter((o) => o.direction === direction).reduce((s, o) => s + kopecks(o.amount), 0);
  return { count: ops.length, credit: sum("credit"), debit: sum("debit") };
}

const counterparty = (o: Op) => (o.direction === "credit" ? o.payer.inn : o.payee.inn);

/** The counterparty with most operations in the period (one with several, to make the sums mean something). */
function busiestCounterparty(): string {
  const counts = new Map<string, number>();
  for (const o of everything) counts.set(counterparty(o), (counts.get(counterparty(o)) ?? 0) + 1);
  return [...counts.entries()].sort((a, b) => b[1] - a[1])[0]![0];
}

/** An amount range holding the middle half of the period's operations. */
function middleAmounts(): { amount_min: number; amount_max: number } {
  const amounts = everything.map((o) => o.amount).sort((a, b) => a - b);
  return {
    amount_min: amounts[Math.floor(amounts.length / 4)]!,
    amount_max: amounts[Math.floor((amounts.length * 3) / 4)]!,
  };
}

describe("search_operations totals: the whole period, not the page", () => {
  test(
    "without filters: every stored operation of the account in the period, each once, on every page",
    async () => {
      const { t, accountId, search } = shared;
      const { ops, totals } = await walk(search, { limit: 37 });
      expect(totals.length).toBeGreaterThanOrEqual(3);
      for (const page of totals) expect(page).toEqual(totals[0]!);
      expect(inKopecks(totals[0]!)).toEqual(sumsOf(ops));
      // Straight from the table, where an operation both statements hold is one row.
      const stored = t.db
        .query<{ count: number; credit: number; debit: number }, [string]>(
          `SELECT count(*) AS count,
                  CAST(coalesce(sum(CASE WHEN direction = 'credit' THEN amount END), 0) AS bigint) AS credit,
                  CAST(coalesce(sum(CASE WHEN direction = 'debit' THEN amount END), 0) AS bigint) AS debit
             FROM operations WHERE bank_account_id = ?`,
        )
        .get(accountId)!;
      expect(inKopecks(totals[0]!)).toEqual(stored);
      const held = t.db
        .query<{ n: number }, [string]>(
          `SELECT count(*) AS n FROM statement_operations so
             JOIN statements s ON s.id = so.statement_id WHERE s.bank_account_id = ?`,
        )
        .get(accountId)!.n;
      expect(held).toBeGreaterThan(stored.count);
      expect(stored.credit).toBeGreaterThan(0);
      expect(stored.debit).toBeGreaterThan(0);
    },
    HARNESS_MS,
  );

  test(
    "page 1 and page 3 give the same totals",
    async () => {
      const { search } = shared;
      for (const args of [{ limit: 5 }, { limit: 2, query: "оплата" }]) {
        const first = await search(args);
        const second = await search({ ...args, cursor: first.structuredContent.next_cursor });
        const third = await search({ ...args, cursor: second.structuredContent.next_cursor });
        expect(third.structuredContent.next_cursor).toBeString();
        expect((third.structuredContent.operations as Op[])[0]).not.toEqual(
          (first.structuredContent.operations as Op[])[0],
        );
        expect(totalsOf(third)).toEqual(totalsOf(first));
        expect(totalsOf(first).count).toBeGreaterThan(args.limit * 3);
      }
    },
    HARNESS_MS,
  );

  test(
    "the next pages carry the first page's totals in their cursor; another filter counts its own",
    async () => {
      const { t, accountId, search } = await installation();
      const first = await search({ limit: 5, date_from: "2026-10-01" });
      // More of the period becomes ready after the first page: a new walk counts it, the walk
      // already under way keeps the totals it started with (the same on every page).
      await readyStatement(t, accountId, "2026-10-01", "2026-10-20");
      const fresh = totalsOf(await search({ limit: 5, date_from: "2026-10-01" }));
      expect(fresh.count).toBeGreaterThan(totalsOf(first).count);
      const cursor = first.structuredContent.next_cursor;
      const second = await search({ limit: 5, date_from: "2026-10-01", cursor });
      expect(totalsOf(second)).toEqual(totalsOf(first));
      // The same cursor with another filter: that filter's own totals, not the carried ones.
      const debit = await search({ limit: 5, date_from: "2026-10-01", cursor, direction: "debit" });
      const debitFresh = totalsOf(await search({ limit: 5, date_from: "2026-10-01", direction: "debit" }));
      expect(totalsOf(debit)).toEqual(debitFresh);
      expect(debitFresh.total_credit).toBe(0);
    },
    HARNESS_MS,
  );

  test(
    "equal to the sums over every page, for each filter and their combinations",
    async () => {
      const { search } = shared;
      const inn = busiestCounterparty();
      const amounts = middleAmounts();
      const cases: [string, Record<string, unknown>][] = [
        ["credit", { direction: "credit" }],
        ["debit", { direction: "debit" }],
        ["amount range", amounts],
        ["amount_min only", { amount_min: amounts.amount_max }],
        ["counterparty_inn", { counterparty_inn: inn }],
        ["one word", { query: "оплата" }],
        ["several words", { query: "оплата по счету" }],
        ["a prefix", { query: "опла" }],
        ["ё for е", { query: "счёт" }],
        ["a word longer than the longest prefix index", { query: "обслуживание" }],
        ["a counterparty's name", { query: everything[0]!.payer.name.split(" ")[1] ?? "ООО" }],
        ["words and a direction", { query: "оплата", direction: "debit" }],
        ["words and an amount range", { query: "счету", ...amounts }],
        ["counterparty and direction", { counterparty_inn: inn, direction: "credit" }],
        ["words, counterparty and amounts", { query: "ндс", counterparty_inn: inn, amount_min: 1 }],
      ];
      for (const [name, args] of cases) {
        const { ops, totals } = await walk(search, { ...args, limit: 23 });
        for (const page of totals) expect({ name, page }).toEqual({ name, page: totals[0]! });
        expect({ name, totals: inKopecks(totals[0]!) }).toEqual({ name, totals: sumsOf(ops) });
        // Each case finds something, or the comparison proves little.
        expect({ name, found: ops.length > 0 }).toEqual({ name, found: true });
      }
    },
    HARNESS_MS,
  );

  test(
    "ё and е, upper and lower case give the same totals",
    async () => {
      const { search } = shared;
      const yo = totalsOf(await search({ query: "СЧЁТ" }));
      expect(yo.count).toBeGreaterThan(0);
      expect(totalsOf(await search({ query: "счет" }))).toEqual(yo);
    },
    HARNESS_MS,
  );

  test(
    "nothing matching: zero count and sums",
    async () => {
      const { search } = shared;
      const zeros = { count: 0, total_credit: 0, total_debit: 0 };
      for (const args of [
        { query: "зебра" },
        { date_from: "2026-09-01", date_to: "2026-09-30" },
        { query: "оплата", counterparty_inn: "7707083893" },
      ]) {
        const r = await search(args);
        expect(r.structuredContent.operations).toEqual([]);
        expect(r.structuredContent.next_cursor).toBeNull();
        expect(totalsOf(r)).toEqual(zeros);
      }
    },
    HARNESS_MS,
  );
});

describe("search_operations totals: the budget", () => {
  function refusal(r: ToolResultBody) {
    expect(r.isError).toBe(true);
    expect(r.structuredContent.operations).toBeUndefined();
    expect(r.structuredContent.totals).toBeUndefined();
    return r.structuredContent.error as { code: string; message: string };
  }

  test(
    "totals over the budget are refused as a search over it is: validation_error asking to narrow it",
    async () => {
      // On SQLite 50 candidate rows (the period holds some 300); on PostgreSQL no time at all.
      const small: SearchLimits = { ...SEARCH_LIMITS, candidateRows: 50, postgresMs: 0 };
      const { t, search } = await installation(small);
      // A word none of the operations holds: the page itself reads every candidate.
      const overPage = refusal(await search({ query: "зебра" }));
      expect(overPage.code).toBe("validation_error");
      expect(overPage.message).toContain("сузьте период");
      // A common word fills a page of one within the first candidates; its totals need them all.
      expect(refusal(await search({ query: "оплата", limit: 1 }))).toEqual(overPage);
      if (t.services.port.dialect === "sqlite") {
        // Without words the totals are one aggregate over the account's index, not read row by row.
        expect(totalsOf(await search({ limit: 1 })).count).toBeGreaterThan(50);
      }
    },
    HARNESS_MS,
  );
});
