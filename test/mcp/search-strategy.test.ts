// lanes: sqlite postgres
// The text search answers through one of two query plans (check the first candidates one by one,
// or list every match); whichever is used, the pages must equal a plain filter over all rows.
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { embeddedMigrations } from "../../src/db/migrations.gen";
import { embeddedMigrationMeta, migrate, openDatabase } from "../../src/db/open";
import type { OperationFilter } from "../../src/db/operation-filter";
import { searchOperations } from "../../src/db/operation-search";
import { SEARCH_LIMITS } from "../../src/db/search-limits";
import { type SqlPort, sqlitePort } from "../../src/db/sql-port";
import { makeTestApp } from "../helpers/app";
import { tempDir } from "../helpers/server";

/** The store's search, in this thread. */
const searchesOn = (port: SqlPort) => ({
  searchOperations: (f: OperationFilter) => searchOperations(port, f, SEARCH_LIMITS),
});

describe("search_operations text plans", () => {
  test("common, medium and rare words give exactly the matching operations, page by page", async () => {
    const t = makeTestApp();
    const w = t.fixtures.world({ ops_per_day: 40 });
    t.services.statements.orderFromUi(w.account.bank_account_id, "2026-10-01", "2026-10-31");
    await t.services.poller.idle();
    await t.services.poller.tick();
    await t.services.poller.idle();
    const read = searchesOn(t.services.port);
    const all = read.searchOperations({
      bankAccountId: w.account.bank_account_id,
      dateFrom: "2026-10-01",
      dateTo: "2026-10-31",
      limit: 100_000,
    });
    expect(all.length).toBe(40 * 31);
    const text = (o: (typeof all)[number]) =>
      `${o.purpose} ${o.payer.name} ${o.payee.name} ${o.doc_number}`.toLowerCase().replaceAll("ё", "е");
    // Small pages make the widest window (400 × limit) smaller than the period, so rare words take
    // the last plan (list the matches) too.
    // Words of 2 to 8 letters are served by FTS5 prefix indexes, shorter and longer ones are not:
    // both kinds must give the same answer as the plain filter.
    for (const [word, limit] of [
      "оплата",
      "договору",
      "комиссия",
      "заработная",
      "игнорируй",
      "займа",
      "о",
      "оп",
      "опл",
      "зара",
      "зарпл",
      "заработ",
      "заработн",
      "заработна",
    ].flatMap((w) => [50, 2, 1].map((l) => [w, l] as const))) {
      const expected = all.filter((o) =>
        text(o)
          .split(/[^\p{L}\p{N}]+/u)
          .some((token) => token.startsWith(word)),
      );
      const got: typeof all = [];
      let after: { doc_date: string; operation_id: string } | undefined;
      for (;;) {
        const page = read.searchOperations({
          bankAccountId: w.account.bank_account_id,
          dateFrom: "2026-10-01",
          dateTo: "2026-10-31",
          words: [word],
          after,
          limit,
        });
        got.push(...page);
        if (page.length < limit) break;
        const last = page[page.length - 1]!;
        after = { doc_date: last.doc_date, operation_id: last.operation_id };
      }
      expect({ word, limit, ids: got.map((o) => o.operation_id) }).toEqual({
        word,
        limit,
        ids: expected.map((o) => o.operation_id),
      });
    }
    // A harness limit, not a performance assertion: on PostgreSQL each of these thousands of pages is
    // a round trip to the server.
  }, 60_000);
});

describe("migration 0004 (prefix indexes)", () => {
  test("operations stored before it are found by the rebuilt index, and new ones are indexed", async () => {
    const dir = tempDir();
    // Operations made by the current code in database A …
    const t = makeTestApp({}, "2026-11-20T09:00:00Z", { dbPath: join(dir, "a.db") });
    const w = t.fixtures.world({ ops_per_day: 10 });
    t.services.statements.orderFromUi(w.account.bank_account_id, "2026-10-01", "2026-10-20");
    await t.services.poller.idle();
    await t.services.poller.tick();
    await t.services.poller.idle();
    // … copied into database B as the release before 0004 left it.
    const b = openDatabase(join(dir, "b.db"));
    const before0004 = embeddedMigrations.findIndex((m) => m.tag.startsWith("0004_"));
    migrate(b.db, embeddedMigrationMeta().slice(0, before0004));
    b.sqlite.exec(`ATTACH '${join(dir, "a.db")}' AS a`);
    // The columns that release had (later migrations added more).
    const opColumns = b.sqlite
      .query<{ name: string }, []>("SELECT name FROM pragma_table_info('operations')")
      .all()
      .map((c) => c.name)
      .join(", ");
    const copy = (where: string) =>
      b.sqlite.exec(
        `INSERT INTO operations (${opColumns}) SELECT ${opColumns} FROM a.operations WHERE ${where}`,
      );
    b.sqlite.exec("INSERT INTO companies SELECT * FROM a.companies");
    const accountColumns =
      "id, company_id, bank, account_number, bik, currency, alias, sandbox_ops_per_day, sandbox_opening_balance, created_at";
    b.sqlite.exec(
      `INSERT INTO bank_accounts (${accountColumns}) SELECT ${accountColumns} FROM a.bank_accounts`,
    );
    copy("doc_date <= '2026-10-10'");

    migrate(b.db);
    const ddl = b.sqlite.query("SELECT sql FROM sqlite_master WHERE name = 'operations_fts'").get() as {
      sql: string;
    };
    expect(ddl.sql).toContain("prefix='2 3 4 5 6 7 8'");

    const read = searchesOn(sqlitePort(b.sqlite));
    const search = (from: string, to: string, word: string) =>
      read.searchOperations({
        bankAccountId: w.account.bank_account_id,
        dateFrom: from,
        dateTo: to,
        words: [word],
        limit: 100,
      });
    const stored = read.searchOperations({
      bankAccountId: w.account.bank_account_id,
      dateFrom: "2026-10-01",
      dateTo: "2026-10-10",
      limit: 1000,
    });
    expect(stored.length).toBe(100);
    const word = stored[0]!.purpose
      .toLowerCase()
      .split(/[^\p{L}]+/u)
      .find((x) => x.length >= 4)!
      .slice(0, 4);
    const contains = (ops: { purpose: string; payer: { name: string }; payee: { name: string } }[]) =>
      ops.filter((o) => `${o.purpose} ${o.payer.name} ${o.payee.name}`.toLowerCase().includes(word));
    expect(search("2026-10-01", "2026-10-10", word).length).toBeGreaterThan(0);

    copy("doc_date > '2026-10-10'");
    const later = search("2026-10-11", "2026-10-20", word);
    expect(later.length).toBeGreaterThan(0);
    expect(contains(later)).toEqual(later);
    b.close();
  });
});
