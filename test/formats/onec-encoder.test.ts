// lanes: sqlite
import { describe, expect, test } from "bun:test";
import { generateStatement } from "../../src/banks/sandbox/generator";
import { encodeCp1251, OneCDocumentEncoder, oneCStatementDocument } from "../../src/formats/onec";
import type { OneCVersion, StatementOperation } from "../../src/formats/types";
import { SAMPLE_OPERATIONS as sampleOperations } from "./sample-operations";

function awkward(base: StatementOperation): StatementOperation[] {
  return [
    { ...base, purpose: "Строка 1\r\nСтрока 2\rСтрока 3\nСтрока 4" },
    { ...base, purpose: "Оплата ₽ 100 😀, «кавычки» — тире, ё Ё, ñ" },
    { ...base, payer: { ...base.payer, name: "ООО\r\n«Перенос»" } },
    { ...base, purpose: "=== a=b ===", uin: "0", purpose_code: "1", priority: null },
    { ...base, purpose: "" },
  ];
}

describe("OneCDocumentEncoder", () => {
  test("writes exactly the bytes of encodeCp1251(oneCStatementDocument(...)) in both versions", () => {
    const generated = [
      ...generateStatement(
        {
          account_number: "40702810938000000001",
          bik: "044525225",
          ops_per_day: 200,
          opening_balance: 100_000_000,
        },
        "2026-10-01",
        "2026-10-05",
      ).operations,
    ];
    const ops = [...sampleOperations, ...generated, ...awkward(sampleOperations[0]!)];
    for (const version of ["1.02", "1.03"] as OneCVersion[]) {
      const encoder = new OneCDocumentEncoder(version);
      for (const op of ops) encoder.document(op);
      const expected = encodeCp1251(ops.map((op) => oneCStatementDocument(op, version)).join(""));
      expect(Buffer.from(encoder.take()).equals(Buffer.from(expected))).toBe(true);
      // take() empties the buffer.
      expect(encoder.take()).toHaveLength(0);
    }
  });

  test("documents written at kept places come out in order, each byte copied once into the result", () => {
    const ops = [...sampleOperations, ...awkward(sampleOperations[0]!)];
    const encoder = new OneCDocumentEncoder("1.03");
    const later: StatementOperation[] = [];
    ops.forEach((op, i) => {
      if (i % 3 === 1) {
        encoder.keepPlace();
        later.push(op);
      } else {
        const text = oneCStatementDocument(op, "1.03");
        // Laid-out text of a document with no line break inside its values is taken as it is.
        const lines = text.split("\r\n").length - 1;
        if (!encoder.laidOut(text, lines)) {
          encoder.keepPlace();
          later.push(op);
        }
      }
    });
    expect(() => encoder.take()).toThrow();
    const expected = encodeCp1251(ops.map((op) => oneCStatementDocument(op, "1.03")).join(""));
    expect(Buffer.from(encoder.takeWith(later)).equals(Buffer.from(expected))).toBe(true);
    expect(encoder.take()).toHaveLength(0);
  });

  test("laid-out text with a line break inside a value is refused and nothing of it is written", () => {
    const encoder = new OneCDocumentEncoder("1.03");
    expect(encoder.laidOut("Номер=1\r\nПлательщик=ООО\nРомашка\r\n", 2)).toBe(false);
    expect(encoder.laidOut("Номер=1\r\nПлательщик=ООО\r\nРомашка\r\n", 2)).toBe(false);
    expect(encoder.take()).toHaveLength(0);
    expect(encoder.laidOut("Номер=1\r\nПлательщик=ООО\r\n", 2)).toBe(true);
    expect(
      Buffer.from(encoder.take()).equals(Buffer.from(encodeCp1251("Номер=1\r\nПлательщик=ООО\r\n"))),
    ).toBe(true);
  });

  test("refuses what the text writer refuses", () => {
    const encoder = new OneCDocumentEncoder("1.03");
    expect(() => encoder.document({ ...sampleOperations[0]!, amount: -1 })).toThrow(RangeError);
    expect(() => encoder.document({ ...sampleOperations[0]!, doc_date: "2026-02-30" })).toThrow(RangeError);
  });
});
