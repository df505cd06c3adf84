// Tochka's HTTP surface as svc uses it: the API (production or sandbox base) and the OAuth token
// endpoint. Every answer that is not a success becomes a BankError the pollers understand:
// 429, 5xx and timeouts can be retried (Retry-After honoured), other refusals cannot; the bank's
// error id goes to the log, the bearer never does.
import type { Logger } from "../../core/logger";
import { type BankEnvironment, BankError } from "../adapter";

export interface TochkaSettings {
  apiUrl: string;
  sandboxUrl: string;
  authUrl: string;
  /** Per request; a bank that does not answer in time is retried later. */
  timeoutMs?: number;
}

/** The sandbox's fixed bearer (its developer page): never sent to the production base. */
export const SANDBOX_BEARER = "sandbox.jwt.token";

/** The longest wait a Retry-After may ask for before svc tries again anyway. */
const MAX_RETRY_AFTER_MS = 10 * 60_000;

/** 401/403 from the API: the login is refused (expired, revoked or lacking a permission). */
export class TochkaRefused extends Error {
  constructor(
    readonly status: number,
    readonly bankCode: string | null,
    message: string,
  ) {
    super(message);
    this.name = "TochkaRefused";
  }
}

interface TochkaErrorBody {
  code?: unknown;
  id?: unknown;
  message?: unknown;
  Errors?: { errorCode?: unknown; message?: unknown }[];
}

export interface TokenAnswer {
  access_token: string;
  refresh_token?: string;
  expires_in?: number;
}

function retryAfterMs(header: string | null, nowMs: number): number | undefined {
  if (header === null || header.trim() === "") return undefined;
  const seconds = Number(header.trim());
  const ms = Number.isFinite(seconds) ? seconds * 1000 : Date.parse(header) - nowMs;
  if (!Number.isFinite(ms) || ms < 0) return undefined;
  return Math.min(ms, MAX_RETRY_AFTER_MS);
}

function text(v: unknown): string | null {
  return typeof v === "string" && v.trim() !== "" ? v.trim() : null;
}

export class TochkaHttp {
  constructor(
    private readonly settings: TochkaSettings,
    private readonly logger: Logger,
    private readonly fetchImpl: typeof fetch = fetch,
  ) {}

  baseFor(environment: BankEnvironment): string {
    return environment === "sandbox" ? this.settings.sandboxUrl : this.settings.apiUrl;
  }

  /** A call to the API; `url` is a path under the environment's base or an absolute URL on it. */
  async api<T>(
    environment: BankEnvironment,
    bearer: string,
    method: "GET" | "POST",
    url: string,
    body?: unknown,
  ): Promise<T> {
    const base = this.baseFor(environment);
    // The sandbox bearer on the real bank, or a real login on the sandbox, would be a wiring bug.
    if ((environment === "sandbox") !== (bearer === SANDBOX_BEARER)) {
      throw new BankError("bank_credentials", "Среда счёта не совпадает с его доступом к банку", {
        retryable: false,
      });
    }
    const target = url.startsWith("/") ? `${base}${url}` : url;
    if (!target.startsWith(`${base}/`)) {
      throw new BankError("bank_error", "Банк указал адрес вне своего API", { retryable: false });
    }
    const res = await this.send(target, {
      method,
      headers: {
        authorization: `Bearer ${bearer}`,
        accept: "application/json",
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return (await this.answer(res, `${method} ${new URL(target).pathname}`)) as T;
  }

  /** POST {auth}/connect/token with a form (client_credentials, authorization_code, refresh_token). */
  async token(form: Record<string, string>): Promise<TokenAnswer> {
    const res = await this.send(`${this.settings.authUrl}/connect/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", accept: "application/json" },
      body: new URLSearchParams(form).toString(),
    });
    if (res.status === 400 || res.status === 401) {
      const body = (await res.json().catch(() => ({}))) as { error?: unknown };
      const code = text(body.error) ?? `http_${res.status}`;
      this.logger.warn("tochka token refused", {
        grant_type: form.grant_type,
        status: res.status,
        bank_code: code,
      });
      throw new TochkaRefused(res.status, code, `Банк отказал в выдаче токена (${code})`);
    }
    const answer = (await this.answer(res, "POST /connect/token")) as Partial<TokenAnswer>;
    if (typeof answer.access_token !== "string" || answer.access_token === "") {
      throw new BankError("bank_error", "Банк не выдал токен доступа");
    }
    return answer as TokenAnswer;
  }

  /** The bank's authorize page for the customer's consent. */
  authorizeUrl(params: Record<string, string>): string {
    return `${this.settings.authUrl}/connect/authorize?${new URLSearchParams(params).toString()}`;
  }

  private async send(url: string, init: RequestInit): Promise<Response> {
    try {
      return await this.fetchImpl(url, {
        ...init,
        redirect: "manual",
        signal: AbortSignal.timeout(this.settings.timeoutMs ?? 30_000),
      });
    } catch (e) {
      const timedOut = e instanceof Error && (e.name === "TimeoutError" || e.name === "AbortError");
      throw new BankError("bank_unavailable", timedOut ? "Банк не ответил вовремя" : "Банк недоступен", {
        retryable: true,
        cause: e,
      });
    }
  }

  private async answer(res: Response, what: string): Promise<unknown> {
    if (res.ok) {
      try {
        return await res.json();
      } catch (e) {
        throw new BankError("bank_error", "Банк прислал ответ, который не удалось прочитать", { cause: e });
      }
    }
    const body = (await res.json().catch(() => null)) as TochkaErrorBody | null;
    const bankCode = text(body?.Errors?.[0]?.errorCode) ?? text(body?.code);
    const bankMessage = text(body?.Errors?.[0]?.message) ?? text(body?.message);
    // The bank's error id lets its support find the request; nothing else of ours is logged.
    this.logger.warn("tochka answered with an error", {
      call: what,
      status: res.status,
      bank_error_id: text(body?.id),
      bank_code: bankCode,
    });
    const wait = retryAfterMs(res.headers.get("retry-after"), Date.now());
    if (res.status === 429) {
      throw new BankError("rate_limited", "Банк ограничил частоту запросов", {
        retryable: true,
        retryAfterMs: wait,
        bankCode: bankCode ?? undefined,
      });
    }
    if (res.status >= 500) {
      throw new BankError("bank_unavailable", `Банк временно не отвечает (HTTP ${res.status})`, {
        retryable: true,
        retryAfterMs: wait,
        bankCode: bankCode ?? undefined,
      });
    }
    if (res.status === 401 || res.status === 403) {
      throw new TochkaRefused(res.status, bankCode, bankMessage ?? `HTTP ${res.status}`);
    }
    throw new BankError(
      "bank_error",
      bankMessage ? `Банк отказал: ${bankMessage}` : `Банк отказал (HTTP ${res.status})`,
      {
        retryable: false,
        bankCode: bankCode ?? undefined,
      },
    );
  }
}
