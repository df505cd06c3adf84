// The two logins Tochka offers (its developer pages "JWT" and "OAuth 2.0") and the bearer each
// gives for a call. An OAuth access token is renewed a minute before it expires, through the
// connection store, so a rotated refresh token is committed before the new access token is used.
import type { Clock } from "../../core/clock";
import { type BankAccountRef, BankError, type ConnectionStore, type CredentialsCheck } from "../adapter";
import { SANDBOX_BEARER, type TochkaHttp, type TochkaRefused } from "./http";

export interface JwtLogin {
  kind: "jwt";
  token: string;
}

export interface OAuthLogin {
  kind: "oauth";
  client_id: string;
  client_secret: string;
  /** Set once the customer has approved the consent in the bank. */
  access_token?: string;
  refresh_token?: string;
  /** When the access token stops working (clock ms). */
  expires_at_ms?: number;
}

export type TochkaLogin = JwtLogin | OAuthLogin;

/** The permissions svc asks for: statements, balances, accounts and payments for signing. */
export const CONSENT_PERMISSIONS = [
  "ReadAccountsBasic",
  "ReadAccountsDetail",
  "ReadBalances",
  "ReadStatements",
  "CreatePaymentForSign",
  "CreatePaymentOrder",
] as const;
export const OAUTH_SCOPE = "accounts balances statements payments";

const RENEW_BEFORE_MS = 60_000;

function nonEmpty(v: unknown): v is string {
  return typeof v === "string" && v.trim() !== "" && !/\s/.test(v);
}

export function parseLogin(value: unknown): TochkaLogin | null {
  if (typeof value !== "object" || value === null) return null;
  const v = value as Record<string, unknown>;
  if (v.kind === "jwt" && nonEmpty(v.token)) return { kind: "jwt", token: v.token };
  if (v.kind === "oauth" && nonEmpty(v.client_id) && nonEmpty(v.client_secret))
    return v as unknown as OAuthLogin;
  return null;
}

export function checkLogin(value: unknown, environment: "production" | "sandbox"): CredentialsCheck {
  if (environment === "sandbox") {
    // The sandbox takes its own fixed bearer; a real login must not be stored for it.
    return value === undefined || value === null
      ? { ok: true, status: "active" }
      : { ok: false, message: "Счёт песочницы Точки работает без реквизитов доступа" };
  }
  const login = parseLogin(value);
  if (!login) {
    return {
      ok: false,
      message:
        'Реквизиты Точки: {"kind":"jwt","token":"…"} или {"kind":"oauth","client_id":"…","client_secret":"…"}',
    };
  }
  if (login.kind === "jwt" && login.token === SANDBOX_BEARER) {
    return { ok: false, message: "Токен песочницы не подходит для счёта в рабочей среде" };
  }
  return { ok: true, status: login.kind === "oauth" && !login.access_token ? "consent_required" : "active" };
}

export class TochkaBearers {
  constructor(
    private readonly http: TochkaHttp,
    private readonly store: ConnectionStore,
    private readonly clock: Clock,
  ) {}

  /** The bearer for this account's next call; `stale` is one the bank has just refused. */
  async bearer(ref: BankAccountRef, stale?: string): Promise<string> {
    if (ref.environment === "sandbox") return SANDBOX_BEARER;
    if (!ref.connection_id) throw noLogin();
    const login = parseLogin(this.store.read(ref.connection_id));
    if (!login) throw noLogin();
    if (login.kind === "jwt") return login.token;
    if (!login.access_token || !login.refresh_token) {
      throw new BankError("bank_credentials", "Доступ к Точке ещё не подтверждён в банке", {
        retryable: false,
      });
    }
    const fresh = (login.expires_at_ms ?? 0) - this.clock.now().getTime() > RENEW_BEFORE_MS;
    if (fresh && login.access_token !== stale) return login.access_token;
    const renewed = parseLogin(
      await this.store.renew(ref.connection_id, (current) => this.refresh(current, stale)),
    ) as OAuthLogin | null;
    if (!renewed?.access_token) throw noLogin();
    return renewed.access_token;
  }

  /** Exchanges the refresh token; null when another caller renewed it meanwhile. */
  private async refresh(current: unknown, stale: string | undefined): Promise<OAuthLogin | null> {
    const login = parseLogin(current);
    if (login?.kind !== "oauth" || !login.refresh_token) throw noLogin();
    const now = this.clock.now().getTime();
    if ((login.expires_at_ms ?? 0) - now > RENEW_BEFORE_MS && login.access_token !== stale) return null;
    const answer = await this.http.token({
      client_id: login.client_id,
      client_secret: login.client_secret,
      grant_type: "refresh_token",
      refresh_token: login.refresh_token,
    });
    return {
      ...login,
      access_token: answer.access_token,
      // The bank hands out a new refresh token every time; the old one no longer works.
      refresh_token: answer.refresh_token ?? login.refresh_token,
      expires_at_ms: now + (answer.expires_in ?? 86_400) * 1000,
    };
  }

  /** Whether this account's login can get a new access token by itself (OAuth with a refresh token). */
  renewable(ref: BankAccountRef): boolean {
    if (ref.environment === "sandbox" || !ref.connection_id) return false;
    const login = parseLogin(this.store.read(ref.connection_id));
    return login?.kind === "oauth" && typeof login.refresh_token === "string";
  }

  /** The login was refused for good: the operator must renew it in the admin pages. */
  refused(ref: BankAccountRef, e: TochkaRefused): BankError {
    const message =
      e.status === 403
        ? "Банк отказал в доступе: у токена нет нужного разрешения или он отозван. Обновите доступ к Точке"
        : "Банк не принял доступ: срок действия истёк или он отозван. Обновите доступ к Точке";
    if (ref.connection_id && ref.environment === "production") this.store.refused(ref.connection_id, message);
    return new BankError("bank_credentials", message, {
      retryable: false,
      bankCode: e.bankCode ?? undefined,
    });
  }
}

function noLogin(): BankError {
  return new BankError("bank_credentials", "Для счёта не заданы реквизиты доступа к Точке", {
    retryable: false,
  });
}
