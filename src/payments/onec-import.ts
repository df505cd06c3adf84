// Reads a payment file sent TO the bank (1CClientBankExchange, cp1251 or cp866) into payment
// orders, enforcing the fields and checks of docs/format-1c.md for that direction. Every failure is a
// 400 validation_error naming the file line and the field.

import { type ApiError, validationError } from "../core/errors";
import { ruToIso } from "../formats/dates";
import { parseAmountToKopecks } from "../formats/money";
import {
  decodeOneC,
  ONEC_DOC_KINDS,
  type OneCDocument,
  type OneCFields,
  OneCParseError,
  onecPartyKeys,
  parseOneC,
  purposeFromFields,
  savedAsUtf8,
  UTF8_FILE_MESSAGE,
} from "../formats/onec";
import type { Party } from "../formats/types";
import {
  isValidAccountKey,
  isValidAccountNumber,
  isValidBik,
  isValidInn,
  isValidKpp,
} from "../formats/validators";

/** One payment order read from the file; amount in kopecks, dates YYYY-MM-DD. */
export interface ImportedPayment {
  /** Line of the document's `СекцияДокумент=`. */
  line: number;
  doc_number: string;
  doc_date: string;
  amount: number;
  purpose: string;
  priority: string | null;
  payer_account: string;
  /** Line of ПлательщикСчет, for the account_mismatch details. */
  payer_account_line: number;
  payee: Party;
}

export interface ImportedFile {
  /** Header РасчСчет and its line. */
  account: { value: string; line: number };
  payments: ImportedPayment[];
}

const REQUIRED_HEADER = ["ВерсияФормата", "Кодировка", "ДатаНачала", "ДатаКонца", "РасчСчет"] as const;

/** Required in every document of a file to the bank, in the canonical order of the format. */
const REQUIRED_DOCUMENT_FIELDS: readonly string[] = [
  "Номер",
  "Дата",
  "Сумма",
  "ПлательщикСчет",
  ...onecPartyKeys("Плательщик", 1),
  "ПолучательСчет",
  ...onecPartyKeys("Получатель", 1),
  "ВидОплаты",
];

const PAYMENT_ORDER_KIND = ONEC_DOC_KINDS.payment_order;

/** details.field is the file's key when one is to blame, else "file"; details.line is 1-based. */
function fileError(line: number, field: string | undefined, message: string): ApiError {
  return validationError(field ?? "file", message, { line });
}

function fieldError(line: number, key: string, message: string): ApiError {
  return fileError(line, key, `Строка ${line}, поле ${key}: ${message}`);
}

export function readPaymentFile(bytes: Uint8Array): ImportedFile {
  if (savedAsUtf8(bytes)) throw fileError(1, undefined, `Строка 1: ${UTF8_FILE_MESSAGE}`);
  let text: string;
  try {
    text = decodeOneC(bytes);
  } catch {
    throw fileError(1, undefined, "Файл не удалось прочитать в кодировке cp1251/cp866");
  }
  let parsed: ReturnType<typeof parseOneC>;
  try {
    parsed = parseOneC(text);
  } catch (e) {
    if (e instanceof OneCParseError) {
      throw fileError(
        e.line,
        e.field,
        `Строка ${e.line}: файл не соответствует формату 1CClientBankExchange (${e.message})`,
      );
    }
    throw e;
  }

  for (const key of REQUIRED_HEADER) {
    const field = parsed.header.get(key);
    if (field === undefined || field.value.trim() === "") {
      throw fieldError(field?.line ?? 1, key, "обязательное поле заголовка отсутствует или пусто");
    }
  }
  const version = parsed.header.get("ВерсияФормата")!;
  if (!["1.02", "1.03"].includes(version.value.trim())) {
    throw fieldError(version.line, "ВерсияФормата", "поддерживаются версии 1.02 и 1.03");
  }
  const encoding = parsed.header.get("Кодировка")!;
  if (!["Windows", "DOS"].includes(encoding.value.trim())) {
    throw fieldError(encoding.line, "Кодировка", "ожидается Windows или DOS");
  }
  for (const key of ["ДатаНачала", "ДатаКонца"]) {
    const field = parsed.header.get(key)!;
    if (ruToIso(field.value.trim()) === null) throw fieldError(field.line, key, "ожидается дата ДД.ММ.ГГГГ");
  }
  const account = parsed.header.get("РасчСчет")!;
  if (!isValidAccountNumber(account.value.trim())) {
    throw fieldError(account.line, "РасчСчет", "ожидается номер счёта из 20 цифр");
  }

  if (parsed.documents.length === 0) {
    throw fileError(
      parsed.endLine,
      "СекцияДокумент",
      `Строка ${parsed.endLine}: в файле нет платёжных поручений`,
    );
  }
  const payments = parsed.documents.map(readDocument);
  return { account: { value: account.value.trim(), line: account.line }, payments };
}

function readDocument(doc: OneCDocument): ImportedPayment {
  if (doc.kind !== PAYMENT_ORDER_KIND) {
    throw fieldError(doc.line, "СекцияДокумент", `принимаются только документы «${PAYMENT_ORDER_KIND}»`);
  }
  const f = doc.fields;
  for (const key of REQUIRED_DOCUMENT_FIELDS) {
    const field = f.get(key);
    if (field === undefined) throw fieldError(doc.line, key, "обязательное поле отсутствует в документе");
    if (field.value.trim() === "") throw fieldError(field.line, key, "обязательное поле пусто");
  }
  const v = (key: string) => f.get(key)!.value.trim();
  const lineOf = (key: string) => f.get(key)!.line;
  const fail = (key: string, message: string) => fieldError(lineOf(key), key, message);

  const docDate = ruToIso(v("Дата"));
  if (docDate === null) throw fail("Дата", "ожидается дата ДД.ММ.ГГГГ");
  const amount = parseAmountToKopecks(v("Сумма"));
  if (amount === null || amount <= 0) throw fail("Сумма", "ожидается положительная сумма вида 1234.50");
  if (v("ВидОплаты") !== "01") throw fail("ВидОплаты", "для платёжного поручения ожидается 01");

  for (const party of ["Плательщик", "Получатель"] as const) {
    const inn = `${party}ИНН`;
    if (!isValidInn(v(inn)))
      throw fail(inn, "неверный ИНН (10 или 12 цифр с верными контрольными разрядами)");
    const bik = `${party}БИК`;
    if (!isValidBik(v(bik))) throw fail(bik, "БИК должен состоять из 9 цифр");
    const corr = `${party}Корсчет`;
    if (!isValidAccountKey(v(corr), v(bik), { correspondent: true })) {
      throw fail(corr, "неверный корреспондентский счёт или его контрольный ключ для указанного БИК");
    }
    for (const key of [`${party}Счет`, `${party}РасчСчет`]) {
      if (!isValidAccountKey(v(key), v(bik))) {
        throw fail(key, "неверный номер счёта или его контрольный ключ для указанного БИК");
      }
    }
    const kpp = f.get(`${party}КПП`);
    if (
      kpp !== undefined &&
      kpp.value.trim() !== "" &&
      kpp.value.trim() !== "0" &&
      !isValidKpp(kpp.value.trim())
    ) {
      throw fieldError(kpp.line, `${party}КПП`, "неверный КПП");
    }
  }
  const priority = f.get("Очередность");
  if (priority !== undefined && priority.value.trim() !== "" && !/^[1-5]$/.test(priority.value.trim())) {
    throw fieldError(priority.line, "Очередность", "ожидается число от 1 до 5");
  }

  return {
    line: doc.line,
    doc_number: v("Номер"),
    doc_date: docDate,
    amount,
    purpose: purposeFromFields(f).trim(),
    priority: priority?.value.trim() || null,
    payer_account: v("ПлательщикСчет"),
    payer_account_line: lineOf("ПлательщикСчет"),
    payee: {
      name: v("Получатель1"),
      inn: v("ПолучательИНН"),
      kpp: textOf(f, "ПолучательКПП"),
      account: v("ПолучательСчет"),
      bank_name: v("ПолучательБанк1"),
      bank_bik: v("ПолучательБИК"),
      bank_corr_account: v("ПолучательКорсчет"),
    },
  };
}

function textOf(fields: OneCFields, key: string): string {
  return fields.get(key)?.value.trim() ?? "";
}
