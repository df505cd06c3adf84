// Shared builders for the payment tests: 1C payment files to the bank, multipart uploads, and a
// check that no bank reference or signing URL leaks into a response body.
import { expect } from "bun:test";
import { encodeCp1251 } from "../../src/formats/onec";
import { completeInn10, withAccountKey } from "../../src/formats/validators";
import { BASE, type TestApp } from "../helpers/app";

const PAYER_BIK = "044525225";
const PAYER_CORR = "30101810400000000225";
const PAYER_INN = completeInn10("771961746");
export const PAYEE_BIK = "044525593";
const PAYEE_CORR = "30101810200000000593";
export const PAYEE_INN = completeInn10("770708389");
export const PAYEE_ACCOUNT = withAccountKey("40702810001300012345", PAYEE_BIK);

export interface DocOptions {
  number?: string;
  amount?: string;
  payerAccount?: string;
  /** Field values to replace (or add). */
  set?: Record<string, string>;
  /** Keys to leave out. */
  omit?: string[];
}

/** One Платежное поручение block as lines, every field required in files to the bank present. */
function documentLines(payerAccount: string, o: DocOptions = {}): string[] {
  const account = o.payerAccount ?? payerAccount;
  const fields: [string, string][] = [
    ["Номер", o.number ?? "101"],
    ["Дата", "19.11.2026"],
    ["Сумма", o.amount ?? "1500.00"],
    ["ПлательщикСчет", account],
    ["Плательщик", `ИНН ${PAYER_INN} ООО "Ромашка"`],
    ["ПлательщикИНН", PAYER_INN],
    ["Плательщик1", 'ООО "Ромашка"'],
    ["ПлательщикРасчСчет", account],
    ["ПлательщикБанк1", "ПАО Сбербанк"],
    ["ПлательщикБанк2", "г. Москва"],
    ["ПлательщикБИК", PAYER_BIK],
    ["ПлательщикКорсчет", PAYER_CORR],
    ["ПолучательСчет", PAYEE_ACCOUNT],
    ["Получатель", `ИНН ${PAYEE_INN} АО «Поставщик»`],
    ["ПолучательИНН", PAYEE_INN],
    ["Получатель1", "АО «Поставщик»"],
    ["ПолучательРасчСчет", PAYEE_ACCOUNT],
    ["ПолучательБанк1", 'АО "АЛЬФА-БАНК"'],
    ["ПолучательБанк2", "г. Москва"],
    ["ПолучательБИК", PAYEE_BIK],
    ["ПолучательКорсчет", PAYEE_CORR],
    ["ВидОплаты", "01"],
    ["НазначениеПлатежа", `Оплата по счёту № ${o.number ?? "101"} за товары. НДС не облагается`],
    ["ПлательщикКПП", "771901001"],
    ["ПолучательКПП", "773601001"],
    ["Очередность", "5"],
  ];
  const set = { ...o.set };
  const lines = ["СекцияДокумент=Платежное поручение"];
  for (const [key, value] of fields) {
    if (o.omit?.includes(key)) continue;
    lines.push(`${key}=${key in set ? set[key] : value}`);
    delete set[key];
  }
  for (const [key, value] of Object.entries(set)) lines.push(`${key}=${value}`);
  lines.push("КонецДокумента");
  return lines;
}

/** A whole file to the bank as text (CRLF). */
export function paymentFileText(
  payerAccount: string,
  docs: DocOptions[] = [{}],
  encoding = "Windows",
): string {
  const lines = [
    "1CClientBankExchange",
    "ВерсияФормата=1.03",
    `Кодировка=${encoding}`,
    "Отправитель=Бухгалтерия предприятия",
    "ДатаСоздания=19.11.2026",
    "ВремяСоздания=10:00:00",
    "ДатаНачала=19.11.2026",
    "ДатаКонца=19.11.2026",
    `РасчСчет=${payerAccount}`,
    "Документ=Платежное поручение",
  ];
  for (const d of docs) lines.push(...documentLines(payerAccount, d));
  lines.push("КонецФайла");
  return `${lines.join("\r\n")}\r\n`;
}

export function paymentFile(payerAccount: string, docs: DocOptions[] = [{}]): Uint8Array {
  return encodeCp1251(paymentFileText(payerAccount, docs));
}

/** Every response body a test saw, to scan for leaked bank references. */
export const seenBodies: string[] = [];

/** A response body parsed as JSON (the response itself stays readable). */
export async function bodyOf<T = Record<string, unknown>>(res: Response): Promise<T> {
  return JSON.parse(await res.clone().text()) as T;
}

export function expectNoBankSecrets(text: string): void {
  expect(text).not.toContain("sign_url");
  expect(text).not.toContain("bank_reference");
  expect(text).not.toContain("sandbox.bank.invalid");
  expect(text).not.toMatch(/SBX-[0-9A-F]{16}/);
}

function uploadRequest(
  accountId: string | null,
  file: Uint8Array | null,
  headers: Record<string, string> = {},
): Request {
  const form = new FormData();
  if (accountId !== null) form.append("bank_account_id", accountId);
  if (file !== null) form.append("file", new Blob([file as Uint8Array<ArrayBuffer>]), "payments.txt");
  return new Request(`${BASE}/api/v1/integration/payments/imports`, { method: "POST", headers, body: form });
}

export async function upload(
  t: TestApp,
  token: string | null,
  accountId: string | null,
  file: Uint8Array | null,
): Promise<Response> {
  const headers: Record<string, string> = token === null ? {} : { authorization: `Bearer ${token}` };
  return t.app.handle(uploadRequest(accountId, file, headers));
}

export function paymentTableCounts(t: TestApp): Record<string, number> {
  const count = (table: string) =>
    t.db.query<{ n: number }, []>(`SELECT COUNT(*) AS n FROM ${table}`).get()!.n;
  return {
    payment_imports: count("payment_imports"),
    payment_items: count("payment_items"),
    payment_submissions: count("payment_submissions"),
  };
}

export function paymentSubmits(t: TestApp, accountId: string) {
  return t.services.sandboxLog.list(accountId).filter((e) => e.kind === "payment_submit");
}

/** Records the text of every response the app gives from now on (for the leak scan). */
export function recordResponses(t: TestApp): void {
  const handle = t.app.handle.bind(t.app);
  (t.app as { handle: (r: Request) => Promise<Response> }).handle = async (request: Request) => {
    const res = await handle(request);
    seenBodies.push(await res.clone().text());
    return res;
  };
}
