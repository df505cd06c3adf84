// A bank's own 1C statement file (kl_to_1c.txt) read into one account's statement: its period,
// balances and operations, every figure checked before anything is stored. The parsing is the
// one 1C codec of formats/onec (the payment upload and the export use it too); this module adds
// the rules of a statement: the account's section, balances that add up, the account's documents.
import { createHash } from "node:crypto";
import { ApiError, validationError } from "../core/errors";
import { ruToIso } from "../formats/dates";
import { addKopecks, closingKopecks, formatKopecks } from "../formats/money";
import {
  accountSectionBalances,
  decodeOneC,
  documentToOperation,
  type OneCAccountSection,
  type OneCDocument,
  type OneCFile,
  OneCParseError,
  oneCEncoding,
  parseOneC,
  savedAsUtf8,
  UTF8_FILE_MESSAGE,
} from "../formats/onec";
import type { StatementOperation } from "../formats/types";

export interface StatementFile {
  date_from: string;
  date_to: string;
  opening_balance: number;
  closing_balance: number;
  total_credit: number;
  total_debit: number;
  operations: StatementOperation[];
  /** Documents of other accounts in the same file, left out. */
  skipped: number;
  /** SHA-256 of the file's bytes: the same external_id with other bytes is a conflict. */
  sha256: string;
}

/** 400 validation_error naming the line (the spec's answer to a file that is not a valid exchange file). */
function badFile(line: number, message: string, field?: string): ApiError {
  return validationError("file", `Строка ${line}: ${message}`, { line, ...(field ? { key: field } : {}) });
}

/** 422 validation_error naming the line: the file is well formed but its figures do not add up. */
function doesNotAddUp(line: number, message: string): ApiError {
  return new ApiError(
    "validation_error",
    `Строка ${line}: ${message}`,
    { field: "file", line },
    undefined,
    422,
  );
}

const DECLARED: Record<string, "win1251" | "cp866"> = { windows: "win1251", dos: "cp866" };
const ENCODING_NAMES = { win1251: "Windows (cp1251)", cp866: "DOS (cp866)" };

function parse(bytes: Uint8Array): OneCFile {
  if (savedAsUtf8(bytes)) throw badFile(1, UTF8_FILE_MESSAGE, "Кодировка");
  try {
    const file = parseOneC(decodeOneC(bytes));
    const declared = file.header.get("Кодировка");
    const actual = oneCEncoding(bytes);
    if (declared !== undefined) {
      const wanted = DECLARED[declared.value.trim().toLowerCase()];
      if (wanted === undefined) {
        throw badFile(declared.line, `Кодировка=${declared.value}: ожидается Windows или DOS`, "Кодировка");
      }
      if (wanted !== actual) {
        throw badFile(
          declared.line,
          `файл объявляет Кодировка=${declared.value.trim()}, но записан в кодировке ${ENCODING_NAMES[actual]}`,
          "Кодировка",
        );
      }
    }
    const version = file.header.get("ВерсияФормата");
    if (version !== undefined && !["1.02", "1.03"].includes(version.value.trim())) {
      throw badFile(
        version.line,
        `ВерсияФормата=${version.value}: поддерживаются 1.02 и 1.03`,
        "ВерсияФормата",
      );
    }
    return file;
  } catch (e) {
    if (e instanceof OneCParseError) throw badFile(e.line, e.message.replace(/^line \d+: /, ""), e.field);
    throw e;
  }
}

/** A document of the account: it is the payer's or the payee's. */
function accountOf(doc: OneCDocument): { payer: string; payee: string } {
  const get = (key: string) => doc.fields.get(key)?.value.trim() ?? "";
  return {
    payer: get("ПлательщикСчет") || get("ПлательщикРасчСчет"),
    payee: get("ПолучательСчет") || get("ПолучательРасчСчет"),
  };
}

/**
 * A stable id for an operation that a file gives none: its fields, and which occurrence of those
 * fields it is in the file. The same document in two overlapping files gets the same id, so it is
 * stored once; two identical documents in one file stay two operations.
 */
function operationId(
  accountNumber: string,
  op: Omit<StatementOperation, "operation_id">,
  seen: Map<string, number>,
) {
  const key = JSON.stringify([
    accountNumber,
    op.direction,
    op.doc_type,
    op.doc_number,
    op.doc_date,
    op.amount,
    op.payer.inn,
    op.payer.account,
    op.payee.inn,
    op.payee.account,
    op.purpose,
  ]);
  const n = (seen.get(key) ?? 0) + 1;
  seen.set(key, n);
  return `1c-${createHash("sha256").update(`${key}#${n}`).digest("hex").slice(0, 32)}`;
}

/** A period date: the account section's, else the header's. */
function dateOf(file: OneCFile, section: OneCAccountSection | null, key: "ДатаНачала" | "ДатаКонца") {
  const field = section?.fields.get(key) ?? file.header.get(key);
  if (field === undefined) throw badFile(section?.line ?? 1, `нет ${key}: период выписки неизвестен`, key);
  const iso = ruToIso(field.value.trim());
  if (iso === null) throw badFile(field.line, `${key} не дата dd.MM.yyyy`, key);
  return { iso, line: field.line };
}

/** Reads `bytes` as the statement of `accountNumber`; throws the API's errors for a bad file. */
export function readStatementFile(bytes: Uint8Array, accountNumber: string, currency: string): StatementFile {
  const file = parse(bytes);
  const section = file.accounts.find((a) => a.fields.get("РасчСчет")?.value.trim() === accountNumber) ?? null;
  if (section === null) {
    const named = [
      ...file.accounts.map((a) => a.fields.get("РасчСчет")?.value.trim() ?? ""),
      file.header.get("РасчСчет")?.value.trim() ?? "",
    ].filter((n) => n !== "");
    if (file.accounts.length > 0 || !named.includes(accountNumber)) {
      throw new ApiError("account_mismatch", "В файле нет выписки по этому счёту", {
        field: "file",
        accounts_in_file: [...new Set(named)].map((n) => `${n.slice(0, 4)}${"*".repeat(12)}${n.slice(-4)}`),
      });
    }
  }
  const from = dateOf(file, section, "ДатаНачала");
  const to = dateOf(file, section, "ДатаКонца");
  if (from.iso > to.iso) throw badFile(from.line, "ДатаНачала позже ДатаКонца", "ДатаНачала");

  const operations: StatementOperation[] = [];
  const seen = new Map<string, number>();
  let skipped = 0;
  let credit = 0;
  let debit = 0;
  for (const doc of file.documents) {
    const { payer, payee } = accountOf(doc);
    if (payer !== accountNumber && payee !== accountNumber) {
      skipped += 1;
      continue;
    }
    let op: Omit<StatementOperation, "operation_id">;
    try {
      op = documentToOperation(doc, accountNumber, currency);
    } catch (e) {
      if (e instanceof OneCParseError) throw badFile(e.line, e.message.replace(/^line \d+: /, ""), e.field);
      throw e;
    }
    // A total beyond the safe integers of kopecks is refused like an amount that is.
    const total = addKopecks(op.direction === "credit" ? credit : debit, op.amount);
    if (total === null)
      throw badFile(doc.fields.get("Сумма")?.line ?? doc.line, "сумма документов слишком велика", "Сумма");
    if (op.direction === "credit") credit = total;
    else debit = total;
    operations.push({ operation_id: operationId(accountNumber, op, seen), ...op });
  }

  let balances: ReturnType<typeof accountSectionBalances> | null = null;
  if (section !== null) {
    try {
      balances = accountSectionBalances(section);
    } catch (e) {
      if (e instanceof OneCParseError) throw badFile(e.line, e.message.replace(/^line \d+: /, ""), e.field);
      throw e;
    }
  }
  const line = (key: string) => section?.fields.get(key)?.line ?? section?.line ?? 1;
  if (balances === null || balances.openingBalance === null) {
    throw badFile(
      section?.line ?? 1,
      "нет НачальныйОстаток в СекцияРасчСчет этого счёта",
      "НачальныйОстаток",
    );
  }
  const opening = balances.openingBalance;
  if (balances.totalCredit !== null && balances.totalCredit !== credit) {
    throw doesNotAddUp(
      line("ВсегоПоступило"),
      `ВсегоПоступило=${formatKopecks(balances.totalCredit)}, а документы поступления дают ${formatKopecks(credit)}`,
    );
  }
  if (balances.totalDebit !== null && balances.totalDebit !== debit) {
    throw doesNotAddUp(
      line("ВсегоСписано"),
      `ВсегоСписано=${formatKopecks(balances.totalDebit)}, а документы списания дают ${formatKopecks(debit)}`,
    );
  }
  const closing = closingKopecks(opening, credit, debit);
  if (closing === null) {
    throw badFile(
      line("НачальныйОстаток"),
      "НачальныйОстаток + поступления − списания слишком велики",
      "НачальныйОстаток",
    );
  }
  if (balances.closingBalance !== null && balances.closingBalance !== closing) {
    throw doesNotAddUp(
      line("КонечныйОстаток"),
      `КонечныйОстаток=${formatKopecks(balances.closingBalance)}, а НачальныйОстаток + поступления − списания = ${formatKopecks(closing)}`,
    );
  }
  return {
    date_from: from.iso,
    date_to: to.iso,
    opening_balance: opening,
    closing_balance: closing,
    total_credit: credit,
    total_debit: debit,
    operations,
    skipped,
    sha256: createHash("sha256").update(bytes).digest("hex"),
  };
}
