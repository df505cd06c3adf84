// Fixed one-minute rate-limit windows aligned to the wall clock, and the limiter's interface: the
// in-process limiter (auth/) and the one replicas share (db/pg/) count in the same windows.
export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  resetUnix: number; // the unix second at which the window ends
  retryAfterSeconds: number;
}

export interface RateLimiter {
  /**
   * True when hit() never returns a promise. Elysia compiles a route's hooks as synchronous or
   * asynchronous once, when the route is built: the in-process limiter keeps the request path
   * free of awaits by saying so.
   */
  readonly answersAtOnce: boolean;
  /** A decision at once (counters in this process) or a promise of one (a store shared by replicas). */
  hit(key: string, limit: number): RateDecision | Promise<RateDecision>;
}

export const WINDOW_MS = 60_000;

/** The start (unix ms) of the window that `nowMs` falls in. */
export function windowStartOf(nowMs: number): number {
  return Math.floor(nowMs / WINDOW_MS) * WINDOW_MS;
}

/** The decision for the `used`-th hit (counting this one) of the window starting at `windowStartMs`. */
export function decide(used: number, limit: number, windowStartMs: number, nowMs: number): RateDecision {
  const resetMs = windowStartMs + WINDOW_MS;
  return {
    allowed: used <= limit,
    limit,
    remaining: Math.max(0, limit - used),
    resetUnix: resetMs / 1000,
    retryAfterSeconds: Math.max(1, Math.ceil((resetMs - nowMs) / 1000)),
  };
}
