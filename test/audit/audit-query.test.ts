// lanes: sqlite
// Audit queries, above all per token: a token's entries are found through the map of id blocks
// that hold them (audit_token_blocks), not an index. Every filter combination and every page must
// equal a plain filter over all entries, across many blocks.
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { AUDIT_BLOCK_IDS, type AuditEntry, AuditLog } from "../../src/audit/audit-log";
import { embeddedMigrations } from "../../src/db/migrations.gen";
import { embeddedMigrationMeta, migrate, openDatabase } from "../../src/db/open";
import { sqlitePort } from "../../src/db/sql-port";

const TOKENS = ["t-busy", "t-rare", "t-early", "t-late", "t-mid"];
const ACTIONS = ["mcp.get_balance", "mcp.tools_list", "admin.token.update"];
const START = Date.parse("2026-11-01T00:00:00Z");

/** Entry i: who wrote it decides how its token is spread over the blocks. */
function tokenOf(i: number, total: number): string | null {
  if (i % 97 === 0) return null; // admin entries carry no token
  if (i % 1000 === 7) return "t-rare";
  if (i < AUDIT_BLOCK_IDS / 2 && i % 5 === 0) return "t-early";
  if (i > total - AUDIT_BLOCK_IDS / 2 && i % 5 === 0) return "t-late";
  if (i > total / 2 - 300 && i < total / 2 + 300 && i % 3 === 0) return "t-mid";
  return "t-busy";
}

function seeded(total = AUDIT_BLOCK_IDS * 3 + 500) {
  const database = openDatabase(":memory:");
  migrate(database.db);
  const log = new AuditLog(sqlitePort(database.sqlite));
  database.sqlite.transaction(() => {
    for (let i = 0; i < total; i++) {
      log.write({
        // Mostly in order, with a clock that sometimes steps back: `at` is not sorted by id.
        at: new Date(START + i * 1000 - (i % 50 === 0 ? 3_600_000 : 0)),
        actor: tokenOf(i, total) === null ? "admin" : "token",
        apiTokenId: tokenOf(i, total),
        action: ACTIONS[i % 7 === 0 ? 1 : i % 97 === 0 ? 2 : 0]!,
        outcome: "ok",
        arguments: { i },
      });
    }
  })();
  const all = log.query({ limit: total + 1 });
  expect(all).toHaveLength(total);
  return { database, log, all };
}

type Query = Parameters<AuditLog["query"]>[0];

function expected(all: AuditEntry[], q: Query): number[] {
  return all
    .filter(
      (e) =>
        (q.apiTokenId === undefined || e.api_token_id === q.apiTokenId) &&
        (q.action === undefined || e.action === q.action) &&
        (q.since === undefined || e.at >= q.since) &&
        (q.until === undefined || e.at < q.until) &&
        (q.beforeId === undefined || e.id < q.beforeId),
    )
    .sort((a, b) => b.id - a.id)
    .slice(0, q.limit)
    .map((e) => e.id);
}

describe("audit queries", () => {
  const { database, log, all } = seeded();
  const iso = (ms: number) => new Date(ms).toISOString();
  const span = all.length * 1000;

  test("the block map lists exactly the blocks that hold each token's entries", () => {
    const rows = database.sqlite
      .query("SELECT api_token_id AS token, block FROM audit_token_blocks ORDER BY token, block")
      .all() as { token: string; block: number }[];
    const want = new Set(
      all
        .filter((e) => e.api_token_id !== null)
        .map((e) => `${e.api_token_id}:${Math.floor(e.id / AUDIT_BLOCK_IDS)}`),
    );
    expect(new Set(rows.map((r) => `${r.token}:${r.block}`))).toEqual(want);
    // Tokens confined to one part of the log have few blocks.
    expect(rows.filter((r) => r.token === "t-early")).toHaveLength(1);
    expect(rows.filter((r) => r.token === "t-busy").length).toBeGreaterThan(3);
  });

  test("any filters, limit and cursor give what a plain filter over all entries gives", () => {
    fc.assert(
      fc.property(
        fc.record(
          {
            apiTokenId: fc.constantFrom(...TOKENS, "t-unknown"),
            action: fc.constantFrom(...ACTIONS),
            since: fc.integer({ min: -3_600_000, max: span }).map((ms) => iso(START + ms)),
            until: fc.integer({ min: 0, max: span + 3_600_000 }).map((ms) => iso(START + ms)),
            beforeId: fc.integer({ min: 1, max: all.length + 10 }),
          },
          { requiredKeys: [] },
        ),
        fc.integer({ min: 1, max: 600 }),
        (filters, limit) => {
          const q: Query = { ...filters, limit };
          expect(log.query(q).map((e) => e.id)).toEqual(expected(all, q));
        },
      ),
      { numRuns: 300 },
    );
  });

  test("paging through one token's entries returns each exactly once, newest first", () => {
    for (const token of TOKENS) {
      const seen: number[] = [];
      let beforeId: number | undefined;
      for (;;) {
        const page = log.query({ apiTokenId: token, limit: 37, beforeId });
        seen.push(...page.map((e) => e.id));
        if (page.length < 37) break;
        beforeId = page[page.length - 1]!.id;
      }
      expect(seen).toEqual(expected(all, { apiTokenId: token, limit: all.length }));
    }
  });

  test("migration 0005 builds the map from the entries already stored", () => {
    const db = openDatabase(":memory:");
    const before0005 = embeddedMigrations.findIndex((m) => m.tag.startsWith("0005_"));
    migrate(db.db, embeddedMigrationMeta().slice(0, before0005));
    const insert = db.sqlite.query(
      "INSERT INTO audit_log (id, at, actor, api_token_id, action, outcome) VALUES (?, '2026-11-01T00:00:00.000Z', 'token', ?, 'mcp.ping', 'ok')",
    );
    insert.run(5, "a");
    insert.run(AUDIT_BLOCK_IDS * 2 + 1, "a");
    insert.run(AUDIT_BLOCK_IDS * 2 + 2, "b");
    insert.run(AUDIT_BLOCK_IDS * 2 + 3, null);
    migrate(db.db);
    expect(
      db.sqlite.query("SELECT api_token_id AS t, block FROM audit_token_blocks ORDER BY t, block").all(),
    ).toEqual([
      { t: "a", block: 0 },
      { t: "a", block: 2 },
      { t: "b", block: 2 },
    ]);
    expect(
      new AuditLog(sqlitePort(db.sqlite)).query({ apiTokenId: "a", limit: 10 }).map((e) => e.id),
    ).toEqual([AUDIT_BLOCK_IDS * 2 + 1, 5]);
    db.close();
  });
});
