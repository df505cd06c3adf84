// Requests counted per client address, for what carries no token to count by: the routes that need
// none (OAuth, the well-known documents, the admin sign-in) and bearers that are refused (a value
// that matches no token, a wrong admin or metrics bearer, a wrong admin sign-in). Fixed one-minute
// windows aligned to the wall clock, as the token limits.
//
// Counted in this process's memory, per replica (decided in docs/security.md): the limit protects
// each server's memory, disk and thread from one address, and a refusal costs no database round
// trip. Memory is bounded: a new window forgets every address at once, and at most `maxAddresses`
// are told apart in one window; addresses beyond that share one count, so a crowd of addresses
// cannot grow the table nor pass uncounted.
import type { Clock } from "../core/clock";
import { ApiError } from "../core/errors";
import { WINDOW_MS, windowStartOf } from "../core/rate-window";
import { normalizeIp, parseIp } from "./ip";

const DEFAULT_MAX_ADDRESSES = 10_000;

/** The count that stands for every address beyond `maxAddresses` in one window. */
const CROWD = "*";

export interface AddressDecision {
  allowed: boolean;
  /** This request's number in its address's window, counting it. */
  used: number;
  limit: number;
  /** Seconds until the window ends (at least 1). */
  retryAfterSeconds: number;
  /** The first request of the address in this window: worth one audit entry. */
  first: boolean;
  /** The first request refused in this window: the start of a lockout, worth one audit entry. */
  firstRefused: boolean;
}

export class AddressLimiter {
  private window = -1;
  private readonly counts = new Map<string, number>();

  constructor(
    private readonly clock: Clock,
    readonly limitPerMinute: number,
    private readonly maxAddresses = DEFAULT_MAX_ADDRESSES,
  ) {}

  /** Counts one request from `ip` (null: no address known, one shared count) and decides. */
  hit(ip: string | null): AddressDecision {
    const nowMs = this.clock.now().getTime();
    const window = windowStartOf(nowMs);
    if (window !== this.window) {
      this.window = window;
      this.counts.clear();
    }
    let key = addressKey(ip);
    if (!this.counts.has(key) && this.counts.size >= this.maxAddresses) key = CROWD;
    const used = (this.counts.get(key) ?? 0) + 1;
    this.counts.set(key, used);
    const limit = this.limitPerMinute;
    return {
      allowed: used <= limit,
      used,
      limit,
      retryAfterSeconds: Math.max(1, Math.ceil((window + WINDOW_MS - nowMs) / 1000)),
      first: used === 1,
      firstRefused: used === limit + 1,
    };
  }

  /** Addresses told apart in the current window (for tests and metrics). */
  get size(): number {
    return this.counts.size;
  }
}

/** 429 `rate_limited` for an address over its limit. */
export function addressRefusal(decision: AddressDecision): ApiError {
  return new ApiError(
    "rate_limited",
    undefined,
    { retry_after_seconds: decision.retryAfterSeconds },
    { "retry-after": String(decision.retryAfterSeconds) },
  );
}

/**
 * What one client is: an IPv4 address, or the /64 network of an IPv6 address (one subscriber's
 * share: a host picks any address inside it at will). The client address is already canonical
 * (the client-IP resolver normalises it).
 */
export function addressKey(ip: string | null): string {
  if (ip === null) return "unknown";
  if (!ip.includes(":")) return ip;
  const value = parseIp(ip);
  if (value === null) return ip;
  if (value >> 32n === 0xffffn) return normalizeIp(ip);
  return `${(value >> 64n).toString(16)}/64`;
}
