// The token guard: the checks of a protected route, in the specification's order, first failure
// wins: format -> rate limit -> known/revoked/expired -> IP -> purpose -> scope. A presented value
// that matches no token gets no count of its own (random values would make one each): it is
// counted per client address, as requests without a token are, and refused 401 (429 once the
// address is over SVC_PUBLIC_RATE_LIMIT_PER_MINUTE).
// Per-account checks come later, from the access policy, once the request names an account.
import type { Clock } from "../core/clock";
import { ApiError } from "../core/errors";
import { errorText, type Logger } from "../core/logger";
import type { RateDecision, RateLimiter } from "../core/rate-window";
import type { AccountGrant, TokenAuthRecord, TokenRepository } from "../db/repos/tokens";
import { type AddressLimiter, addressRefusal } from "./address-limiter";
import { type IpRange, ipAllowed, parseIpRange } from "./ip";
import { rateLimitHeaders } from "./rate-limiter";
import { bearerValue, hashToken, isWellFormedToken, type TokenPurpose } from "./tokens";

export const DEFAULT_RATE_LIMIT: Record<TokenPurpose, number> = { integration: 60, mcp: 300 };

export type Scope = "read_statements" | "send_payments";

export interface Principal {
  tokenId: string;
  companyId: string;
  purpose: TokenPurpose;
  mode: "live" | "test";
  scopes: { readStatements: boolean; sendPayments: boolean };
  grants: ReadonlyMap<string, AccountGrant>;
}

export interface Authenticated {
  principal: Principal;
  rate: RateDecision;
}

export interface Requirement {
  purpose: TokenPurpose;
  scope?: Scope;
  /** The token of an OAuth grant (the /mcp endpoint) rather than a static one; never both. */
  oauth?: boolean;
}

const LAST_USED_RESOLUTION_MS = 60_000;

export class TokenGuard {
  private readonly lastTouched = new Map<string, number>();
  private readonly ipRangesCache = new Map<string, IpRange[]>();

  constructor(
    private readonly tokens: TokenRepository,
    private readonly limiter: RateLimiter,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly addresses: AddressLimiter,
  ) {}

  /** The presented bearer value if it is well formed; throws 401 invalid_token_format otherwise. */
  presentedToken(authorization: string | null): string {
    const value = bearerValue(authorization);
    if (value === null || !isWellFormedToken(value)) throw new ApiError("invalid_token_format");
    return value;
  }

  /** True when authenticate() never returns a promise (see RateLimiter.answersAtOnce). */
  get answersAtOnce(): boolean {
    return this.limiter.answersAtOnce;
  }

  /**
   * `identified` learns the token's id as soon as it is known, also when a later check fails.
   * The answer is a promise only when the limiter's is (a store shared by replicas); a limiter
   * that fails or does not answer in time makes it 503 service_unavailable, never a pass.
   */
  authenticate(
    authorization: string | null,
    clientIp: string | null,
    need: Requirement,
    identified?: (apiTokenId: string) => void,
  ): Authenticated | Promise<Authenticated> {
    const value = this.presentedToken(authorization);
    return this.authenticateHash(hashToken(value), clientIp, need, identified);
  }

  /** authenticate() for a token known by its hash (a session bound to a token: DirectBank's SID). */
  authenticateHash(
    hash: string,
    clientIp: string | null,
    need: Requirement,
    identified?: (apiTokenId: string) => void,
  ): Authenticated | Promise<Authenticated> {
    const record = this.tokens.findByHash(hash);
    if (!record) throw this.unknownToken(clientIp);
    identified?.(record.id);

    const rate = this.limiter.hit(record.id, record.rateLimitPerMinute ?? DEFAULT_RATE_LIMIT[record.purpose]);
    if (rate instanceof Promise) {
      return rate.then(
        (decision) => this.admit(record, decision, clientIp, need),
        (e: unknown) => {
          throw this.limiterUnavailable(e);
        },
      );
    }
    return this.admit(record, rate, clientIp, need);
  }

  /** A value that matches no token: counted for its client address, never by itself. */
  private unknownToken(clientIp: string | null): ApiError {
    const decision = this.addresses.hit(clientIp);
    return decision.allowed ? new ApiError("invalid_token") : addressRefusal(decision);
  }

  /** The checks after the rate limit, in the specification's order. */
  private admit(
    record: TokenAuthRecord,
    rate: RateDecision,
    clientIp: string | null,
    need: Requirement,
  ): Authenticated {
    if (!rate.allowed) {
      throw new ApiError(
        "rate_limited",
        undefined,
        { retry_after_seconds: rate.retryAfterSeconds },
        { ...rateLimitHeaders(rate), "retry-after": String(rate.retryAfterSeconds) },
      );
    }

    const now = this.clock.now();
    if (record.revokedAt !== null || isExpired(record, now)) {
      throw refused("invalid_token", rate);
    }
    // An OAuth access token is bound to /mcp (its audience); a static token never works there.
    if ((record.oauthGrantId !== null) !== (need.oauth ?? false)) {
      // A known, live token at the wrong door: say which door is its own.
      const staticToken = record.oauthGrantId === null;
      throw new ApiError(
        "invalid_token",
        staticToken
          ? "Статический токен svc_… не принимается на /mcp (только токены OAuth-приложений): агентский интерфейс для него — /api/v1/mcp"
          : "Токен OAuth-приложения действует только на /mcp",
        {
          reason: staticToken ? "static_token" : "oauth_token",
          ...(staticToken ? { use: "/api/v1/mcp" } : {}),
        },
        rateLimitHeaders(rate),
      );
    }
    if (record.allowedIps.length > 0 && !ipAllowed(clientIp, this.ranges(record))) {
      throw refused("forbidden_ip", rate);
    }
    if (record.purpose !== need.purpose) throw refused("forbidden_purpose", rate);
    if (need.scope === "read_statements" && !record.scopeReadStatements) {
      throw refused("forbidden_scope", rate, { scope: "scope_read_statements" });
    }
    if (need.scope === "send_payments" && !record.scopeSendPayments) {
      throw refused("forbidden_scope", rate, { scope: "scope_send_payments" });
    }

    this.touch(record.id, now);
    const grants = this.tokens.grantsByAccount(record.id);
    return {
      principal: {
        tokenId: record.id,
        companyId: record.companyId,
        purpose: record.purpose,
        mode: record.mode,
        scopes: { readStatements: record.scopeReadStatements, sendPayments: record.scopeSendPayments },
        grants,
      },
      rate,
    };
  }

  // Without a count no request may pass: the caller gets 503 and the cause goes to the log.
  private limiterUnavailable(e: unknown): ApiError {
    this.logger.error("rate limit store failed", {
      error: errorText(e),
    });
    return new ApiError("service_unavailable", "Счётчики лимита запросов недоступны", undefined, {
      "retry-after": "1",
    });
  }

  // last_used_at is kept to the minute: no write per request.
  private touch(tokenId: string, now: Date): void {
    const previous = this.lastTouched.get(tokenId) ?? 0;
    if (now.getTime() - previous < LAST_USED_RESOLUTION_MS) return;
    this.lastTouched.set(tokenId, now.getTime());
    try {
      this.tokens.touch(tokenId, now.toISOString());
    } catch {
      // Bookkeeping only: a database that takes no writes (read-only, full) must not fail a
      // request that would otherwise succeed, reads above all; the next minute tries again.
    }
  }

  private ranges(record: TokenAuthRecord): IpRange[] {
    const key = record.allowedIps.join(",");
    let ranges = this.ipRangesCache.get(key);
    if (!ranges) {
      ranges = record.allowedIps.map(parseIpRange).filter((r): r is IpRange => r !== null);
      if (this.ipRangesCache.size > 1000) this.ipRangesCache.clear();
      this.ipRangesCache.set(key, ranges);
    }
    return ranges;
  }
}

/** A refusal after the rate limit: it carries the rate-limit headers too (a success gets them
 * from the caller). */
function refused(
  code: "invalid_token" | "forbidden_ip" | "forbidden_purpose" | "forbidden_scope",
  rate: RateDecision,
  details?: Record<string, unknown>,
): ApiError {
  return new ApiError(code, undefined, details, rateLimitHeaders(rate));
}

function isExpired(record: TokenAuthRecord, now: Date): boolean {
  return record.expiresAt !== null && new Date(record.expiresAt).getTime() <= now.getTime();
}
