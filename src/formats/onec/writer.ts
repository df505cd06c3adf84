import { isoToRu, isValidTime } from "../dates";
import { formatKopecks } from "../money";
import type { DocType, OneCVersion, Party, StatementOperation } from "../types";
import {
  CRLF,
  LINE_BREAK_RE,
  LINE_BREAKS_RE,
  ONEC_DOC_KINDS,
  ONEC_FIRST_LINE,
  ONEC_PAYMENT_KIND_CODES,
  ONEC_VERSIONS,
} from "./fields";

// ---------------------------------------------------------------------------------------------
// Writer

export interface OneCStatementMeta {
  version: OneCVersion;
  /** Отправитель, e.g. "svc". */
  sender: string;
  /** Получатель; defaults to "Бухгалтерский учет". */
  receiver?: string;
  /** ДатаСоздания / ВремяСоздания, already in the business time zone: "YYYY-MM-DD", "HH:mm:ss". */
  created: { date: string; time: string };
  /** YYYY-MM-DD */
  dateFrom: string;
  /** YYYY-MM-DD */
  dateTo: string;
  accountNumber: string;
  /** Doc types present in the file, one `Документ=` line each (duplicates dropped). */
  docTypes: readonly DocType[];
  /** Kopecks; openingBalance + totalCredit − totalDebit must equal closingBalance. */
  openingBalance: number;
  totalCredit: number;
  totalDebit: number;
  closingBalance: number;
}

export interface OneCStatementTotals {
  totalCredit: number;
  totalDebit: number;
  closingBalance: number;
}

/** Sums the operations' credits and debits and derives the closing balance (all kopecks). */
export function statementTotals(
  ops: Iterable<StatementOperation>,
  openingBalance: number,
): OneCStatementTotals {
  let totalCredit = 0;
  let totalDebit = 0;
  for (const op of ops) {
    if (op.direction === "credit") totalCredit += op.amount;
    else totalDebit += op.amount;
  }
  return { totalCredit, totalDebit, closingBalance: openingBalance + totalCredit - totalDebit };
}

/** One `key=value` line. Line breaks inside a value would start a new line, so they become spaces. */
function kv(key: string, value: string): string {
  // Most values hold no line break; skipping the regular expression for them halves the writer's time.
  const clean = value.includes("\n") || value.includes("\r") ? value.replace(LINE_BREAKS_RE, " ") : value;
  return `${key}=${clean}${CRLF}`;
}

function assertVersion(version: string): void {
  if (!ONEC_VERSIONS.includes(version as OneCVersion)) {
    throw new RangeError(`unsupported 1C format version: ${version}`);
  }
}

/** File header through the СекцияРасчСчет…КонецРасчСчет block. Throws RangeError on bad input. */
export function oneCStatementHeader(meta: OneCStatementMeta): string {
  assertVersion(meta.version);
  if (!isValidTime(meta.created.time)) {
    throw new RangeError(`created.time must be HH:mm:ss, got ${meta.created.time}`);
  }
  const { openingBalance, totalCredit, totalDebit, closingBalance } = meta;
  for (const k of [openingBalance, totalCredit, totalDebit, closingBalance]) {
    if (!Number.isSafeInteger(k)) throw new RangeError(`balances must be integer kopecks, got ${k}`);
  }
  if (BigInt(openingBalance) + BigInt(totalCredit) - BigInt(totalDebit) !== BigInt(closingBalance)) {
    throw new RangeError("openingBalance + totalCredit - totalDebit must equal closingBalance");
  }
  const from = isoToRu(meta.dateFrom);
  const to = isoToRu(meta.dateTo);
  const out = [
    ONEC_FIRST_LINE + CRLF,
    kv("ВерсияФормата", meta.version),
    kv("Кодировка", "Windows"),
    kv("Отправитель", meta.sender),
    kv("Получатель", meta.receiver ?? "Бухгалтерский учет"),
    kv("ДатаСоздания", isoToRu(meta.created.date)),
    kv("ВремяСоздания", meta.created.time),
    kv("ДатаНачала", from),
    kv("ДатаКонца", to),
    kv("РасчСчет", meta.accountNumber),
  ];
  for (const docType of new Set(meta.docTypes)) out.push(kv("Документ", ONEC_DOC_KINDS[docType]));
  out.push(
    `СекцияРасчСчет${CRLF}`,
    kv("ДатаНачала", from),
    kv("ДатаКонца", to),
    kv("РасчСчет", meta.accountNumber),
    kv("НачальныйОстаток", formatKopecks(openingBalance)),
    kv("ВсегоПоступило", formatKopecks(totalCredit)),
    kv("ВсегоСписано", formatKopecks(totalDebit)),
    kv("КонечныйОстаток", formatKopecks(closingBalance)),
    `КонецРасчСчет${CRLF}`,
  );
  return out.join("");
}

/**
 * Purpose keys and values. НазначениеПлатежа always holds the whole text on one line (line
 * breaks → single spaces) for importers that read only that key. A multi-line purpose also gets
 * its lines in НазначениеПлатежа1..6; beyond six lines, the sixth holds the rest joined with
 * spaces. purposeFromFields reverses this.
 */
export function purposeFields(purpose: string): Array<[string, string]> {
  const lines = purpose.split(LINE_BREAK_RE);
  const fields: Array<[string, string]> = [["НазначениеПлатежа", lines.join(" ")]];
  if (lines.length > 1) {
    const kept = lines.length <= 6 ? lines : [...lines.slice(0, 5), lines.slice(5).join(" ")];
    kept.forEach((line, i) => {
      fields.push([`НазначениеПлатежа${i + 1}`, line]);
    });
  }
  return fields;
}

function compositeName(party: Party): string {
  return party.inn === "" ? party.name : `ИНН ${party.inn} ${party.name}`;
}

/** Where the document writer puts each key and value, in file order. */
export type OneCFieldSink = (key: string, value: string) => void;

/** The keys of a party's lines, in file order (the name line, then ИНН, name, account, bank). */
export const ONEC_PARTY_KEYS = {
  Плательщик: [
    "Плательщик",
    "ПлательщикИНН",
    "Плательщик1",
    "ПлательщикРасчСчет",
    "ПлательщикБанк1",
    "ПлательщикБИК",
    "ПлательщикКорсчет",
  ],
  Получатель: [
    "Получатель",
    "ПолучательИНН",
    "Получатель1",
    "ПолучательРасчСчет",
    "ПолучательБанк1",
    "ПолучательБИК",
    "ПолучательКорсчет",
  ],
} as const;

function writeParty(prefix: "Плательщик" | "Получатель", party: Party, field: OneCFieldSink): void {
  const keys = ONEC_PARTY_KEYS[prefix];
  field(keys[0], compositeName(party));
  field(keys[1], party.inn);
  field(keys[2], party.name);
  field(keys[3], party.account);
  field(keys[4], party.bank_name);
  field(keys[5], party.bank_bik);
  field(keys[6], party.bank_corr_account);
}

/**
 * The key/value lines of one СекцияДокумент block for a statement operation, in order, from
 * `СекцияДокумент` up to (not including) `КонецДокумента`, given to `field` one by one (the
 * export encodes them as they come, without a list per document). Version 1.03 adds
 * КодНазПлатежа and Код (empty when null); 1.02 never writes them. Throws RangeError on bad input.
 */
export function writeStatementDocumentFields(
  op: StatementOperation,
  version: OneCVersion,
  field: OneCFieldSink,
): void {
  assertVersion(version);
  if (!Number.isSafeInteger(op.amount) || op.amount < 0) {
    throw new RangeError(`amount must be non-negative integer kopecks, got ${op.amount}`);
  }
  const date = isoToRu(op.doc_date);
  const v103 = version === "1.03";
  field("СекцияДокумент", ONEC_DOC_KINDS[op.doc_type]);
  field("Номер", op.doc_number);
  field("Дата", date);
  field("Сумма", formatKopecks(op.amount));
  field("ПлательщикСчет", op.payer.account);
  if (op.direction === "debit") field("ДатаСписано", date);
  writeParty("Плательщик", op.payer, field);
  field("ПолучательСчет", op.payee.account);
  if (op.direction === "credit") field("ДатаПоступило", date);
  writeParty("Получатель", op.payee, field);
  if (v103) field("КодНазПлатежа", op.purpose_code ?? "");
  field("ВидОплаты", ONEC_PAYMENT_KIND_CODES[op.doc_type]);
  if (v103) field("Код", op.uin ?? "");
  if (op.purpose.includes("\n") || op.purpose.includes("\r")) {
    for (const [key, value] of purposeFields(op.purpose)) field(key, value);
  } else {
    field("НазначениеПлатежа", op.purpose);
  }
  const budget = op.budget;
  if (budget) field("СтатусСоставителя", budget.originator_status ?? "");
  field("ПлательщикКПП", op.payer.kpp);
  field("ПолучательКПП", op.payee.kpp);
  if (budget) {
    field("ПоказательКБК", budget.kbk ?? "");
    field("ОКАТО", budget.oktmo ?? "");
    field("ПоказательОснования", budget.basis ?? "");
    field("ПоказательПериода", budget.period ?? "");
    field("ПоказательНомера", budget.number ?? "");
    field(
      "ПоказательДаты",
      budget.date && /^\d{4}-\d{2}-\d{2}$/.test(budget.date) ? isoToRu(budget.date) : (budget.date ?? ""),
    );
    field("ПоказательТипа", budget.type ?? "");
  }
  field("Очередность", op.priority ?? "");
}

/** `writeStatementDocumentFields` as a list of [key, value]. */
function statementDocumentFields(op: StatementOperation, version: OneCVersion): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  writeStatementDocumentFields(op, version, (key, value) => {
    out.push([key, value]);
  });
  return out;
}

export const DOCUMENT_END = `КонецДокумента${CRLF}`;

/** One СекцияДокумент…КонецДокумента block for a statement operation, as text. */
export function oneCStatementDocument(op: StatementOperation, version: OneCVersion): string {
  return statementDocumentFields(op, version)
    .map(([key, value]) => kv(key, value))
    .join("")
    .concat(DOCUMENT_END);
}

// cp1251 code of every UTF-16 unit; "?" for the ones cp1251 lacks (as iconv-lite does).

export function oneCStatementFooter(): string {
  return `КонецФайла${CRLF}`;
}

/** Whole file as one string, for small statements and tests; large ones should stream the parts. */
export function oneCStatement(meta: OneCStatementMeta, ops: Iterable<StatementOperation>): string {
  const parts = [oneCStatementHeader(meta)];
  for (const op of ops) parts.push(oneCStatementDocument(op, meta.version));
  parts.push(oneCStatementFooter());
  return parts.join("");
}

/** cp1251 bytes. Characters cp1251 lacks become "?" (one per UTF-16 unit, so an emoji gives "??"). */
