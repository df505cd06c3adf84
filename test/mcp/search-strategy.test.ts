// The text search answers through one of two query plans (check the first candidates one by one,
// or list every match); whichever is used, the pages must equal a plain filter over all rows.
import { describe, expect, test } from "bun:test";
import { ftsQuery, McpReadModel } from "../../src/mcp/read-model";
import { makeTestApp } from "../helpers/app";

describe("search_operations text plans", () => {
  test("common, medium and rare words give exactly the matching operations, page by page", async () => {
    const t = makeTestApp();
    const w = t.fixtures.world({ ops_per_day: 40 });
    t.services.statements.orderFromUi(w.account.bank_account_id, "2026-10-01", "2026-10-31");
    await t.services.poller.idle();
    await t.services.poller.tick();
    await t.services.poller.idle();
    const read = new McpReadModel(t.services.database.sqlite);
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
    for (const [word, limit] of [
      "оплата",
      "договору",
      "комиссия",
      "заработная",
      "игнорируй",
      "займа",
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
          match: ftsQuery(word)!,
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
  });
});
