// lanes: sqlite postgres
import { describe, expect, test } from "bun:test";
import { parse } from "csv-parse/sync";
import { CSV_COLUMNS } from "../../src/formats/csv";
import { formatKopecks } from "../../src/formats/money";
import { accountSectionBalances, decodeOneC, documentToOperation, parseOneC } from "../../src/formats/onec";
import { json, makeTestApp } from "../helpers/app";
import { expectError } from "../helpers/envelope";
import { type JsonExport, kop, PATH, readyStatement } from "./export-support";

describe("exports", () => {
  test("json, csv and 1c agree operation by operation; 1C balances add up; headers and names", async () => {
    const t = makeTestApp();
    const w = t.fixtures.world({ ops_per_day: 12 });
    const id = await readyStatement(t, w.token, w.account.bank_account_id, "2026-11-01", "2026-11-19");
    const statement = await json(await t.request("GET", `${PATH}/${id}`, { token: w.token }));
    const alias = w.account.alias;

    const jsonRes = await t.request("GET", `${PATH}/${id}/export?format=json`, { token: w.token });
    expect(jsonRes.status).toBe(200);
    expect(jsonRes.headers.get("content-type")).toBe("application/json; charset=utf-8");
    expect(jsonRes.headers.get("content-disposition")).toBe(
      `attachment; filename="stmt_${alias}_2026-11-01_2026-11-19.json"`,
    );
    expect(jsonRes.headers.get("x-request-id")).toBeTruthy();
    const doc = (await jsonRes.json()) as JsonExport;
    expect(Object.keys(doc)).toEqual([
      "statement_id",
      "bank_account_id",
      "period_from",
      "period_to",
      "operations",
    ]);
    expect(doc.operations).toHaveLength(statement.operations_count as number);
    expect(doc.operations.length).toBe(12 * 19);

    const csvRes = await t.request("GET", `${PATH}/${id}/export?format=csv`, { token: w.token });
    expect(csvRes.headers.get("content-type")).toBe("text/csv; charset=utf-8");
    expect(csvRes.headers.get("content-disposition")).toContain(`stmt_${alias}_2026-11-01_2026-11-19.csv`);
    const rows = parse(await csvRes.text(), { columns: true }) as Record<string, string>[];
    expect(Object.keys(rows[0]!)).toEqual([...CSV_COLUMNS]);

    const onecRes = await t.request("GET", `${PATH}/${id}/export?format=1c`, { token: w.token });
    expect(onecRes.headers.get("content-type")).toBe("text/plain; charset=windows-1251");
    expect(onecRes.headers.get("content-disposition")).toContain(`stmt_${alias}_2026-11-01_2026-11-19.txt`);
    const bytes = new Uint8Array(await onecRes.arrayBuffer());
    const text = decodeOneC(bytes);
    expect(text.split("\r\n").every((line) => !line.includes("\n"))).toBe(true);
    expect(text.endsWith("КонецФайла\r\n")).toBe(true);
    const file = parseOneC(text);
    expect(file.header.get("ВерсияФормата")?.value).toBe("1.03");
    const accountNumber = file.header.get("РасчСчет")!.value;
    expect(accountNumber).toMatch(/^\d{20}$/);
    expect(file.documents).toHaveLength(doc.operations.length);

    let credit = 0;
    let debit = 0;
    doc.operations.forEach((op, i) => {
      const row = rows[i]!;
      expect(row).toEqual({
        doc_date: op.doc_date,
        doc_number: op.doc_number,
        amount: formatKopecks(kop(op.amount)),
        currency: op.currency,
        direction: op.direction,
        payer_inn: op.payer.inn,
        payer_name: op.payer.name,
        payer_account: op.payer.account,
        payee_inn: op.payee.inn,
        payee_name: op.payee.name,
        payee_account: op.payee.account,
        purpose: op.purpose,
      });
      const fromOneC = documentToOperation(file.documents[i]!, accountNumber);
      expect(fromOneC.amount).toBe(kop(op.amount));
      expect(fromOneC.direction).toBe(op.direction as "credit" | "debit");
      expect(fromOneC.doc_number).toBe(op.doc_number);
      expect(fromOneC.doc_date).toBe(op.doc_date);
      expect(fromOneC.doc_type).toBe(op.doc_type as never);
      expect(fromOneC.payer.inn).toBe(op.payer.inn);
      expect(fromOneC.payee.account).toBe(op.payee.account);
      expect(fromOneC.purpose).toBe(op.purpose);
      if (op.direction === "credit") credit += kop(op.amount);
      else debit += kop(op.amount);
    });
    const balances = accountSectionBalances(file.accounts[0]!);
    expect(balances.totalCredit).toBe(credit);
    expect(balances.totalDebit).toBe(debit);
    expect(balances.openingBalance! + credit - debit).toBe(balances.closingBalance!);
    // Bank data with commas, quotes and line breaks survived all three formats (checked above).
    expect(doc.operations.some((op) => op.purpose.includes("\n"))).toBe(true);
    expect(doc.operations.some((op) => op.purpose.includes('"'))).toBe(true);
  });

  test("1.02 carries no 1.03-only fields; 1.03 does", async () => {
    const t = makeTestApp();
    const w = t.fixtures.world();
    const id = await readyStatement(t, w.token, w.account.bank_account_id, "2026-11-01", "2026-11-05");
    const v102 = decodeOneC(
      new Uint8Array(
        await (
          await t.request("GET", `${PATH}/${id}/export?format=1c&version=1.02`, { token: w.token })
        ).arrayBuffer(),
      ),
    );
    const v103 = decodeOneC(
      new Uint8Array(
        await (
          await t.request("GET", `${PATH}/${id}/export?format=1c&version=1.03`, { token: w.token })
        ).arrayBuffer(),
      ),
    );
    expect(v102).toContain("ВерсияФормата=1.02");
    expect(v102).not.toMatch(/^Код=/m);
    expect(v102).not.toMatch(/^КодНазПлатежа=/m);
    expect(v103).toMatch(/^Код=/m);
    expect(v103).toMatch(/^КодНазПлатежа=/m);
  });

  test("bad format or version is 400 validation_error", async () => {
    const t = makeTestApp();
    const w = t.fixtures.world();
    const id = await readyStatement(t, w.token, w.account.bank_account_id, "2026-11-01", "2026-11-01");
    for (const q of [
      "format=xml",
      "",
      "format=1c&version=1.04",
      "format=csv&version=1.03",
      "format=json&version=1.02",
    ]) {
      await expectError(
        await t.request("GET", `${PATH}/${id}/export?${q}`, { token: w.token }),
        400,
        "validation_error",
      );
    }
  });

  test("the same period ordered twice gives identical operations and balances", async () => {
    const t = makeTestApp();
    const w = t.fixtures.world();
    const a = await readyStatement(t, w.token, w.account.bank_account_id, "2026-10-10", "2026-10-20", "a");
    const b = await readyStatement(t, w.token, w.account.bank_account_id, "2026-10-10", "2026-10-20", "b");
    expect(a).not.toBe(b);
    const get = async (id: string, format: string) =>
      (await t.request("GET", `${PATH}/${id}/export?format=${format}`, { token: w.token })).text();
    const ja = JSON.parse(await get(a, "json")) as JsonExport;
    const jb = JSON.parse(await get(b, "json")) as JsonExport;
    expect(jb.operations).toEqual(ja.operations);
    expect(await get(b, "csv")).toBe(await get(a, "csv"));
    const ra = t.services.statementRepo.findById(a)!;
    const rb = t.services.statementRepo.findById(b)!;
    expect([rb.opening_balance, rb.closing_balance]).toEqual([ra.opening_balance, ra.closing_balance]);
    // Overlapping statements share stored operations.
    const stored = t.db.query("SELECT count(*) AS n FROM operations").get() as {
      n: number;
    };
    expect(stored.n).toBe(ja.operations.length);
  });
});

describe("json export objects", () => {
  test("built by SQLite, they equal operationJson of every operation", async () => {
    const { operationJson } = await import("../../src/formats/operation-json");
    const t = makeTestApp();
    const w = t.fixtures.world({ ops_per_day: 50 });
    const id = await readyStatement(t, w.token, w.account.bank_account_id, "2026-10-01", "2026-10-31");
    const row = t.services.statementRepo.findById(id)!;
    const seqs = Array.from({ length: row.operations_count! }, (_, i) => i + 1);
    const objects = t.services.exportQueries.operationsAt(row, seqs);
    const json = t.services.exportQueries.operationsJsonPage(row, 0, 100_000);
    expect(json).toHaveLength(objects.length);
    json.forEach((j, i) => {
      expect(JSON.parse(j.json)).toEqual(operationJson(objects[i]!.op));
      // Amounts keep at most two decimals in the text itself.
      expect(j.json).toMatch(/"amount":\d+(\.\d{1,2})?,/);
    });
  });
});

describe("export names and the csv byte order mark", () => {
  test("1.02 and 1.03 downloads have different names; the default keeps the decisions' name", async () => {
    const t = makeTestApp();
    const w = t.fixtures.world();
    const id = await readyStatement(t, w.token, w.account.bank_account_id, "2026-11-01", "2026-11-02");
    const name = async (query: string) =>
      (await t.request("GET", `${PATH}/${id}/export?${query}`, { token: w.token })).headers.get(
        "content-disposition",
      );
    const base = `stmt_${w.account.alias}_2026-11-01_2026-11-02`;
    expect(await name("format=1c")).toBe(`attachment; filename="${base}.txt"`);
    expect(await name("format=1c&version=1.03")).toBe(`attachment; filename="${base}.txt"`);
    expect(await name("format=1c&version=1.02")).toBe(`attachment; filename="${base}_1.02.txt"`);
  });

  test("bom=1 starts the csv with the UTF-8 byte order mark; by default there is none; bom elsewhere is 400", async () => {
    const t = makeTestApp();
    const w = t.fixtures.world();
    const id = await readyStatement(t, w.token, w.account.bank_account_id, "2026-11-01", "2026-11-02");
    const bytes = async (query: string) =>
      new Uint8Array(
        await (await t.request("GET", `${PATH}/${id}/export?${query}`, { token: w.token })).arrayBuffer(),
      );
    const plain = await bytes("format=csv");
    const marked = await bytes("format=csv&bom=1");
    expect([...plain.subarray(0, 3)]).not.toEqual([0xef, 0xbb, 0xbf]);
    expect([...marked.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    expect(Buffer.from(marked.subarray(3)).equals(Buffer.from(plain))).toBe(true);
    expect(Buffer.from(await bytes("format=csv&bom=0")).equals(Buffer.from(plain))).toBe(true);
    for (const query of ["format=json&bom=1", "format=1c&bom=1", "format=csv&bom=yes"]) {
      const details = await expectError(
        await t.request("GET", `${PATH}/${id}/export?${query}`, { token: w.token }),
        400,
        "validation_error",
      );
      expect(details.field).toBe("bom");
    }
  });
});
