// lanes: sqlite
import { describe, expect, test } from "bun:test";
import { parse } from "csv-parse/sync";
import { CSV_COLUMNS, csvHeader, csvLinesFromStored, csvRecord, csvRows } from "../../src/formats/csv";
import type { StatementOperation } from "../../src/formats/types";
import { SAMPLE_OPERATIONS } from "./sample-operations";

const base = SAMPLE_OPERATIONS[0]!;

function withPurpose(purpose: string, name = base.payee.name): StatementOperation {
  return { ...base, purpose, payee: { ...base.payee, name } };
}

describe("statement CSV", () => {
  test("header row in the specified order, CRLF-terminated", () => {
    expect(csvHeader()).toBe(
      "doc_date,doc_number,amount,currency,direction,payer_inn,payer_name,payer_account," +
        "payee_inn,payee_name,payee_account,purpose\r\n",
    );
    expect(csvHeader().trimEnd().split(",")).toEqual([...CSV_COLUMNS]);
  });

  test("a plain row", () => {
    const op: StatementOperation = { ...SAMPLE_OPERATIONS[2]!, payer: { ...base.payer, name: "Ромашка" } };
    expect(csvRows([op])).toBe(
      "2026-11-05,1,0.05,RUB,debit,7719617469,Ромашка,40702810938000000001," +
        "7707083893,ПАО Сбербанк,70601810038000000001,Комиссия за ведение счета\r\n",
    );
  });

  test("quotes commas, double quotes and line breaks (RFC 4180)", () => {
    const text = csvRows([
      withPurpose('a, "b"\nc'),
      withPurpose("x\r\ny", "Name, Inc."),
      withPurpose("lone\rcr"),
    ]);
    expect(text).toContain('"a, ""b""\nc"\r\n');
    expect(text).toContain('"Name, Inc."');
    expect(text).toContain('"x\r\ny"');
    expect(text).toContain('"lone\rcr"');
  });

  test("csv-parse reads every value back exactly", () => {
    const ops = [
      ...SAMPLE_OPERATIONS,
      withPurpose('Оплата, "по счету"\r\nстрока 2\nстрока 3'),
      withPurpose(" leading and trailing spaces "),
      withPurpose("=SUM(A1)"),
      withPurpose("", ""),
    ];
    const text = csvHeader() + csvRows(ops.slice(0, 3)) + csvRows(ops.slice(3));
    const rows = parse(text, { columns: true }) as Array<Record<string, string>>;
    expect(rows).toHaveLength(ops.length);
    expect(rows[ops.length - 2]?.purpose).toBe("'=SUM(A1)");
    rows.forEach((row, i) => {
      const op = ops[i]!;
      expect(Object.keys(row)).toEqual([...CSV_COLUMNS]);
      // A text cell that would start a formula comes back with its leading ' (decisions §20).
      const shown = (text: string) => (/^[=+\-@\t\r]/.test(text) ? `'${text}` : text);
      expect(row).toEqual({
        doc_date: op.doc_date,
        doc_number: shown(op.doc_number),
        amount: (op.amount / 100).toFixed(2),
        currency: op.currency,
        direction: op.direction,
        payer_inn: shown(op.payer.inn),
        payer_name: shown(op.payer.name),
        payer_account: shown(op.payer.account),
        payee_inn: shown(op.payee.inn),
        payee_name: shown(op.payee.name),
        payee_account: shown(op.payee.account),
        purpose: shown(op.purpose),
      });
    });
  });

  test("chunks concatenate to the same text as one call; records end with CRLF", () => {
    const whole = csvRows(SAMPLE_OPERATIONS);
    const chunked = SAMPLE_OPERATIONS.map((op) => csvRows([op])).join("");
    expect(chunked).toBe(whole);
    expect(whole.endsWith("\r\n")).toBe(true);
    expect(csvRows([])).toBe("");
  });

  test("accepts any iterable", () => {
    function* gen() {
      yield* SAMPLE_OPERATIONS;
    }
    expect(csvRows(gen())).toBe(csvRows(SAMPLE_OPERATIONS));
  });

  test("the export's path from stored values (amount in kopecks) writes the same text", () => {
    const ops = [...SAMPLE_OPERATIONS, withPurpose('a, "b"\r\nc', "Name, Inc.")];
    const stored = ops.map((op) => {
      const values: (string | number)[] = csvRecord(op);
      values[2] = op.amount;
      return values;
    });
    expect(csvLinesFromStored(stored)).toBe(csvRows(ops));
    expect(csvLinesFromStored([])).toBe("");
  });
});
