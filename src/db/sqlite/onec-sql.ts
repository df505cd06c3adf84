// The 1C export's documents laid out by SQLite, one concat() per operation: reading the ~27
// columns of an operation into an object and writing its ~30 lines field by field cost about
// twice as much. The layout is writeStatementDocumentFields' (formats/onec/writer.ts), which stays the
// definition; a property test holds the two equal. Rows that writer refuses (amount, date,
// document kind) come back NULL, and rows with a line break inside a value are recognised by the
// encoder (OneCDocumentEncoder.laidOut): both are written by the field writer instead.
import { ONEC_DOC_KINDS, ONEC_PARTY_KEYS, ONEC_PAYMENT_KIND_CODES } from "../../formats/onec";
import type { OneCVersion } from "../../formats/types";

export interface OneCDocumentSql {
  /** Text of the document for the operations row `o`, or NULL. */
  expression: string;
  /** Lines in every document it builds (each ends in CRLF). */
  lines: number;
}

const CRLF = "char(13, 10)";
const quote = (text: string) => `'${text.replaceAll("'", "''")}'`;
const byDocType = (names: Record<string, string>) =>
  `CASE o.doc_type ${Object.entries(names)
    .map(([docType, name]) => `WHEN ${quote(docType)} THEN ${quote(name)}`)
    .join(" ")} END`;
// dd.mm.yyyy as concat() arguments.
const RU_DATE = "substr(o.doc_date, 9, 2), '.', substr(o.doc_date, 6, 2), '.', substr(o.doc_date, 1, 4)";

const built = new Map<OneCVersion, OneCDocumentSql>();

/** The layout of `version`, built once. */
export function oneCDocumentSql(version: OneCVersion): OneCDocumentSql {
  let sql = built.get(version);
  if (!sql) {
    sql = buildOneCDocumentSql(version);
    built.set(version, sql);
  }
  return sql;
}

function buildOneCDocumentSql(version: OneCVersion): OneCDocumentSql {
  // concat() arguments. Constant text is gathered into one literal (a line's CRLF with the next
  // key): each argument costs SQLite a step per row (about 60 now, about 100 before).
  const args: string[] = [];
  let text = "";
  let lines = 0;
  const value = (expression: string) => {
    if (text !== "") args.push(quote(text));
    text = "";
    args.push(expression);
  };
  // One line: the key, then the concat() arguments of its value.
  const line = (key: string, expression: string) => {
    text += `${key}=`;
    value(expression);
    text += "\r\n";
    lines++;
  };
  // The line of a date that only one direction has; every valid row has exactly one of the two.
  const directionDate = (direction: "debit" | "credit", key: string) => {
    value(`CASE o.direction WHEN '${direction}' THEN concat(${quote(`${key}=`)}, ${RU_DATE}, ${CRLF}) END`);
  };
  const party = (prefix: "Плательщик" | "Получатель", column: "payer" | "payee") => {
    const keys = ONEC_PARTY_KEYS[prefix];
    line(
      keys[0],
      `CASE o.${column}_inn WHEN '' THEN o.${column}_name ELSE concat('ИНН ', o.${column}_inn, ' ', o.${column}_name) END`,
    );
    line(keys[1], `o.${column}_inn`);
    line(keys[2], `o.${column}_name`);
    line(keys[3], `o.${column}_account`);
    line(keys[4], `o.${column}_bank_name`);
    line(keys[5], `o.${column}_bank_bik`);
    line(keys[6], `o.${column}_bank_corr_account`);
  };
  const v103 = version === "1.03";

  line("СекцияДокумент", byDocType(ONEC_DOC_KINDS));
  line("Номер", "o.doc_number");
  line("Дата", RU_DATE);
  // Kopecks as rubles with two decimals (amounts are non-negative integers here).
  line("Сумма", "o.amount / 100, '.', substr('0' || (o.amount % 100), -2)");
  line("ПлательщикСчет", "o.payer_account");
  directionDate("debit", "ДатаСписано");
  party("Плательщик", "payer");
  line("ПолучательСчет", "o.payee_account");
  directionDate("credit", "ДатаПоступило");
  party("Получатель", "payee");
  if (v103) line("КодНазПлатежа", "o.purpose_code");
  line("ВидОплаты", byDocType(ONEC_PAYMENT_KIND_CODES));
  if (v103) line("Код", "o.uin");
  line("НазначениеПлатежа", "o.purpose");
  line("ПлательщикКПП", "o.payer_kpp");
  line("ПолучательКПП", "o.payee_kpp");
  line("Очередность", "o.priority");
  text += "КонецДокумента\r\n";
  args.push(quote(text));
  lines += 2; // the direction's date line and КонецДокумента

  // What writeStatementDocumentFields refuses or cannot name: a negative or fractional amount,
  // a date that is not a real YYYY-MM-DD day, an unknown document kind. (concat() writes NULL
  // values as empty strings, as the writer does with uin, purpose_code and priority.)
  const writable = [
    "typeof(o.amount) = 'integer'",
    "o.amount BETWEEN 0 AND 9007199254740991",
    "date(o.doc_date) IS o.doc_date",
    "o.doc_date >= '0001'",
    `o.doc_type IN (${Object.keys(ONEC_DOC_KINDS).map(quote).join(", ")})`,
    // Budget-payment fields (a few tax and customs payments) are written by the field writer.
    "o.budget_fields IS NULL",
  ].join(" AND ");
  return { expression: `CASE WHEN ${writable} THEN concat(${args.join(", ")}) END`, lines };
}
