// lanes: postgres
// Statement downloads on both stores: the same ready statement gives the same bytes in every
// format, read by ExportQueries on SQLite (json built in SQL, 1C documents laid out in SQL) and by
// PostgresExportQueries on PostgreSQL (json from operationJson, every 1C document by the field
// writer); the document kinds and the operations read back are the same too.
import { describe, expect, test } from "bun:test";
import type { ExportReads } from "../../src/db/export-reads";
import { PostgresExportQueries } from "../../src/db/pg/export-reads";
import type { SqlPort } from "../../src/db/sql-port";
import { ExportQueries } from "../../src/db/sqlite/export-reads";
import { DOC_TYPES, type OneCVersion, type StatementOperation } from "../../src/formats/types";
import { type ExportFormat, exportStatement, pageRenderer } from "../../src/statements/export";
import type { StatementRow } from "../../src/statements/queries";
import { StatementRepository } from "../../src/statements/repository";
import { twoStores, UNCACHED } from "../helpers/pg";
import { statementOperation } from "../helpers/rows";

const { ports, sqlite: sqliteDb } = twoStores();

const VERSIONS: OneCVersion[] = ["1.02", "1.03"];
const PAGE = 250; // the renderer's page, so that the statement spans more than one

const party = (name: string, inn: string, account: string) => ({
  name,
  inn,
  kpp: "771901001",
  account,
  bank_name: "ПАО «Банк» г. Москва",
  bank_bik: "044525225",
  bank_corr_account: "30101810400000000225",
});
const US = party("ООО Ромашка", "7719617469", "40702810000000000001");
const THEM = party('ООО "Лютик; и партнёры"', "7707083893", "40702810000000000009");
const TAX = party("УФК по г. Москве (ИФНС России № 19)", "7719044440", "03100643000000017300");

function operation(id: string, over: Partial<StatementOperation> = {}): StatementOperation {
  return statementOperation({
    operation_id: id,
    doc_number: id.replace(/\D/g, "") || "1",
    amount: 100,
    purpose: "Оплата по счёту № 12 от 01.10.2026, в т.ч. НДС 20%",
    payer: THEM,
    payee: US,
    ...over,
  });
}

const KINDS = [...DOC_TYPES];

/** Operations of every kind and both directions, with values the formats treat specially, then
 *  plain ones until the statement fills more than one page. */
function operations(): StatementOperation[] {
  const ops = [
    operation("o1", { amount: 100 }),
    operation("o2", { amount: 12345, direction: "debit", payer: US, payee: THEM }),
    operation("o3", { amount: 1, doc_type: "bank_order", purpose: "Комиссия за ведение счёта" }),
    operation("o4", {
      amount: 1_234_567,
      direction: "debit",
      payer: US,
      payee: TAX,
      uin: "0",
      purpose_code: "2",
      priority: "5",
      purpose: "Налог на доходы физических лиц за октябрь 2026 г.",
      budget: {
        originator_status: "01",
        kbk: "18210102010011000110",
        oktmo: "45382000",
        basis: "ТП",
        period: "МС.10.2026",
        number: "0",
        date: "0",
        type: "",
      },
    }),
    operation("o5", { amount: 10, purpose: "Оплата\r\nпо счёту «7»", doc_type: "payment_request" }),
    operation("o6", { amount: 2 ** 40 + 1, payer: { ...THEM, name: "ИП Ёлкин\nЁ. Ё." } }),
    operation("o7", { amount: 250_000, doc_type: "memorial_order", purpose: 'Проценты; "по остатку" — ₽' }),
    operation("o8", { amount: 99, doc_type: "collection_order", direction: "debit", payer: US, payee: THEM }),
    operation("o9", { amount: 5_000_00, doc_type: "payment_warrant", uin: "18810177240000123456" }),
  ];
  for (let i = ops.length + 1; ops.length < PAGE + 20; i++) {
    ops.push(
      operation(`o${i}`, {
        amount: i * 1_013,
        doc_type: KINDS[i % KINDS.length]!,
        direction: i % 3 === 0 ? "debit" : "credit",
        doc_date: `2026-10-${String((i % 28) + 1).padStart(2, "0")}`,
        purpose: `Оплата по договору № ${i}`,
      }),
    );
  }
  return ops;
}

/** The ready statement on `port` and what the export reads it by there. */
function readyStatement(port: SqlPort): { row: StatementRow; reads: ExportReads } {
  const repo = new StatementRepository(port, UNCACHED);
  const ops = operations();
  const outcome = repo.createReady(
    {
      id: "s1",
      bank_account_id: "acc1",
      api_token_id: "t1",
      source: "integration",
      external_id: "e1",
      date_from: "2026-10-01",
      date_to: "2026-10-31",
      created_at: "2026-11-20T10:00:00.000Z",
    },
    {
      opening_balance: 1_000_00,
      closing_balance: 2_000_00,
      total_credit: 3_000_00,
      total_debit: 2_000_00,
      fetched_at: "2026-11-20T10:05:00.000Z",
    },
    ops,
    null,
  );
  expect(outcome.kind).toBe("created");
  const reads = port.dialect === "sqlite" ? new ExportQueries(sqliteDb) : new PostgresExportQueries(port);
  return { row: repo.findById("s1")!, reads };
}

const JOBS: { format: ExportFormat; version: OneCVersion }[] = [
  { format: "json", version: "1.03" },
  { format: "csv", version: "1.03" },
  ...VERSIONS.map((version) => ({ format: "1c" as const, version })),
];

/** Every page the renderer gives, one past the last (empty) included. */
function pages(reads: ExportReads, row: StatementRow, job: (typeof JOBS)[number]): Buffer[] {
  const render = pageRenderer(reads, { statement: row, ...job });
  const count = Math.ceil(row.operations_count! / PAGE);
  return Array.from({ length: count + 1 }, (_, n) => Buffer.from(render(n)));
}

async function file(reads: ExportReads, row: StatementRow, job: (typeof JOBS)[number]): Promise<Buffer> {
  const out = exportStatement(reads, row, { accountNumber: US.account, alias: "main" }, job.format, {
    version: job.version,
    created: { date: "2026-11-20", time: "10:05:00" },
  });
  return Buffer.from(await new Response(out.body).arrayBuffer());
}

describe("statement exports on both stores", () => {
  test("every format gives the same bytes, page by page and whole", async () => {
    const [sqlite, postgres] = ports.map(readyStatement);
    expect(postgres!.row).toEqual(sqlite!.row);
    expect(sqlite!.row.operations_count).toBe(PAGE + 20);
    // SQLite does lay out 1C documents here (else both sides would be the field writer's).
    const laidOut = sqlite!.reads.operationsOneCPage(sqlite!.row, "1.03", 0, PAGE);
    expect(laidOut.some((r) => r.document !== null)).toBe(true);
    for (const job of JOBS) {
      const label = `${job.format} ${job.version}`;
      const onSqlite = pages(sqlite!.reads, sqlite!.row, job);
      const onPostgres = pages(postgres!.reads, postgres!.row, job);
      expect(
        onSqlite.map((p) => p.byteLength > 0),
        label,
      ).toEqual([true, true, false]);
      onSqlite.forEach((page, n) => {
        expect(onPostgres[n]!.equals(page), `${label}, page ${n}`).toBe(true);
      });
      const whole = await file(sqlite!.reads, sqlite!.row, job);
      expect(whole.byteLength, label).toBeGreaterThan(0);
      expect((await file(postgres!.reads, postgres!.row, job)).equals(whole), label).toBe(true);
    }
  });

  test("document kinds and the operations read back are the same", () => {
    const [sqlite, postgres] = ports.map((port) => {
      const row = new StatementRepository(port, UNCACHED).findById("s1")!;
      const reads = port.dialect === "sqlite" ? new ExportQueries(sqliteDb) : new PostgresExportQueries(port);
      // Many positions (more than PostgreSQL's parameter limit would allow one by one), backwards
      // and mostly absent: they come back present ones only, in seq order.
      const many = Array.from({ length: PAGE + 20 }, (_, i) => PAGE + 20 - i).flatMap((seq) => [
        seq,
        seq + 10_000,
        seq + 20_000,
        seq + 30_000,
      ]);
      return {
        kept: reads.docTypes(row),
        // Read from the operations, as for a statement made before the kinds were kept.
        read: reads.docTypes({ ...row, doc_types: null }),
        some: reads.operationsAt(row, [9, 1, 4, 6, 5, 404]),
        all: reads.operationsAt(row, many),
        csv: reads.operationsCsvPage(row, 0, 10),
      };
    });
    expect(postgres).toEqual(sqlite!);
    expect(sqlite!.read).toEqual(KINDS);
    expect(sqlite!.kept).toEqual(KINDS);
    expect(sqlite!.some.map((r) => r.seq)).toEqual([1, 4, 5, 6, 9]);
    expect(sqlite!.all.map((r) => r.seq)).toEqual(Array.from({ length: PAGE + 20 }, (_, i) => i + 1));
    expect(sqlite!.some[1]!.op).toEqual(operations()[3]!);
  });
});
