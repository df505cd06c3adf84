// Tochka's incomingPayment webhook as the bank sends it (its webhooks page): a JWT signed with
// RS256 whose payload has the shape of the page's own example, kept verbatim in
// test/fixtures/tochka-webhook-incoming-payment.jwt (signed with the bank's published key). Every
// webhook a test sends is built here and held to that example's shape, so neither the tests nor
// svc can drift from what the bank documents.
import { expect } from "bun:test";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { type CryptoKey, decodeJwt, exportJWK, generateKeyPair, SignJWT } from "jose";

export const DOCUMENT_EXAMPLE = readFileSync(
  resolve(import.meta.dir, "../fixtures/tochka-webhook-incoming-payment.jwt"),
  "utf8",
).trim();

type Shape = string | { [key: string]: Shape };

/** The keys of a payload, nested, with the JSON type of each value. */
export function shapeOf(value: unknown): Shape {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return typeof value;
  return Object.fromEntries(
    Object.entries(value)
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([k, v]) => [k, shapeOf(v)]),
  );
}

/** Fails the test unless `payload` has the fields, and the types, of the bank's own example. */
export function expectDocumentShape(payload: unknown): void {
  expect(shapeOf(payload)).toEqual(shapeOf(decodeJwt(DOCUMENT_EXAMPLE)));
}

export interface WebhookKeys {
  privateKey: CryptoKey;
  /** The public key as SVC_TOCHKA_WEBHOOK_KEY takes it (a JWK). */
  publicJwk: string;
}

export async function webhookKeys(): Promise<WebhookKeys> {
  const { privateKey, publicKey } = await generateKeyPair("RS256", { extractable: true });
  return { privateKey, publicJwk: JSON.stringify(await exportJWK(publicKey)) };
}

const side = (account: string, bik: string, name: string, amount: string) => ({
  bankCode: bik,
  bankName: "ООО Банк Точка",
  bankCorrespondentAccount: "30101810745374525104",
  account,
  name,
  amount,
  currency: "RUB",
  inn: "7719617469",
  kpp: "771901001",
});

/** The payload of an incomingPayment into `account` at `bik` (the document's fields only). */
export function incomingPayment(account: string, bik: string, amount = "1250.5") {
  const payload = {
    SidePayer: side("40702810900000000001", "044525225", "ООО Плательщик", amount),
    SideRecipient: side(account, bik, "ООО Ромашка", amount),
    purpose: "Оплата по счёту № 17 от 19.11.2026, без НДС",
    documentNumber: "417",
    paymentId: `pay-${crypto.randomUUID()}`,
    date: "2026-11-20",
    webhookType: "incomingPayment",
    customerCode: "300123123",
  };
  expectDocumentShape(payload);
  return payload;
}

/** The body the bank posts: the payload signed (RS256) as a compact JWT. */
export function signWebhook(payload: Record<string, unknown>, key: CryptoKey): Promise<string> {
  return new SignJWT(payload).setProtectedHeader({ typ: "JWT", alg: "RS256" }).sign(key);
}
