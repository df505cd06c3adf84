// lanes: sqlite
// The 1C export reads its documents laid out by SQLite (db/sqlite/onec-sql.ts). Whatever is
// stored, the file must hold exactly the bytes of the field writer (writeStatementDocumentFields),
// which is the definition: line breaks, NUL, quotes and characters cp1251 lacks in any value,
// every amount, both directions, every document kind, both versions.
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { migrate, openDatabase } from "../../src/db/open";
import { sqlitePort } from "../../src/db/sql-port";
import { ExportQueries } from "../../src/db/sqlite/export-reads";
import { encodeCp1251, oneCStatementDocument, oneCStatementFooter } from "../../src/formats/onec";
import { DOC_TYPES, type OneCVersion, type StatementOperation } from "../../src/formats/types";
import { exportStatement } from "../../src/statements/export";
import { StatementRepository, type StatementRow } from "../../src/statements/repository";

const ACCOUNT = "40702810900000000001";

function storage(options: { layOutOneC?: boolean } = {}) {
  const database = openDatabase(":memory:");
  migrate(database.db);
  // Only the export's reading is under test here: no company or account rows behind it.
  database.sqlite.exec("PRAGMA foreign_keys = OFF");
  const lifecycle = new StatementRepository(sqlitePort(database.sqlite));
  const repo = new ExportQueries(database.sqlite, options);
  let n = 0;
  const statement = (ops: StatementOperation[]): StatementRow => {
    const id = `s${++n}`;
    database.sqlite
      .query(
        `INSERT INTO statements (id, bank_account_id, source, date_from, date_to, status, bank_state, attempts,
                                 next_poll_at_ms, created_at, opening_balance, total_credit, total_debit, closing_balance,
                                 operations_count)
         VALUES (?, ?, 'ui', '2026-10-01', '2026-10-31', 'ready', 'done', 0, 0, '2026-11-01T00:00:00Z', 0, 0, 0, 0, ?)`,
      )
      .run(id, `acc-${id}`, ops.length);
    lifecycle.storeOperations(id, `acc-${id}`, 1, ops);
    return lifecycle.findById(id)!;
  };
  return { repo, statement };
}

async function exported(repo: ExportQueries, statement: StatementRow, version: OneCVersion) {
  const file = exportStatement(repo, statement, { accountNumber: ACCOUNT, alias: "main" }, "1c", {
    version,
    created: { date: "2026-11-01", time: "10:00:00" },
  });
  return Buffer.from(await new Response(file.body).arrayBuffer());
}

/** The documents and the footer as the field writer writes the `count` stored operations. */
function expectedTail(
  repo: ExportQueries,
  statement: StatementRow,
  version: OneCVersion,
  count: number,
): Buffer {
  const seqs = Array.from({ length: count }, (_, i) => i + 1);
  const stored = repo.operationsAt(statement, seqs).map((r) => r.op);
  expect(stored).toHaveLength(count);
  return Buffer.from(
    encodeCp1251(stored.map((op) => oneCStatementDocument(op, version)).join("") + oneCStatementFooter()),
  );
}

// By code point: the emoji is one character of two UTF-16 units.
const CHARS = [..."aZ07 =%'\";\t\r\n\0аЯёЁ№«»—₽ñ\u00a0😀"];
const text = (maxLength: number) =>
  fc.oneof(
    fc.string({ unit: fc.constantFrom(...CHARS), maxLength }),
    fc.constantFrom("", "ООО «Ромашка»", "Оплата\r\nпо счёту", "строка 1\nстрока 2\rстрока 3"),
  );
const party = fc.record({
  name: text(30),
  inn: fc.oneof(fc.constant(""), fc.stringMatching(/^\d{10}$/), text(12)),
  kpp: text(9),
  account: text(20),
  bank_name: text(20),
  bank_bik: text(9),
  bank_corr_account: text(20),
});
const operation = fc.record({
  direction: fc.constantFrom("credit" as const, "debit" as const),
  doc_type: fc.constantFrom(...DOC_TYPES),
  doc_number: text(8),
  doc_date: fc
    .date({
      min: new Date("0001-01-01T00:00:00Z"),
      max: new Date("9999-12-31T00:00:00Z"),
      noInvalidDate: true,
    })
    .map((d) => d.toISOString().slice(0, 10)),
  amount: fc.oneof(
    fc.integer({ min: 0, max: 1_000_000_000_000 }),
    fc.constantFrom(0, 1, 9, 10, 99, 100, 101, Number.MAX_SAFE_INTEGER),
  ),
  purpose: text(60),
  payer: party,
  payee: party,
  uin: fc.option(text(25), { nil: null }),
  purpose_code: fc.option(text(2), { nil: null }),
  priority: fc.option(text(2), { nil: null }),
  budget: fc.option(
    fc.record(
      {
        originator_status: text(2),
        kbk: text(20),
        oktmo: text(11),
        basis: text(2),
        period: text(10),
        number: text(15),
        date: fc.oneof(fc.constant("2026-10-05"), text(10)),
        type: text(2),
      },
      { requiredKeys: [] },
    ),
    { nil: null, freq: 4 },
  ),
});
const operations = fc
  .array(operation, { minLength: 1, maxLength: 25 })
  .map((ops) =>
    ops.map((op, i): StatementOperation => ({ ...op, operation_id: `op-${i}`, currency: "RUB" })),
  );

describe("1C export documents laid out by SQLite", () => {
  test("equal the field writer's bytes for any stored operations, in both versions", async () => {
    const { repo, statement } = storage();
    await fc.assert(
      fc.asyncProperty(operations, fc.constantFrom<OneCVersion>("1.02", "1.03"), async (ops, version) => {
        const row = statement(ops);
        const body = await exported(repo, row, version);
        const tail = expectedTail(repo, row, version, ops.length);
        expect(body.subarray(body.length - tail.length).equals(tail)).toBe(true);
        // Nothing but the header before the documents.
        expect(body.subarray(0, body.length - tail.length).includes(encodeCp1251("СекцияДокумент="))).toBe(
          false,
        );
      }),
      { numRuns: 300 },
    );
  });

  test("operations without line breaks are written from the laid-out text, the others by the field writer", async () => {
    const { repo, statement } = storage();
    const plain: StatementOperation = {
      operation_id: "op-1",
      direction: "credit",
      doc_type: "payment_order",
      doc_number: "15",
      doc_date: "2026-10-05",
      amount: 1_234_505,
      currency: "RUB",
      purpose: "Оплата по счёту № 7, НДС не облагается",
      payer: {
        name: "ООО «Ромашка»",
        inn: "7719617469",
        kpp: "771901001",
        account: "40702810400000000002",
        bank_name: "ПАО СБЕРБАНК",
        bank_bik: "044525225",
        bank_corr_account: "30101810400000000225",
      },
      payee: {
        name: "ООО «Демо»",
        inn: "",
        kpp: "",
        account: ACCOUNT,
        bank_name: "АО «Банк»",
        bank_bik: "044525555",
        bank_corr_account: "30101810400000000555",
      },
      uin: null,
      purpose_code: null,
      priority: "5",
    };
    const ops = [
      plain,
      { ...plain, operation_id: "op-2", purpose: "Строка 1\r\nСтрока 2" },
      { ...plain, operation_id: "op-3", direction: "debit" as const },
      { ...plain, operation_id: "op-4", payee: { ...plain.payee, name: "ООО\n«Перенос»" } },
    ];
    const row = statement(ops);
    const asked: number[][] = [];
    const operationsAt = repo.operationsAt.bind(repo);
    repo.operationsAt = (s, seqs) => {
      asked.push(seqs);
      return operationsAt(s, seqs);
    };
    for (const version of ["1.02", "1.03"] as const) {
      asked.length = 0;
      const body = await exported(repo, row, version);
      // Only the multi-line purpose and the name with a line break needed the field writer.
      expect(asked).toEqual([[2, 4]]);
      const tail = expectedTail(repo, row, version, ops.length);
      expect(body.subarray(body.length - tail.length).equals(tail)).toBe(true);
    }
  });

  test("with a SQLite that cannot lay documents out (no concat()), the field writer writes them all", async () => {
    const { repo, statement } = storage({ layOutOneC: false });
    const ops = fc.sample(operations, { numRuns: 5, seed: 7 }).flat();
    const row = statement(ops.map((op, i) => ({ ...op, operation_id: `op-${i}` })));
    const asked: number[] = [];
    const operationsAt = repo.operationsAt.bind(repo);
    repo.operationsAt = (s, seqs) => {
      asked.push(...seqs);
      return operationsAt(s, seqs);
    };
    const body = await exported(repo, row, "1.03");
    expect(asked).toEqual(ops.map((_, i) => i + 1));
    const tail = expectedTail(repo, row, "1.03", ops.length);
    expect(body.subarray(body.length - tail.length).equals(tail)).toBe(true);
  });

  test("an operation the field writer refuses fails the export as before, not written some other way", async () => {
    const { repo, statement } = storage();
    const party = {
      name: "a",
      inn: "",
      kpp: "",
      account: "1",
      bank_name: "b",
      bank_bik: "1",
      bank_corr_account: "1",
    };
    const base = {
      operation_id: "op-1",
      direction: "credit" as const,
      doc_type: "payment_order" as const,
      doc_number: "1",
      doc_date: "2026-10-05",
      amount: 100,
      currency: "RUB",
      purpose: "x",
      payer: party,
      payee: party,
      uin: null,
      purpose_code: null,
      priority: null,
    };
    for (const bad of [{ amount: -1 }, { doc_date: "2026-02-30" }, { doc_date: "0000-01-01" }]) {
      const row = statement([{ ...base, ...bad }]);
      await expect(exported(repo, row, "1.03")).rejects.toThrow(RangeError);
    }
  });
});
