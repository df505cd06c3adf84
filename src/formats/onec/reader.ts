// Exchange files read back: decoded (cp1251 or cp866), parsed into blocks with line numbers, and
// statement documents mapped to operations.
import iconv from "iconv-lite";
import { ruToIso } from "../dates";
import { parseAmountToKopecks, parseSignedAmountToKopecks } from "../money";
import type { DocType, OperationDirection, Party, StatementOperation } from "../types";
import { LINE_BREAK_RE, ONEC_FIRST_LINE, ONEC_KNOWN_KINDS, oneCKindToDocType } from "./fields";

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

/** What a reader is told of a file saved as UTF-8: the format knows cp1251 and cp866 only. */
export const UTF8_FILE_MESSAGE =
  "файл сохранён в кодировке UTF-8, а формат 1C (1CClientBankExchange) читается только в Windows-1251 " +
  "(Кодировка=Windows) или DOS cp866 (Кодировка=DOS): выгрузите файл из банка заново или сохраните его в Windows-1251";

/**
 * Whether the file was saved as UTF-8 (a text editor's default): a byte order mark, or Cyrillic
 * written as valid UTF-8 sequences. cp1251 and cp866 Cyrillic text is practically never valid UTF-8.
 */
export function savedAsUtf8(bytes: Uint8Array): boolean {
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return true;
  const head = bytes.subarray(0, ENCODING_SNIFF_BYTES);
  if (!head.some((b) => b >= 0x80)) return false;
  try {
    // A sequence cut at the end of the head is not an error (stream).
    new TextDecoder("utf-8", { fatal: true }).decode(head, { stream: true });
    return true;
  } catch {
    return false;
  }
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
    // No field of a bank's file holds one, and PostgreSQL's text cannot.
    if (raw.includes("\0")) throw new OneCParseError(lineNo, "a NUL character (0x00) in the line");
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
