import { DOC_TYPES, type DocType, type OneCVersion } from "../types";

export const CRLF = "\r\n";
export const LINE_BREAK_RE = /\r\n|\r|\n/;
export const LINE_BREAKS_RE = /\r\n|\r|\n/g;

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

/** A party's keys in a document, in the format's order: name, ИНН, the first `nameLines` of the
 *  name lines (Плательщик1…4), the account and the bank. */
export const onecPartyKeys = (party: "Плательщик" | "Получатель", nameLines: number): string[] => [
  party,
  `${party}ИНН`,
  ...numbered(party, 1, nameLines),
  `${party}РасчСчет`,
  `${party}Банк1`,
  `${party}Банк2`,
  `${party}БИК`,
  `${party}Корсчет`,
];

/** Canonical order of document block keys (docs/format-1c.md); the writer follows it. */
export const ONEC_DOCUMENT_FIELD_ORDER: readonly string[] = [
  "Номер",
  "Дата",
  "Сумма",
  "КвитанцияДата",
  "КвитанцияВремя",
  "КвитанцияСодержание",
  "ПлательщикСчет",
  "ДатаСписано",
  ...onecPartyKeys("Плательщик", 4),
  "ПолучательСчет",
  "ДатаПоступило",
  ...onecPartyKeys("Получатель", 4),
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

export function oneCKindToDocType(kind: string): DocType | null {
  return DOC_TYPES.find((docType) => ONEC_DOC_KINDS[docType] === kind) ?? null;
}
