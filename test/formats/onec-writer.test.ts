// lanes: sqlite
import { describe, expect, test } from "bun:test";
import {
  encodeCp1251,
  ONEC_DOCUMENT_FIELD_ORDER,
  type OneCStatementMeta,
  oneCStatement,
  oneCStatementDocument,
  oneCStatementFooter,
  oneCStatementHeader,
  purposeFields,
  statementTotals,
} from "../../src/formats/onec";
import type { OneCVersion, StatementOperation } from "../../src/formats/types";
import { OWN_ACCOUNT, SAMPLE_OPERATIONS } from "./sample-operations";

function metaFor(version: OneCVersion, ops: StatementOperation[] = SAMPLE_OPERATIONS): OneCStatementMeta {
  const openingBalance = 10000000;
  return {
    version,
    sender: "svc",
    created: { date: "2026-11-21", time: "14:05:09" },
    dateFrom: "2026-11-01",
    dateTo: "2026-11-20",
    accountNumber: OWN_ACCOUNT,
    docTypes: ops.map((op) => op.doc_type),
    openingBalance,
    ...statementTotals(ops, openingBalance),
  };
}

function linesOf(text: string): string[] {
  expect(text.endsWith("\r\n")).toBe(true);
  return text.slice(0, -2).split("\r\n");
}

function documentBlocks(lines: string[]): string[][] {
  const blocks: string[][] = [];
  let current: string[] | null = null;
  for (const line of lines) {
    if (line.startsWith("СекцияДокумент=")) current = [];
    else if (line === "КонецДокумента") {
      blocks.push(current!);
      current = null;
    } else if (current !== null) current.push(line);
  }
  return blocks;
}

describe("1C statement writer", () => {
  test("header, account section and the first document, line by line", () => {
    const ops = SAMPLE_OPERATIONS.slice(0, 1);
    const text = oneCStatement(metaFor("1.03", ops), ops);
    expect(linesOf(text)).toEqual([
      "1CClientBankExchange",
      "ВерсияФормата=1.03",
      "Кодировка=Windows",
      "Отправитель=svc",
      "Получатель=Бухгалтерский учет",
      "ДатаСоздания=21.11.2026",
      "ВремяСоздания=14:05:09",
      "ДатаНачала=01.11.2026",
      "ДатаКонца=20.11.2026",
      "РасчСчет=40702810938000000001",
      "Документ=Платежное поручение",
      "СекцияРасчСчет",
      "ДатаНачала=01.11.2026",
      "ДатаКонца=20.11.2026",
      "РасчСчет=40702810938000000001",
      "НачальныйОстаток=100000.00",
      "ВсегоПоступило=0.00",
      "ВсегоСписано=12345.67",
      "КонечныйОстаток=87654.33",
      "КонецРасчСчет",
      "СекцияДокумент=Платежное поручение",
      "Номер=118",
      "Дата=03.11.2026",
      "Сумма=12345.67",
      "ПлательщикСчет=40702810938000000001",
      "ДатаСписано=03.11.2026",
      'Плательщик=ИНН 7719617469 ООО "Ромашка"',
      "ПлательщикИНН=7719617469",
      'Плательщик1=ООО "Ромашка"',
      "ПлательщикРасчСчет=40702810938000000001",
      "ПлательщикБанк1=ПАО Сбербанк",
      "ПлательщикБИК=044525225",
      "ПлательщикКорсчет=30101810400000000225",
      "ПолучательСчет=40702810800000012345",
      "Получатель=ИНН 7707083893 АО «Поставщик», филиал №2",
      "ПолучательИНН=7707083893",
      "Получатель1=АО «Поставщик», филиал №2",
      "ПолучательРасчСчет=40702810800000012345",
      'ПолучательБанк1=АО "АЛЬФА-БАНК"',
      "ПолучательБИК=044525593",
      "ПолучательКорсчет=30101810200000000593",
      "КодНазПлатежа=1",
      "ВидОплаты=01",
      "Код=18810177230001234567",
      'НазначениеПлатежа=Оплата по счету № 15 от 01.11.2026, "срочно" НДС не облагается',
      'НазначениеПлатежа1=Оплата по счету № 15 от 01.11.2026, "срочно"',
      "НазначениеПлатежа2=НДС не облагается",
      "ПлательщикКПП=771901001",
      "ПолучательКПП=773601001",
      "Очередность=5",
      "КонецДокумента",
      "КонецФайла",
    ]);
  });

  test("CRLF everywhere, no bare CR or LF, ends with КонецФайла", () => {
    for (const version of ["1.02", "1.03"] as const) {
      const text = oneCStatement(metaFor(version), SAMPLE_OPERATIONS);
      expect(text.endsWith("КонецФайла\r\n")).toBe(true);
      expect(text.replaceAll("\r\n", "")).not.toMatch(/[\r\n]/);
      expect(oneCStatementFooter()).toBe("КонецФайла\r\n");
    }
  });

  test("one document per operation; ДатаСписано for debits, ДатаПоступило for credits", () => {
    const blocks = documentBlocks(linesOf(oneCStatement(metaFor("1.03"), SAMPLE_OPERATIONS)));
    expect(blocks).toHaveLength(SAMPLE_OPERATIONS.length);
    blocks.forEach((block, i) => {
      const op = SAMPLE_OPERATIONS[i]!;
      const keys = block.map((l) => l.slice(0, l.indexOf("=")));
      expect(keys.includes("ДатаСписано")).toBe(op.direction === "debit");
      expect(keys.includes("ДатаПоступило")).toBe(op.direction === "credit");
    });
  });

  test("keys follow the canonical order and appear once per block", () => {
    const blocks = documentBlocks(linesOf(oneCStatement(metaFor("1.03"), SAMPLE_OPERATIONS)));
    for (const block of blocks) {
      const positions = block.map((l) => ONEC_DOCUMENT_FIELD_ORDER.indexOf(l.slice(0, l.indexOf("="))));
      expect(positions.every((p) => p >= 0)).toBe(true);
      expect([...positions].sort((a, b) => a - b)).toEqual(positions);
      expect(new Set(positions).size).toBe(positions.length);
    }
  });

  test("1.02 never writes Код or КодНазПлатежа; 1.03 always does", () => {
    const v102 = linesOf(oneCStatement(metaFor("1.02"), SAMPLE_OPERATIONS));
    expect(v102).toContain("ВерсияФормата=1.02");
    expect(v102.filter((l) => l.startsWith("Код=") || l.startsWith("КодНазПлатежа="))).toEqual([]);

    const v103 = linesOf(oneCStatement(metaFor("1.03"), SAMPLE_OPERATIONS));
    expect(v103.filter((l) => l.startsWith("Код=")).length).toBe(SAMPLE_OPERATIONS.length);
    expect(v103.filter((l) => l.startsWith("КодНазПлатежа=")).length).toBe(SAMPLE_OPERATIONS.length);
    expect(v103).toContain("Код=");
    expect(v103).toContain("КодНазПлатежа=");
  });

  test("balance lines add up to the kopeck", () => {
    const lines = linesOf(oneCStatementHeader(metaFor("1.03")));
    const section = lines.slice(lines.indexOf("СекцияРасчСчет"));
    expect(section).toContain("НачальныйОстаток=100000.00");
    expect(section).toContain("ВсегоПоступило=25101.00");
    expect(section).toContain("ВсегоСписано=13345.72");
    expect(section).toContain("КонечныйОстаток=111755.28");
    expect(section.at(-1)).toBe("КонецРасчСчет");
  });

  test("negative balances are written with a minus sign", () => {
    const meta = { ...metaFor("1.03", []), openingBalance: -500, closingBalance: -500 };
    expect(oneCStatementHeader(meta)).toContain("НачальныйОстаток=-5.00\r\nВсегоПоступило=0.00\r\n");
  });

  test("Документ lines list each kind once, in first-seen order", () => {
    const lines = linesOf(oneCStatementHeader(metaFor("1.03")));
    expect(lines.filter((l) => l.startsWith("Документ="))).toEqual([
      "Документ=Платежное поручение",
      "Документ=Банковский ордер",
      "Документ=Мемориальный ордер",
      "Документ=Инкассовое поручение",
      "Документ=Платежное требование",
      "Документ=Платежный ордер",
    ]);
  });

  test("ВидОплаты per doc type", () => {
    const codes = documentBlocks(linesOf(oneCStatement(metaFor("1.02"), SAMPLE_OPERATIONS))).map((b) =>
      b.find((l) => l.startsWith("ВидОплаты=")),
    );
    expect(codes).toEqual([
      "ВидОплаты=01",
      "ВидОплаты=01",
      "ВидОплаты=17",
      "ВидОплаты=09",
      "ВидОплаты=06",
      "ВидОплаты=02",
      "ВидОплаты=16",
    ]);
  });

  test("line breaks in values other than the purpose become spaces", () => {
    const op = SAMPLE_OPERATIONS[0]!;
    const text = oneCStatementDocument({ ...op, payee: { ...op.payee, name: "ООО\r\nДве\nстроки" } }, "1.03");
    expect(text).toContain("Получатель1=ООО Две строки\r\n");
    expect(text.replaceAll("\r\n", "")).not.toMatch(/[\r\n]/);
  });

  test("purpose fields: one line always, numbered lines only when multi-line", () => {
    expect(purposeFields("Оплата")).toEqual([["НазначениеПлатежа", "Оплата"]]);
    expect(purposeFields("")).toEqual([["НазначениеПлатежа", ""]]);
    expect(purposeFields("a\r\nb\rc\n")).toEqual([
      ["НазначениеПлатежа", "a b c "],
      ["НазначениеПлатежа1", "a"],
      ["НазначениеПлатежа2", "b"],
      ["НазначениеПлатежа3", "c"],
      ["НазначениеПлатежа4", ""],
    ]);
    expect(purposeFields("1\n2\n3\n4\n5\n6\n7\n8")).toEqual([
      ["НазначениеПлатежа", "1 2 3 4 5 6 7 8"],
      ["НазначениеПлатежа1", "1"],
      ["НазначениеПлатежа2", "2"],
      ["НазначениеПлатежа3", "3"],
      ["НазначениеПлатежа4", "4"],
      ["НазначениеПлатежа5", "5"],
      ["НазначениеПлатежа6", "6 7 8"],
    ]);
  });

  test("bad input is refused", () => {
    const meta = metaFor("1.03");
    expect(() => oneCStatementHeader({ ...meta, closingBalance: meta.closingBalance + 1 })).toThrow(
      RangeError,
    );
    expect(() => oneCStatementHeader({ ...meta, created: { date: "2026-11-21", time: "25:00:00" } })).toThrow(
      RangeError,
    );
    expect(() => oneCStatementHeader({ ...meta, dateFrom: "2026-02-30" })).toThrow(RangeError);
    expect(() => oneCStatementHeader({ ...meta, version: "1.01" as OneCVersion })).toThrow(RangeError);
    const op = SAMPLE_OPERATIONS[0]!;
    expect(() => oneCStatementDocument({ ...op, amount: 1.5 }, "1.03")).toThrow(RangeError);
    expect(() => oneCStatementDocument({ ...op, amount: -1 }, "1.03")).toThrow(RangeError);
    expect(() => oneCStatementDocument({ ...op, doc_date: "03.11.2026" }, "1.03")).toThrow(RangeError);
  });
});

describe("cp1251 encoding", () => {
  test("known bytes", () => {
    expect([...encodeCp1251("Платежное")]).toEqual([0xcf, 0xeb, 0xe0, 0xf2, 0xe5, 0xe6, 0xed, 0xee, 0xe5]);
    expect([...encodeCp1251("№«»Ёё")]).toEqual([0xb9, 0xab, 0xbb, 0xa8, 0xb8]);
    expect([...encodeCp1251("\r\n=")]).toEqual([0x0d, 0x0a, 0x3d]);
  });

  test("characters outside cp1251 become '?' (one per UTF-16 unit)", () => {
    expect([...encodeCp1251("€")]).toEqual([0x88]);
    expect([...encodeCp1251("₽")]).toEqual([0x3f]);
    expect([...encodeCp1251("😀")]).toEqual([0x3f, 0x3f]);
  });

  test("a whole file encodes one byte per character", () => {
    const text = oneCStatement(metaFor("1.03"), SAMPLE_OPERATIONS);
    const bytes = encodeCp1251(text);
    expect(bytes.length).toBe(text.length);
    const header = [...bytes.subarray(0, 22)];
    expect(String.fromCharCode(...header)).toBe("1CClientBankExchange\r\n");
  });
});
