// The 1C client-bank exchange format (1CClientBankExchange, versions 1.02 and 1.03); see
// format-1c.md. The writer returns text chunks with CRLF line ends that the caller encodes with
// encodeCp1251 and streams; the reader decodes, parses into blocks of key/value/line records and
// maps statement documents back to operations.

import iconv from "iconv-lite";
import { isoToRu, isValidTime, ruToIso } from "./dates";
import { formatKopecks, parseAmountToKopecks, parseSignedAmountToKopecks } from "./money";
import {
  DOC_TYPES,
  type DocType,
  type OneCVersion,
  type OperationDirection,
  type Party,
  type StatementOperation,
} from "./types";

const CRLF = "\r\n";
const LINE_BREAK_RE = /\r\n|\r|\n/;
const LINE_BREAKS_RE = /\r\n|\r|\n/g;

export const ONEC_FIRST_LINE = "1CClientBankExchange";
export const ONEC_VERSIONS: readonly OneCVersion[] = ["1.02", "1.03"];

/** 1C section names (СекцияДокумент=…) per doc type. */
export const ONEC_DOC_KINDS: Readonly<Record<DocType, string>> = {
  payment_order: "Платежное поручение",
  payment_request: "Платежное требование",
  collection_order: "Инкассовое поручение",
  payment_warrant: "Платежный ордер",
  bank_order: "Банковский ордер",
  memorial_order: "Мемориальный ордер",
};

/** ВидОплаты codes per doc type. */
export const ONEC_PAYMENT_KIND_CODES: Readonly<Record<DocType, string>> = {
  payment_order: "01",
  payment_request: "02",
  collection_order: "06",
  payment_warrant: "16",
  bank_order: "17",
  memorial_order: "09",
};

/** Every document kind the format defines; a letter of credit has no DocType of ours. */
export const ONEC_KNOWN_KINDS: readonly string[] = [...Object.values(ONEC_DOC_KINDS), "Аккредитив"];

const numbered = (base: string, from: number, to: number): string[] =>
  Array.from({ length: to - from + 1 }, (_, i) => `${base}${from + i}`);

/** Canonical order of document block keys (format-1c.md); the writer follows it. */
export const ONEC_DOCUMENT_FIELD_ORDER: readonly string[] = [
  "Номер",
  "Дата",
  "Сумма",
  "КвитанцияДата",
  "КвитанцияВремя",
  "КвитанцияСодержание",
  "ПлательщикСчет",
  "ДатаСписано",
  "Плательщик",
  "ПлательщикИНН",
  ...numbered("Плательщик", 1, 4),
  "ПлательщикРасчСчет",
  "ПлательщикБанк1",
  "ПлательщикБанк2",
  "ПлательщикБИК",
  "ПлательщикКорсчет",
  "ПолучательСчет",
  "ДатаПоступило",
  "Получатель",
  "ПолучательИНН",
  ...numbered("Получатель", 1, 4),
  "ПолучательРасчСчет",
  "ПолучательБанк1",
  "ПолучательБанк2",
  "ПолучательБИК",
  "ПолучательКорсчет",
  "ВидПлатежа",
  "КодНазПлатежа",
  "ВидОплаты",
  "Код",
  "НазначениеПлатежа",
  ...numbered("НазначениеПлатежа", 1, 6),
  "СтатусСоставителя",
  "ПлательщикКПП",
  "ПолучательКПП",
  "ПоказательКБК",
  "ОКАТО",
  "ПоказательОснования",
  "ПоказательПериода",
  "ПоказательНомера",
  "ПоказательДаты",
  "ПоказательТипа",
  "Очередность",
  "СрокАкцепта",
  "ВидАккредитива",
  "СрокПлатежа",
  ...numbered("УсловиеОплаты", 1, 3),
  "ПлатежПоПредст",
  "ДополнУсловия",
  "НомерСчетаПоставщика",
  "ДатаОтсылкиДок",
];

export function docTypeToOneCKind(docType: DocType): string {
  return ONEC_DOC_KINDS[docType];
}

export function oneCKindToDocType(kind: string): DocType | null {
  return DOC_TYPES.find((docType) => ONEC_DOC_KINDS[docType] === kind) ?? null;
}

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
  field("ПлательщикКПП", op.payer.kpp);
  field("ПолучательКПП", op.payee.kpp);
  field("Очередность", op.priority ?? "");
}

/** `writeStatementDocumentFields` as a list of [key, value]. */
export function statementDocumentFields(
  op: StatementOperation,
  version: OneCVersion,
): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  writeStatementDocumentFields(op, version, (key, value) => {
    out.push([key, value]);
  });
  return out;
}

const DOCUMENT_END = `КонецДокумента${CRLF}`;

/** One СекцияДокумент…КонецДокумента block for a statement operation, as text. */
export function oneCStatementDocument(op: StatementOperation, version: OneCVersion): string {
  return statementDocumentFields(op, version)
    .map(([key, value]) => kv(key, value))
    .join("")
    .concat(DOCUMENT_END);
}

// cp1251 code of every UTF-16 unit; "?" for the ones cp1251 lacks (as iconv-lite does).
const CP1251 = (() => {
  const table = new Uint8Array(65536).fill(0x3f);
  const chars = iconv.decode(Buffer.from(Array.from({ length: 256 }, (_, i) => i)), "win1251");
  for (let byte = 0; byte < 256; byte++) {
    const unit = chars.charCodeAt(byte);
    if (chars[byte] !== "\ufffd") table[unit] = byte;
  }
  return table;
})();

// 1 for the two units that end a line (a CR or LF inside a value is not copied as is).
const LINE_BREAK_UNITS = (() => {
  const table = new Uint8Array(65536);
  table[10] = 1;
  table[13] = 1;
  return table;
})();

/**
 * Statement documents written straight into cp1251 bytes: the same bytes as
 * `encodeCp1251(oneCStatementDocument(op, version))`, without building the text first (the
 * export's hot path). Line breaks inside a value become one space, as in the text writer.
 */
export class OneCDocumentEncoder {
  private buf = new Uint8Array(1 << 16);
  private len = 0;
  // Where documents written later go (keepPlace/takeWith).
  private readonly places: number[] = [];
  private readonly keys = new Map<string, Uint8Array>();
  private readonly end = iconv.encode(DOCUMENT_END, "win1251");
  private readonly field: OneCFieldSink = (key, value) => this.write(key, value);

  constructor(private readonly version: OneCVersion) {}

  document(op: StatementOperation): void {
    writeStatementDocumentFields(op, this.version, this.field);
    this.ensure(this.end.length);
    this.buf.set(this.end, this.len);
    this.len += this.end.length;
  }

  /**
   * A document already laid out as text (`lines` lines, each ending in CRLF, `КонецДокумента`
   * included), as the export reads it from SQLite. Writes it and returns true when its only line
   * breaks are those CRLFs. Otherwise writes nothing and returns false: a value holds a line
   * break, which `document` writes differently (a space; a multi-line purpose also as
   * НазначениеПлатежа1..6).
   */
  laidOut(text: string, lines: number): boolean {
    const n = text.length;
    this.ensure(n);
    const buf = this.buf;
    const start = this.len;
    let len = start;
    let breaks = 0;
    for (let i = 0; i < n; i++) {
      const unit = text.charCodeAt(i);
      breaks += LINE_BREAK_UNITS[unit]!;
      buf[len++] = CP1251[unit]!;
    }
    if (breaks !== 2 * lines) return false;
    this.len = len;
    return true;
  }

  /** Keeps the place of a document that `takeWith` will write, in order: one `laidOut` refused. */
  keepPlace(): void {
    this.places.push(this.len);
  }

  /** The bytes written since the last call. */
  take(): Uint8Array {
    if (this.places.length > 0) throw new Error("places kept: use takeWith");
    const out = this.buf.slice(0, this.len);
    this.len = 0;
    return out;
  }

  /**
   * The bytes written since the last call, with the documents of `ops` written by `document`
   * at the places kept, in order, and nothing copied twice: they are written after the rest, then
   * all is copied once into the result.
   */
  takeWith(ops: StatementOperation[]): Uint8Array {
    if (ops.length !== this.places.length)
      throw new Error(`${this.places.length} places kept, ${ops.length} given`);
    const end = this.len;
    const starts = ops.map((op) => {
      const start = this.len;
      this.document(op);
      return start;
    });
    const out = new Uint8Array(this.len);
    let written = 0;
    let from = 0;
    this.places.forEach((place, i) => {
      out.set(this.buf.subarray(from, place), written);
      written += place - from;
      from = place;
      const docEnd = i + 1 < starts.length ? starts[i + 1]! : this.len;
      out.set(this.buf.subarray(starts[i]!, docEnd), written);
      written += docEnd - starts[i]!;
    });
    out.set(this.buf.subarray(from, end), written);
    this.places.length = 0;
    this.len = 0;
    return out;
  }

  private write(key: string, value: string): void {
    let keyBytes = this.keys.get(key);
    if (!keyBytes) {
      keyBytes = iconv.encode(`${key}=`, "win1251");
      this.keys.set(key, keyBytes);
    }
    this.ensure(keyBytes.length + value.length + 2);
    const buf = this.buf;
    buf.set(keyBytes, this.len);
    let len = this.len + keyBytes.length;
    const n = value.length;
    for (let i = 0; i < n; i++) {
      const unit = value.charCodeAt(i);
      if (unit >= 0x80) buf[len++] = CP1251[unit]!;
      else if (unit !== 13 && unit !== 10) buf[len++] = unit;
      else {
        if (unit === 13 && value.charCodeAt(i + 1) === 10) i++;
        buf[len++] = 0x20;
      }
    }
    buf[len++] = 13;
    buf[len++] = 10;
    this.len = len;
  }

  private ensure(extra: number): void {
    if (this.len + extra <= this.buf.length) return;
    const grown = new Uint8Array(Math.max(this.buf.length * 2, this.len + extra));
    grown.set(this.buf.subarray(0, this.len));
    this.buf = grown;
  }
}

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
export function encodeCp1251(text: string): Uint8Array {
  return iconv.encode(text, "win1251");
}

// ---------------------------------------------------------------------------------------------
// Reader

export interface OneCField {
  value: string;
  /** 1-based line number where the key appeared. */
  line: number;
}

/** Keys in file order. */
export type OneCFields = ReadonlyMap<string, OneCField>;

export interface OneCAccountSection {
  /** Line of `СекцияРасчСчет`. */
  line: number;
  /** Line of `КонецРасчСчет`. */
  endLine: number;
  fields: OneCFields;
}

export interface OneCDocument {
  /** The 1C section name, e.g. "Платежное поручение". */
  kind: string;
  /** null for a kind we have no DocType for (Аккредитив). */
  docType: DocType | null;
  /** Line of `СекцияДокумент=`. */
  line: number;
  /** Line of `КонецДокумента`. */
  endLine: number;
  fields: OneCFields;
}

export interface OneCFile {
  /** Header keys other than the repeatable Документ. */
  header: OneCFields;
  /** The `Документ=` header lines in order. */
  documentKinds: OneCField[];
  accounts: OneCAccountSection[];
  documents: OneCDocument[];
  /** Line of `КонецФайла`. */
  endLine: number;
}

export class OneCParseError extends Error {
  /** 1-based line the problem is reported at. */
  readonly line: number;
  readonly field: string | undefined;

  constructor(line: number, message: string, field?: string) {
    super(`line ${line}: ${message}`);
    this.name = "OneCParseError";
    this.line = line;
    this.field = field;
  }
}

/** Header lines before the first section; enough to find `Кодировка=`. */
function hasEncodingKey(text: string): boolean {
  for (const line of text.split(LINE_BREAK_RE)) {
    if (line.startsWith("Секция")) return false;
    if (line.startsWith("Кодировка=")) return true;
  }
  return false;
}

const ENCODING_SNIFF_BYTES = 64 * 1024;

/**
 * Bytes → text. `Кодировка=Windows` means cp1251, `DOS` means cp866, but the key itself is
 * Cyrillic and so encoded differently in the two: the file's encoding is the one in which the
 * `Кодировка=` key reads correctly. Falls back to cp1251 when neither does.
 */
export function decodeOneC(bytes: Uint8Array): string {
  return iconv.decode(bytes, oneCEncoding(bytes));
}

/** The encoding the file is written in, judged as `decodeOneC` does (not what it declares). */
export function oneCEncoding(bytes: Uint8Array): "win1251" | "cp866" {
  const head = bytes.subarray(0, ENCODING_SNIFF_BYTES);
  if (!hasEncodingKey(iconv.decode(head, "win1251")) && hasEncodingKey(iconv.decode(head, "cp866"))) {
    return "cp866";
  }
  return "win1251";
}

interface OpenBlock {
  type: "account" | "document";
  kind: string;
  line: number;
  fields: Map<string, OneCField>;
}

function unterminated(block: OpenBlock): OneCParseError {
  return block.type === "account"
    ? new OneCParseError(block.line, "СекцияРасчСчет is not closed by КонецРасчСчет", "СекцияРасчСчет")
    : new OneCParseError(block.line, "СекцияДокумент is not closed by КонецДокумента", "СекцияДокумент");
}

/**
 * Parses exchange-file text (CRLF or LF). Blank lines are skipped; keys are trimmed, values are
 * kept as written and split on the first "=" only. Throws OneCParseError.
 */
export function parseOneC(text: string): OneCFile {
  const lines = text.split(/\r?\n/);
  if (lines.length > 1 && lines[lines.length - 1] === "") lines.pop();
  if ((lines[0] ?? "").replace(/^\uFEFF/, "").trim() !== ONEC_FIRST_LINE) {
    throw new OneCParseError(1, `the first line must be ${ONEC_FIRST_LINE}`);
  }
  const header = new Map<string, OneCField>();
  const documentKinds: OneCField[] = [];
  const accounts: OneCAccountSection[] = [];
  const documents: OneCDocument[] = [];
  let open: OpenBlock | null = null;

  for (let i = 1; i < lines.length; i++) {
    const lineNo = i + 1;
    const raw = lines[i]!;
    if (raw.trim() === "") continue;
    const eq = raw.indexOf("=");

    if (eq < 0) {
      const marker = raw.trim();
      if (marker === "СекцияРасчСчет") {
        if (open !== null) throw unterminated(open);
        open = { type: "account", kind: "", line: lineNo, fields: new Map() };
      } else if (marker === "КонецРасчСчет" || marker === "КонецДокумента") {
        const type = marker === "КонецРасчСчет" ? "account" : "document";
        if (open === null) throw new OneCParseError(lineNo, `${marker} without a matching section start`);
        if (open.type !== type) throw unterminated(open);
        if (open.type === "account") {
          accounts.push({ line: open.line, endLine: lineNo, fields: open.fields });
        } else {
          const docType = oneCKindToDocType(open.kind);
          documents.push({ kind: open.kind, docType, line: open.line, endLine: lineNo, fields: open.fields });
        }
        open = null;
      } else if (marker === "КонецФайла") {
        if (open !== null) throw unterminated(open);
        for (let j = i + 1; j < lines.length; j++) {
          if (lines[j]!.trim() !== "") throw new OneCParseError(j + 1, "content after КонецФайла");
        }
        return { header, documentKinds, accounts, documents, endLine: lineNo };
      } else {
        throw new OneCParseError(lineNo, 'expected "key=value" or a section marker');
      }
      continue;
    }

    const key = raw.slice(0, eq).trim();
    const value = raw.slice(eq + 1);
    if (key === "") throw new OneCParseError(lineNo, "empty key before '='");
    if (key === "СекцияДокумент") {
      if (open !== null) throw unterminated(open);
      const kind = value.trim();
      if (!ONEC_KNOWN_KINDS.includes(kind)) {
        throw new OneCParseError(lineNo, `unknown document kind "${kind}"`, key);
      }
      open = { type: "document", kind, line: lineNo, fields: new Map() };
      continue;
    }
    if (open === null && key === "Документ") {
      documentKinds.push({ value, line: lineNo });
      continue;
    }
    const target = open === null ? header : open.fields;
    const previous = target.get(key);
    if (previous !== undefined) {
      throw new OneCParseError(lineNo, `duplicate key ${key} (first at line ${previous.line})`, key);
    }
    target.set(key, { value, line: lineNo });
  }

  if (open !== null) throw unterminated(open);
  throw new OneCParseError(lines.length, "missing КонецФайла");
}

/**
 * The purpose text of a document: the НазначениеПлатежа1..6 lines joined with "\n" when they are
 * the line-split form of НазначениеПлатежа (or it is absent/empty), otherwise НазначениеПлатежа.
 */
export function purposeFromFields(fields: OneCFields): string {
  const single = fields.get("НазначениеПлатежа")?.value ?? "";
  const parts: string[] = [];
  for (let i = 1; i <= 6; i++) {
    const part = fields.get(`НазначениеПлатежа${i}`);
    if (part !== undefined) parts.push(part.value);
  }
  if (parts.length === 0) return single;
  if (single === "" || parts.join(" ") === single) return parts.join("\n");
  return single;
}

/** A statement operation as far as a 1C document describes it (no bank operation id). */
export type OneCOperation = Omit<StatementOperation, "operation_id">;

function textOf(fields: OneCFields, key: string): string {
  return fields.get(key)?.value ?? "";
}

function nullIfEmpty(value: string): string | null {
  return value === "" ? null : value;
}

/**
 * The party's name. `Плательщик1` holds it; a bank that splits a long name over `Плательщик1..4`
 * is recognised by the composite `Плательщик` ("ИНН … name") reading as those lines joined, which
 * tells them apart from the standard's other use of lines 2–4 (account, bank and city of an
 * indirect payment).
 */
function partyName(fields: OneCFields, prefix: "Плательщик" | "Получатель"): string {
  const composite = textOf(fields, prefix)
    .replace(/^ИНН\s*\d*\s*/, "")
    .trim();
  const lines: string[] = [];
  for (let i = 1; i <= 4; i++) {
    const line = fields.get(`${prefix}${i}`);
    if (line === undefined) break;
    lines.push(line.value);
  }
  if (lines.length === 0) return composite;
  // Split anywhere (mid-word: joined as written) or between words (joined with a space).
  for (let n = lines.length; n > 1; n--) {
    const parts = lines.slice(0, n);
    if (
      composite !== "" &&
      (parts.join("").trim() === composite || parts.map((l) => l.trim()).join(" ") === composite)
    ) {
      return composite;
    }
  }
  return lines[0]?.trim() || composite;
}

function partyFromFields(fields: OneCFields, prefix: "Плательщик" | "Получатель"): Party {
  const name = partyName(fields, prefix);
  return {
    name,
    inn: textOf(fields, `${prefix}ИНН`),
    kpp: textOf(fields, `${prefix}КПП`),
    account: textOf(fields, `${prefix}Счет`) || textOf(fields, `${prefix}РасчСчет`),
    bank_name: textOf(fields, `${prefix}Банк1`),
    bank_bik: textOf(fields, `${prefix}БИК`),
    bank_corr_account: textOf(fields, `${prefix}Корсчет`),
  };
}

function requiredField(doc: OneCDocument, key: string): OneCField {
  const field = doc.fields.get(key);
  if (field === undefined) throw new OneCParseError(doc.line, `${key} is missing`, key);
  return field;
}

/**
 * Maps a statement document back to an operation. Direction: with accountNumber, debit when it
 * is the payer's account and credit when it is the payee's; without it, from ДатаСписано /
 * ДатаПоступило. Empty Код, КодНазПлатежа and Очередность become null. Throws OneCParseError
 * when Сумма, Дата, the kind or the direction cannot be read.
 */
export function documentToOperation(
  doc: OneCDocument,
  accountNumber?: string,
  currency = "RUB",
): OneCOperation {
  if (doc.docType === null) {
    throw new OneCParseError(doc.line, `document kind "${doc.kind}" is not supported`, "СекцияДокумент");
  }
  const amountField = requiredField(doc, "Сумма");
  const amount = parseAmountToKopecks(amountField.value);
  if (amount === null) throw new OneCParseError(amountField.line, "Сумма is not a valid amount", "Сумма");
  const dateField = requiredField(doc, "Дата");
  const docDate = ruToIso(dateField.value);
  if (docDate === null)
    throw new OneCParseError(dateField.line, "Дата is not a valid dd.MM.yyyy date", "Дата");

  const payer = partyFromFields(doc.fields, "Плательщик");
  const payee = partyFromFields(doc.fields, "Получатель");
  let direction: OperationDirection;
  if (accountNumber !== undefined) {
    if (payer.account === accountNumber) direction = "debit";
    else if (payee.account === accountNumber) direction = "credit";
    else throw new OneCParseError(doc.line, `neither payer nor payee account is ${accountNumber}`);
  } else if (textOf(doc.fields, "ДатаСписано") !== "") {
    direction = "debit";
  } else if (textOf(doc.fields, "ДатаПоступило") !== "") {
    direction = "credit";
  } else {
    throw new OneCParseError(doc.line, "direction unknown: neither ДатаСписано nor ДатаПоступило is set");
  }

  return {
    direction,
    doc_type: doc.docType,
    doc_number: textOf(doc.fields, "Номер"),
    doc_date: docDate,
    amount,
    currency,
    purpose: purposeFromFields(doc.fields),
    payer,
    payee,
    uin: nullIfEmpty(textOf(doc.fields, "Код")),
    purpose_code: nullIfEmpty(textOf(doc.fields, "КодНазПлатежа")),
    priority: nullIfEmpty(textOf(doc.fields, "Очередность")),
  };
}

export interface OneCAccountBalances {
  accountNumber: string;
  /** YYYY-MM-DD, null when absent. */
  dateFrom: string | null;
  dateTo: string | null;
  /** Kopecks (balances may be negative), null when absent. */
  openingBalance: number | null;
  totalCredit: number | null;
  totalDebit: number | null;
  closingBalance: number | null;
}

/** Reads a СекцияРасчСчет block; throws OneCParseError on a present but malformed date or amount. */
export function accountSectionBalances(section: OneCAccountSection): OneCAccountBalances {
  const date = (key: string): string | null => {
    const field = section.fields.get(key);
    if (field === undefined) return null;
    const iso = ruToIso(field.value);
    if (iso === null) throw new OneCParseError(field.line, `${key} is not a valid dd.MM.yyyy date`, key);
    return iso;
  };
  const amount = (key: string): number | null => {
    const field = section.fields.get(key);
    if (field === undefined) return null;
    const k = parseSignedAmountToKopecks(field.value);
    if (k === null) throw new OneCParseError(field.line, `${key} is not a valid amount`, key);
    return k;
  };
  return {
    accountNumber: textOf(section.fields, "РасчСчет"),
    dateFrom: date("ДатаНачала"),
    dateTo: date("ДатаКонца"),
    openingBalance: amount("НачальныйОстаток"),
    totalCredit: amount("ВсегоПоступило"),
    totalDebit: amount("ВсегоСписано"),
    closingBalance: amount("КонечныйОстаток"),
  };
}
