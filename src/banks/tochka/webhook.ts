// Tochka's webhooks (../banks/tochka/docs/opisanie-metodov-vebhuki.md): a POST whose text/plain
// body is a JWT signed by the bank (RS256). Only a body whose signature verifies against the
// bank's public key is believed; an incomingPayment names the account money came into
// (SideRecipient: its number and the bank's BIK), whose sync then runs at once.
import { type CryptoKey, importJWK, type JWTPayload, jwtVerify } from "jose";

/** The bank's published key (the webhooks page; https://enter.tochka.com/doc/openapi/static/keys/public). */
export const TOCHKA_WEBHOOK_KEY =
  '{"kty":"RSA","e":"AQAB","n":"rwm77av7GIttq-JF1itEgLCGEZW_zz16RlUQVYlLbJtyRSu61fCec_rroP6PxjXU2uLzUOaGaLgAPeUZAJrGuVp9nryKgbZceHckdHDYgJd9TsdJ1MYUsXaOb9joN9vmsCscBx1lwSlFQyNQsHUsrjuDk-opf6RCuazRQ9gkoDCX70HV8WBMFoVm-YWQKJHZEaIQxg_DU4gMFyKRkDGKsYKA0POL-UgWA1qkg6nHY5BOMKaqxbc5ky87muWB5nNk4mfmsckyFv9j1gBiXLKekA_y4UwG2o1pbOLpJS3bP_c95rm4M9ZBmGXqfOQhbjz8z-s9C11i-jmOQ2ByohS-ST3E5sqBzIsxxrxyQDTw--bZNhzpbciyYW4GfkkqyeYoOPd_84jPTBDKQXssvj8ZOj2XboS77tvEO1n1WlwUzh8HPCJod5_fEgSXuozpJtOggXBv0C2ps7yXlDZf-7Jar0UYc_NJEHJF-xShlqd6Q3sVL02PhSCM-ibn9DN9BKmD"}';

/** A notice whose signature did not verify, or that is not a JWT at all. */
export class WebhookRefused extends Error {
  override name = "WebhookRefused";
}

export interface TochkaNotice {
  webhookType: string;
  /** The account the notice is about, for the kinds that name one (incomingPayment). */
  account: { number: string; bik: string } | null;
  paymentId: string | null;
}

/** Checks a JWK of an RSA public key given as text (SVC_TOCHKA_WEBHOOK_KEY); null when it is one. */
export function webhookKeyProblem(text: string): string | null {
  try {
    const jwk = JSON.parse(text) as Record<string, unknown>;
    if (jwk.kty !== "RSA" || typeof jwk.n !== "string" || typeof jwk.e !== "string")
      return 'нужен открытый ключ RSA в формате JWK: {"kty":"RSA","n":…,"e":…}';
    if ("d" in jwk) return "это закрытый ключ; нужен открытый ключ банка";
    return null;
  } catch {
    return "не JSON (нужен открытый ключ RSA в формате JWK)";
  }
}

const text = (value: unknown): string | null => (typeof value === "string" ? value : null);

export class TochkaWebhookVerifier {
  private key: Promise<CryptoKey | Uint8Array> | null = null;

  constructor(private readonly jwk: string) {}

  /** The notice in a webhook's body, once its signature verified; WebhookRefused otherwise. */
  async verify(body: string): Promise<TochkaNotice> {
    this.key ??= importJWK(JSON.parse(this.jwk) as Record<string, string>, "RS256");
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(body.trim(), await this.key, { algorithms: ["RS256"] }));
    } catch (e) {
      throw new WebhookRefused(e instanceof Error ? e.message : String(e));
    }
    const recipient = payload.SideRecipient as Record<string, unknown> | undefined;
    const number = text(recipient?.account);
    const bik = text(recipient?.bankCode);
    return {
      webhookType: text(payload.webhookType) ?? "",
      account: number !== null && bik !== null ? { number, bik } : null,
      paymentId: text(payload.paymentId),
    };
  }
}
