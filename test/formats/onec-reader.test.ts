// lanes: sqlite
import { describe, expect, test } from "bun:test";
import iconv from "iconv-lite";
import {
  accountSectionBalances,
  decodeOneC,
  documentToOperation,
  encodeCp1251,
  type OneCFields,
  OneCParseError,
  type OneCStatementMeta,
  oneCStatement,
  parseOneC,
  purposeFromFields,
  statementTotals,
} from "../../src/formats/onec";
import type { OneCVersion, StatementOperation } from "../../src/formats/types";
import { OWN_ACCOUNT, SAMPLE_OPERATIONS } from "./sample-operations";

function metaFor(version: OneCVersion, ops: StatementOperation[]): OneCStatementMeta {
  return {
    version,
    sender: "svc",
    created: { date: "2026-11-21", time: "14:05:09" },
    dateFrom: "2026-11-01",
    dateTo: "2026-11-20",
    accountNumber: OWN_ACCOUNT,
    docTypes: ops.map((op) => op.doc_type),
    openingBalance: 10000000,
    ...statementTotals(ops, 10000000),
  };
}

function expectedAfterRoundTrip(op: StatementOperation, version: OneCVersion) {
  const { operation_id: _id, ...rest } = op;
  return {
    ...rest,
    uin: version === "1.03" ? (op.uin ?? null) : null,
    purpose_code: version === "1.03" ? (op.purpose_code ?? null) : null,
    priority: op.priority ?? null,
  };
}

/** Lines joined with CRLF and terminated; line N of the file is lines[N - 1]. */
function file(lines: string[]): string {
  return `${lines.join("\r\n")}\r\n`;
}

const HEADER = [
  "1CClientBankExchange",
  "ВерсияФормата=1.03",
  "Кодировка=Windows",
  "Отправитель=Бухгалтерия предприятия",
  "ДатаНачала=01.11.2026",
  "ДатаКонца=20.11.2026",
  "РасчСчет=40702810938000000001",
  "Документ=Платежное поручение",
];

const DOC = [
  "СекцияДокумент=Платежное поручение",
  "Номер=12",
  "Дата=03.11.2026",
  "Сумма=100.50",
  "ПлательщикСчет=40702810938000000001",
  "ПлательщикИНН=7719617469",
  "ПолучательСчет=40702810800000012345",
  "ПолучательИНН=7707083893",
  "НазначениеПлатежа=a=b=c",
  "КонецДокумента",
];

function parseError(text: string): OneCParseError {
  try {
    parseOneC(text);
  } catch (e) {
    if (e instanceof OneCParseError) return e;
    throw e;
  }
  throw new Error("expected a OneCParseError");
}

describe("1C round trip", () => {
  for (const version of ["1.02", "1.03"] as const) {
    test(`writer → cp1251 → decode → parse → map gives the operations back (${version})`, () => {
      const bytes = encodeCp1251(oneCStatement(metaFor(version, SAMPLE_OPERATIONS), SAMPLE_OPERATIONS));
      const parsed = parseOneC(decodeOneC(bytes));
      expect(parsed.documents).toHaveLength(SAMPLE_OPERATIONS.length);
      expect(parsed.documents.map((d) => documentToOperation(d, OWN_ACCOUNT))).toEqual(
        SAMPLE_OPERATIONS.map((op) => expectedAfterRoundTrip(op, version)),
      );
      // Without the account, direction comes from ДатаСписано / ДатаПоступило.
      expect(parsed.documents.map((d) => documentToOperation(d).direction)).toEqual(
        SAMPLE_OPERATIONS.map((op) => op.direction),
      );
    });
  }

  test("header, Документ lines and balances read back", () => {
    const parsed = parseOneC(oneCStatement(metaFor("1.03", SAMPLE_OPERATIONS), SAMPLE_OPERATIONS));
    expect(parsed.header.get("ВерсияФормата")).toEqual({ value: "1.03", line: 2 });
    expect(parsed.header.get("Кодировка")?.value).toBe("Windows");
    expect(parsed.documentKinds.map((f) => f.value)).toContain("Банковский ордер");
    expect(parsed.accounts).toHaveLength(1);
    expect(accountSectionBalances(parsed.accounts[0]!)).toEqual({
      accountNumber: OWN_ACCOUNT,
      dateFrom: "2026-11-01",
      dateTo: "2026-11-20",
      openingBalance: 10000000,
      totalCredit: 2510100,
      totalDebit: 1334572,
      closingBalance: 11175528,
    });
  });

  test("purposes with commas, quotes, '=', tabs and line breaks survive", () => {
    const purposes = [
      'a, "b", c',
      "x = y == z",
      "tab\there",
      "line 1\nline 2\n\nline 4\n",
      "\nleading break",
      "  spaces kept  ",
      "Ёлка «ёж» № 5 — тире",
    ];
    const ops = purposes.map((purpose) => ({ ...SAMPLE_OPERATIONS[0]!, purpose }));
    const parsed = parseOneC(decodeOneC(encodeCp1251(oneCStatement(metaFor("1.03", ops), ops))));
    expect(parsed.documents.map((d) => documentToOperation(d, OWN_ACCOUNT).purpose)).toEqual(purposes);
  });

  test("CR and CRLF breaks in a purpose read back as LF", () => {
    const ops = [{ ...SAMPLE_OPERATIONS[0]!, purpose: "a\r\nb\rc" }];
    const parsed = parseOneC(oneCStatement(metaFor("1.03", ops), ops));
    expect(documentToOperation(parsed.documents[0]!, OWN_ACCOUNT).purpose).toBe("a\nb\nc");
  });

  test("LF line ends are accepted and give the same result", () => {
    const crlf = oneCStatement(metaFor("1.03", SAMPLE_OPERATIONS), SAMPLE_OPERATIONS);
    const lf = crlf.replaceAll("\r\n", "\n");
    expect(parseOneC(lf)).toEqual(parseOneC(crlf));
  });

  test("a file without a final line break parses", () => {
    const parsed = parseOneC(file([...HEADER, ...DOC, "КонецФайла"]).slice(0, -2));
    expect(parsed.endLine).toBe(HEADER.length + DOC.length + 1);
  });
});

describe("decodeOneC", () => {
  test("cp866 when the header says Кодировка=DOS", () => {
    // cp866 has no guillemets, so they are swapped for plain quotes first.
    const text = oneCStatement(metaFor("1.03", SAMPLE_OPERATIONS), SAMPLE_OPERATIONS)
      .replace("Кодировка=Windows", "Кодировка=DOS")
      .replace(/[«»]/g, '"');
    const bytes = iconv.encode(text, "cp866");
    expect(iconv.decode(bytes, "win1251")).not.toBe(text);
    expect(decodeOneC(bytes)).toBe(text);
    const parsed = parseOneC(decodeOneC(bytes));
    expect(parsed.header.get("Кодировка")?.value).toBe("DOS");
    expect(documentToOperation(parsed.documents[0]!, OWN_ACCOUNT).purpose).toBe(
      SAMPLE_OPERATIONS[0]!.purpose,
    );
  });

  test("cp1251 by default", () => {
    const text = file([...HEADER, ...DOC, "КонецФайла"]);
    expect(decodeOneC(encodeCp1251(text))).toBe(text);
    const noEncodingKey = text.replace("Кодировка=Windows\r\n", "");
    expect(decodeOneC(encodeCp1251(noEncodingKey))).toBe(noEncodingKey);
  });
});

describe("parseOneC structure", () => {
  test("each field carries its value and line; values split on the first '=' only", () => {
    const parsed = parseOneC(file([...HEADER, "", ...DOC, "КонецФайла"]));
    const doc = parsed.documents[0]!;
    expect(doc.kind).toBe("Платежное поручение");
    expect(doc.docType).toBe("payment_order");
    expect(doc.line).toBe(10);
    expect(doc.endLine).toBe(19);
    expect(doc.fields.get("Номер")).toEqual({ value: "12", line: 11 });
    expect(doc.fields.get("НазначениеПлатежа")).toEqual({ value: "a=b=c", line: 18 });
    expect([...doc.fields.keys()]).toEqual(DOC.slice(1, -1).map((l) => l.slice(0, l.indexOf("="))));
    expect(parsed.documentKinds).toEqual([{ value: "Платежное поручение", line: 8 }]);
    expect(parsed.endLine).toBe(20);
  });

  test("a letter of credit parses but has no doc type", () => {
    const parsed = parseOneC(
      file([...HEADER, "СекцияДокумент=Аккредитив", "Номер=1", "КонецДокумента", "КонецФайла"]),
    );
    expect(parsed.documents[0]!.docType).toBeNull();
    expect(() => documentToOperation(parsed.documents[0]!)).toThrow(OneCParseError);
  });
});

describe("parseOneC errors carry the line", () => {
  test("first line must be 1CClientBankExchange", () => {
    expect(parseError(file(["1CClientBank", ...HEADER.slice(1), "КонецФайла"])).line).toBe(1);
    expect(parseError("").line).toBe(1);
  });

  test("missing КонецФайла", () => {
    const e = parseError(file([...HEADER, ...DOC]));
    expect(e.line).toBe(HEADER.length + DOC.length);
    expect(e.message).toContain("КонецФайла");
  });

  test("unterminated document, closed by the next section", () => {
    const e = parseError(file([...HEADER, ...DOC.slice(0, -1), ...DOC, "КонецФайла"]));
    expect(e.line).toBe(9);
    expect(e.field).toBe("СекцияДокумент");
  });

  test("unterminated document at the end of the file", () => {
    expect(parseError(file([...HEADER, ...DOC.slice(0, -1)])).line).toBe(9);
    expect(parseError(file([...HEADER, ...DOC.slice(0, -1), "КонецФайла"])).line).toBe(9);
  });

  test("unterminated account section", () => {
    const e = parseError(file([...HEADER, "СекцияРасчСчет", "РасчСчет=1", ...DOC, "КонецФайла"]));
    expect(e.line).toBe(9);
    expect(e.field).toBe("СекцияРасчСчет");
    expect(parseError(file([...HEADER, "СекцияРасчСчет", "РасчСчет=1", "КонецДокумента"])).line).toBe(9);
  });

  test("a line without '=' inside a section", () => {
    const lines = [...HEADER, ...DOC.slice(0, 3), "просто текст", ...DOC.slice(3), "КонецФайла"];
    expect(parseError(file(lines)).line).toBe(12);
    const inAccount = [
      ...HEADER,
      "СекцияРасчСчет",
      "ДатаНачала=01.11.2026",
      "мусор",
      "КонецРасчСчет",
      "КонецФайла",
    ];
    expect(parseError(file(inAccount)).line).toBe(11);
  });

  test("a line without '=' in the header", () => {
    expect(parseError(file([...HEADER.slice(0, 3), "мусор", ...HEADER.slice(3), "КонецФайла"])).line).toBe(4);
  });

  test("an empty key", () => {
    expect(parseError(file([...HEADER, "=value", "КонецФайла"])).line).toBe(9);
  });

  test("an unknown document kind", () => {
    const e = parseError(file([...HEADER, "СекцияДокумент=Выписка", ...DOC.slice(1), "КонецФайла"]));
    expect(e.line).toBe(9);
    expect(e.field).toBe("СекцияДокумент");
    expect(e.message).toContain("Выписка");
  });

  test("a duplicate key within a document", () => {
    const lines = [...HEADER, ...DOC.slice(0, 4), "Сумма=1.00", ...DOC.slice(4), "КонецФайла"];
    const e = parseError(file(lines));
    expect(e.line).toBe(13);
    expect(e.field).toBe("Сумма");
    expect(e.message).toContain("line 12");
  });

  test("a duplicate key in the header; Документ may repeat", () => {
    expect(parseError(file([...HEADER, "РасчСчет=2", "КонецФайла"])).line).toBe(9);
    const parsed = parseOneC(file([...HEADER, "Документ=Платежное требование", "КонецФайла"]));
    expect(parsed.documentKinds.map((k) => k.line)).toEqual([8, 9]);
  });

  test("the same key in different blocks is fine", () => {
    const parsed = parseOneC(file([...HEADER, ...DOC, ...DOC, "КонецФайла"]));
    expect(parsed.documents.map((d) => d.fields.get("Номер")!.line)).toEqual([10, 20]);
  });

  test("a closing marker without its section", () => {
    expect(parseError(file([...HEADER, "КонецДокумента", "КонецФайла"])).line).toBe(9);
    expect(parseError(file([...HEADER, "КонецРасчСчет", "КонецФайла"])).line).toBe(9);
  });

  test("content after КонецФайла", () => {
    expect(parseError(file([...HEADER, "КонецФайла", "", "Номер=1"])).line).toBe(11);
    expect(parseOneC(file([...HEADER, "КонецФайла", "", ""])).endLine).toBe(9);
  });

  test("errors are Error instances with a readable message", () => {
    const e = parseError(file([...HEADER, ...DOC]));
    expect(e).toBeInstanceOf(Error);
    expect(e.message).toStartWith("line 18:");
  });
});

describe("documentToOperation", () => {
  const parsedDoc = (lines: string[]) => parseOneC(file([...HEADER, ...lines, "КонецФайла"])).documents[0]!;

  test("an invalid amount or date points at its line", () => {
    const badAmount = parsedDoc(DOC.map((l) => (l.startsWith("Сумма=") ? "Сумма=100.505" : l)));
    expect(() => documentToOperation(badAmount, OWN_ACCOUNT)).toThrow(OneCParseError);
    try {
      documentToOperation(badAmount, OWN_ACCOUNT);
    } catch (e) {
      expect((e as OneCParseError).line).toBe(12);
      expect((e as OneCParseError).field).toBe("Сумма");
    }
    const noDate = parsedDoc(DOC.filter((l) => !l.startsWith("Дата=")));
    try {
      documentToOperation(noDate, OWN_ACCOUNT);
      throw new Error("expected an error");
    } catch (e) {
      expect((e as OneCParseError).line).toBe(9);
      expect((e as OneCParseError).field).toBe("Дата");
    }
  });

  test("direction from the statement account", () => {
    const doc = parsedDoc(DOC);
    expect(documentToOperation(doc, "40702810938000000001").direction).toBe("debit");
    expect(documentToOperation(doc, "40702810800000012345").direction).toBe("credit");
    expect(() => documentToOperation(doc, "40702810000000000000")).toThrow(OneCParseError);
    expect(() => documentToOperation(doc)).toThrow(OneCParseError);
  });

  test("fills what a foreign file leaves out", () => {
    const op = documentToOperation(
      parsedDoc([...DOC.slice(0, -1), "Плательщик=ИНН 7719617469 ООО Ромашка", "Код=0", "КонецДокумента"]),
      OWN_ACCOUNT,
    );
    expect(op.payer.name).toBe("ООО Ромашка");
    expect(op.payer.bank_bik).toBe("");
    expect(op.amount).toBe(10050);
    expect(op.doc_date).toBe("2026-11-03");
    expect(op.currency).toBe("RUB");
    expect(op.uin).toBe("0");
    expect(op.priority).toBeNull();
  });
});

describe("purposeFromFields", () => {
  const fields = (entries: Array<[string, string]>): OneCFields =>
    new Map(entries.map(([k, v], i) => [k, { value: v, line: i + 1 }]));

  test("single line only", () => {
    expect(purposeFromFields(fields([["НазначениеПлатежа", "Оплата"]]))).toBe("Оплата");
    expect(purposeFromFields(fields([]))).toBe("");
  });

  test("numbered lines only", () => {
    expect(
      purposeFromFields(
        fields([
          ["НазначениеПлатежа1", "a"],
          ["НазначениеПлатежа2", "b"],
        ]),
      ),
    ).toBe("a\nb");
  });

  test("numbered lines that are not the split of the single line lose to it", () => {
    expect(
      purposeFromFields(
        fields([
          ["НазначениеПлатежа", "Оплата по счету 5"],
          ["НазначениеПлатежа1", "Оплата по сч"],
          ["НазначениеПлатежа2", "ету 5"],
        ]),
      ),
    ).toBe("Оплата по счету 5");
  });

  test("more than six lines: the sixth holds the rest joined with spaces", () => {
    const ops = [{ ...SAMPLE_OPERATIONS[0]!, purpose: "1\n2\n3\n4\n5\n6\n7\n8" }];
    const parsed = parseOneC(oneCStatement(metaFor("1.03", ops), ops));
    expect(documentToOperation(parsed.documents[0]!, OWN_ACCOUNT).purpose).toBe("1\n2\n3\n4\n5\n6 7 8");
  });
});

describe("accountSectionBalances", () => {
  test("negative balances and missing keys", () => {
    const parsed = parseOneC(
      file([
        ...HEADER,
        "СекцияРасчСчет",
        "ДатаНачала=01.11.2026",
        "РасчСчет=40702810938000000001",
        "НачальныйОстаток=-1500.25",
        "КонецРасчСчет",
        "КонецФайла",
      ]),
    );
    expect(accountSectionBalances(parsed.accounts[0]!)).toEqual({
      accountNumber: "40702810938000000001",
      dateFrom: "2026-11-01",
      dateTo: null,
      openingBalance: -150025,
      totalCredit: null,
      totalDebit: null,
      closingBalance: null,
    });
  });

  test("a malformed amount points at its line", () => {
    const parsed = parseOneC(
      file([...HEADER, "СекцияРасчСчет", "НачальныйОстаток=1 000.00", "КонецРасчСчет", "КонецФайла"]),
    );
    expect(() => accountSectionBalances(parsed.accounts[0]!)).toThrow(OneCParseError);
    try {
      accountSectionBalances(parsed.accounts[0]!);
    } catch (e) {
      expect((e as OneCParseError).line).toBe(10);
    }
  });
});
