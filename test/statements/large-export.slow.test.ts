// lanes: sqlite
// The slow tier (*.slow.test.ts): run last by `make test` (CI included), skipped by `make test-fast`.
// A 31-day statement of 5,000 operations a day, exported in all three formats.
import { describe, expect, spyOn, test } from "bun:test";
import { parse as parseStream } from "csv-parse";
import { exportCollections } from "../../src/statements/export/collections";
import { makeTestApp } from "../helpers/app";
import { type JsonExport, kop, PATH, parseOneCInSlices, readyStatement } from "./export-support";

describe("exports of a large statement", () => {
  test("a 31-day statement of 155k operations exports correctly in all three formats", async () => {
    const t = makeTestApp();
    const w = t.fixtures.world({ ops_per_day: 5000 });
    const id = await readyStatement(t, w.token, w.account.bank_account_id, "2026-10-01", "2026-10-31");
    const row = t.services.statementRepo.findById(id)!;
    expect(row.status).toBe("ready");
    expect(row.operations_count).toBe(155_000);
    const totals = { credit: row.total_credit!, debit: row.total_debit! };
    // Each of these large exports ends by asking for a full collection (paced: the first runs at
    // once, the next within 10 s waits for its turn, collections.ts); a small one (the header-only
    // statement below) does not ask.
    const asked = spyOn(exportCollections, "exportEnded");
    const collections = spyOn(Bun, "gc");

    // Each phase keeps as little as it can: 155k parsed operations in every form at once were most
    // of a 2.4 GB test process.
    // json: count and totals
    {
      const res = await t.request("GET", `${PATH}/${id}/export?format=json`, { token: w.token });
      const doc = (await res.json()) as JsonExport;
      expect(doc.operations).toHaveLength(155_000);
      let credit = 0;
      let debit = 0;
      for (const op of doc.operations) {
        if (op.direction === "credit") credit += kop(op.amount);
        else debit += kop(op.amount);
      }
      expect({ credit, debit }).toEqual(totals);
    }

    // csv: count and totals, each record read and let go as the download streams
    {
      const res = await t.request("GET", `${PATH}/${id}/export?format=csv`, { token: w.token });
      const parser = parseStream({ columns: true });
      let count = 0;
      let csvCredit = 0;
      parser.on("readable", () => {
        for (let r = parser.read(); r !== null; r = parser.read()) {
          count += 1;
          if (r.direction === "credit") csvCredit += Number(String(r.amount).replace(".", ""));
        }
      });
      const ended = new Promise<void>((resolve, reject) => {
        parser.on("end", () => resolve());
        parser.on("error", reject);
      });
      for await (const chunk of res.body as ReadableStream<Uint8Array>) parser.write(Buffer.from(chunk));
      parser.end();
      await ended;
      expect(count).toBe(155_000);
      expect(csvCredit).toBe(totals.credit);
    }

    // 1c: downloaded now, read below once the collections are counted
    const onec = new Uint8Array(
      await (await t.request("GET", `${PATH}/${id}/export?format=1c`, { token: w.token })).arrayBuffer(),
    );

    expect(asked).toHaveBeenCalledTimes(3);
    expect(collections.mock.calls.length).toBeGreaterThanOrEqual(1);
    expect(collections.mock.calls.every((args) => args[0] === true)).toBe(true);
    const small = await readyStatement(
      t,
      w.token,
      w.account.bank_account_id,
      "2026-11-01",
      "2026-11-01",
      "small",
    );
    for (const format of ["json", "csv", "1c"])
      await (
        await t.request("GET", `${PATH}/${small}/export?format=${format}`, { token: w.token })
      ).arrayBuffer();
    expect(asked).toHaveBeenCalledTimes(3);
    asked.mockRestore();
    collections.mockRestore();

    // Every 1C document through the reader, a slice of the file at a time (collected in between)
    const { documents, balances: b } = parseOneCInSlices(onec, 10_000);
    expect(documents).toBe(155_000);
    expect([b.totalCredit, b.totalDebit]).toEqual([totals.credit, totals.debit]);
    expect(b.openingBalance! + b.totalCredit! - b.totalDebit!).toBe(b.closingBalance!);
  }, 120_000);
});
