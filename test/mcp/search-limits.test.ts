// lanes: sqlite postgres
// What one search_operations may cost (docs/security.md, "Search"): words shorter than two letters
// or digits are left out, at most 8 words, every text query stays within the token's account, and a
// search over its budget is a tool-level validation_error, never a 500 or a partial page. Through
// the agent endpoint on both stores; the SQLite statements' plans read through EXPLAIN QUERY PLAN.
import { beforeAll, describe, expect, test } from "bun:test";
import { SEARCH_LIMITS, type SearchLimits } from "../../src/db/search-limits";
import type { SqlArray, SqlPort, SqlValue } from "../../src/db/sql-port";
import type { StatementOperation } from "../../src/formats/types";
import { McpReadModel } from "../../src/mcp/read-model";
import { StatementRepository } from "../../src/statements/repository";
import { makeTestApp, type TestApp } from "../helpers/app";
import { UNCACHED } from "../helpers/pg";
import { statementOperation } from "../helpers/rows";
import { callTool, initSession, type ToolResultBody } from "./helpers";

type SqlParams = (SqlValue | SqlArray)[];

const PERIOD = { date_from: "2026-10-01", date_to: "2026-10-10" };
const DAYS = 10;
const A_PER_DAY = 20;
const B_PER_DAY = 300;

/**
 * Two companies, each with one account; the token reads company A's. Their statements are stored
 * day by day, one after the other, so A's operations lie between B's in the full-text index. Every
 * operation of B says "Сувенирная продукция 1 2 3"; A's say "Аренда офиса 1 2 3", and none of
 * A's has "сувенир".
 */
async function twoCompanies(limits?: SearchLimits) {
  const t = makeTestApp({}, "2026-11-20T09:00:00Z", { overrides: { searchLimits: limits } });
  const a = t.fixtures.world({ purpose: "mcp" });
  const bCompany = t.fixtures.company("ООО Лютик", "7707083893");
  const b = t.fixtures.account(bCompany.company_id);
  const repo = new StatementRepository(t.services.port, UNCACHED);
  const ops = (prefix: string, day: number, n: number, purpose: string): StatementOperation[] =>
    Array.from({ length: n }, (_, i) =>
      statementOperation({
        operation_id: `${prefix}-${day}-${String(i).padStart(4, "0")}`,
        doc_date: `2026-10-${String(day).padStart(2, "0")}`,
        purpose,
      }),
    );
  for (let day = 1; day <= DAYS; day++) {
    repo.storeOperations(
      `b-${day}`,
      b.bank_account_id,
      1,
      ops("b", day, B_PER_DAY, "Сувенирная продукция 1 2 3"),
    );
    repo.storeOperations(
      `a-${day}`,
      a.account.bank_account_id,
      1,
      ops("a", day, A_PER_DAY, "Аренда офиса 1 2 3"),
    );
  }
  const session = await initSession(t, a.token);
  const search = (args: Record<string, unknown>) =>
    callTool(t, a.token, session, "search_operations", {
      bank_account_id: a.account.bank_account_id,
      ...PERIOD,
      ...args,
    });
  return { t, a, b, search };
}

// A harness limit, not a performance assertion: storing the installation on PostgreSQL takes seconds.
const HARNESS_MS = 60_000;

// One installation for the tests that only read it, made before them (a store made outside a test
// lives until the file ends).
let shared: Awaited<ReturnType<typeof twoCompanies>>;
beforeAll(async () => {
  shared = await twoCompanies();
}, HARNESS_MS);
const installation = async () => shared;

function errorOf(r: ToolResultBody): { code: string; message: string } {
  expect(r.isError).toBe(true);
  return r.structuredContent.error as { code: string; message: string };
}

function ids(r: ToolResultBody): string[] {
  expect(r.isError).toBe(false);
  return (r.structuredContent.operations as { operation_id: string }[]).map((o) => o.operation_id);
}

describe("search_operations: short words and the word cap", () => {
  test(
    "a query of one-character words only is a validation_error that says why",
    async () => {
      const { search } = await installation();
      for (const query of ["1 2 3 4 5 6 7 8 9 0 1 2", "1", "т.ч. A-1 - я"]) {
        const e = errorOf(await search({ query, limit: 1 }));
        expect({ query, code: e.code }).toEqual({ query, code: "validation_error" });
        expect(e.message).toContain("короче 2");
      }
    },
    HARNESS_MS,
  );

  test(
    "one-character words next to longer ones are left out: the same answer as without them",
    async () => {
      const { search } = await installation();
      const plain = ids(await search({ query: "аренда", limit: 100 }));
      expect(plain.length).toBe(100);
      expect(ids(await search({ query: "1 аренда 2 3", limit: 100 }))).toEqual(plain);
      // A one-character part at a word's end too: "офиса-1" is looked for as "офиса".
      expect(ids(await search({ query: "офиса-1", limit: 100 }))).toEqual(plain);
    },
    HARNESS_MS,
  );

  test(
    "more than 8 words is a validation_error naming the cap; 8 are searched",
    async () => {
      const { search } = await installation();
      const e = errorOf(
        await search({ query: "аренда офиса аренда офиса аренда офиса аренда офиса аренда" }),
      );
      expect(e.code).toBe("validation_error");
      expect(e.message).toContain("не больше 8 слов");
      expect(
        ids(await search({ query: "аренда офиса аренда офиса аренда офиса аренда офиса", limit: 5 })),
      ).toHaveLength(5);
    },
    HARNESS_MS,
  );
});

describe("search_operations: the budget", () => {
  test(
    "a search over its budget answers validation_error asking to narrow it, never a partial page",
    async () => {
      // On SQLite 50 candidate rows (A has 200 in the period); on PostgreSQL no time at all.
      const small: SearchLimits = {
        candidateRows: 50,
        textLookups: SEARCH_LIMITS.textLookups,
        postgresMs: 0,
      };
      const { search } = await twoCompanies(small);
      // A word A's operations do not have: every candidate would have to be read.
      const r = await search({ query: "сувенир" });
      const e = errorOf(r);
      expect(e.code).toBe("validation_error");
      expect(e.message).toContain("сузьте период");
      expect(r.structuredContent.operations).toBeUndefined();
    },
    HARNESS_MS,
  );

  test(
    "within the budget the same search answers, complete",
    async () => {
      const { search } = await installation();
      const r = await search({ query: "сувенир" });
      expect(ids(r)).toEqual([]);
      expect(r.structuredContent.next_cursor).toBeNull();
    },
    HARNESS_MS,
  );
});

describe("search_operations: another company's operations are never the search's", () => {
  test(
    "a word only the other company's operations hold finds nothing, on every page size",
    async () => {
      const { search } = await installation();
      for (const limit of [1, 2, 50, 100]) {
        expect(ids(await search({ query: "сувенир", limit }))).toEqual([]);
        expect(ids(await search({ query: "сувенирная продукция", limit }))).toEqual([]);
      }
    },
    HARNESS_MS,
  );

  test(
    "SQLite: operations are read through the account's index only, the full-text index only within candidates' rowids",
    async () => {
      const { t, a, b } = await installation();
      if (t.services.port.dialect !== "sqlite") return; // PostgreSQL: test/db/pg-search.test.ts
      const port = t.services.port;
      const { statements, recording } = recorder(port);
      const read = new McpReadModel(recording);
      for (const [words, limit] of [
        [["сувенир"], 1],
        [["сувенирная", "продукция"], 51],
        [["аренда"], 1],
        [["аренда"], 101],
        [["1"], 1],
      ] as const) {
        read.searchOperations({
          bankAccountId: a.account.bank_account_id,
          dateFrom: PERIOD.date_from,
          dateTo: PERIOD.date_to,
          words: [...words],
          limit,
        });
      }
      // The totals of the whole period: the same reads, every page of candidates.
      for (const words of [["сувенир"], ["аренда"], ["сувенирная", "продукция"], undefined]) {
        for (const counterpartyInn of [undefined, "7707083893"]) {
          read.searchTotals({
            bankAccountId: a.account.bank_account_id,
            dateFrom: PERIOD.date_from,
            dateTo: PERIOD.date_to,
            words: words && [...words],
            counterpartyInn,
          });
        }
      }
      const plans = statements.map((s) => planOf(t, s));
      expect(plans.length).toBeGreaterThan(0);
      for (const plan of plans) {
        for (const step of plan) {
          // No statement scans operations or walks the full-text index without a rowid range.
          expect(step).not.toMatch(/^SCAN (o|operations)\b/);
          if (/operations_fts|VIRTUAL TABLE/.test(step))
            expect(step).toMatch(/VIRTUAL TABLE INDEX \d+:M\d*></);
          if (/^SEARCH (o|operations)\b/.test(step)) {
            expect(step).toMatch(
              /INDEX operations_(date|inn)_idx \(bank_account_id=\?|INTEGER PRIMARY KEY \(rowid=\?\)/,
            );
          }
        }
      }
      // Every full-text lookup's range holds the account's operations only: recomputed here from the
      // account's candidates per block of 256 rowids, no range holds one of B's.
      const rowids = (account: string) =>
        t.db
          .query<{ id: number }, [string]>("SELECT id FROM operations WHERE bank_account_id = ? ORDER BY id")
          .all(account)
          .map((r) => r.id);
      const own = rowids(a.account.bank_account_id);
      const blocks = new Map<number, [number, number]>();
      for (const id of own) {
        const [lo, hi] = blocks.get(id >> 8) ?? [id, id];
        blocks.set(id >> 8, [Math.min(lo, id), Math.max(hi, id)]);
      }
      const others = rowids(b.bank_account_id);
      // B's operations lie between A's: one range from A's first to A's last would read them.
      expect(others.filter((id) => id > own[0]! && id < own[own.length - 1]!).length).toBeGreaterThan(1000);
      const inRanges = others.filter((id) => [...blocks.values()].some(([lo, hi]) => id >= lo && id <= hi));
      expect(others.length).toBe(DAYS * B_PER_DAY);
      expect(inRanges).toEqual([]);
    },
    HARNESS_MS,
  );
});

/** A port that records the text and parameters of every statement it runs. */
function recorder(port: SqlPort) {
  const statements: { text: string; params: unknown[] }[] = [];
  const recording: SqlPort = {
    ...port,
    prepare: <Row, P extends SqlParams>(text: string) => {
      const s = port.prepare<Row, P>(text);
      const noted = <T>(params: P, run: () => T): T => {
        statements.push({ text, params });
        return run();
      };
      return {
        get: (...p: P) => noted(p, () => s.get(...p)),
        all: (...p: P) => noted(p, () => s.all(...p)),
        run: (...p: P) => noted(p, () => s.run(...p)),
      };
    },
  };
  return { statements, recording };
}

/** EXPLAIN QUERY PLAN of a recorded statement: its steps' details. */
function planOf(t: TestApp, s: { text: string; params: unknown[] }): string[] {
  return t.db
    .query<{ detail: string }>(`EXPLAIN QUERY PLAN ${s.text}`)
    .all(...(s.params as never[]))
    .map((r) => r.detail);
}
