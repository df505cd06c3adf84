// The in-process rate limiter (one server), behind the interface that a store shared by replicas
// implements too (db/pg/rate-limiter.ts); and the headers a decision is told with.
import type { Clock } from "../core/clock";
import { decide, type RateDecision, type RateLimiter, windowStartOf } from "../core/rate-window";

export class InMemoryRateLimiter implements RateLimiter {
  readonly answersAtOnce = true;
  private window = -1;
  private counts = new Map<string, number>();

  constructor(private readonly clock: Clock) {}

  hit(key: string, limit: number): RateDecision {
    const nowMs = this.clock.now().getTime();
    const window = windowStartOf(nowMs);
    if (window !== this.window) {
      // A new window forgets every counter at once: memory stays bounded by one minute of keys.
      this.window = window;
      this.counts.clear();
    }
    const used = (this.counts.get(key) ?? 0) + 1;
    this.counts.set(key, used);
    return decide(used, limit, window, nowMs);
  }
}

export function rateLimitHeaders(d: RateDecision): Record<string, string> {
  return {
    "x-ratelimit-limit": String(d.limit),
    "x-ratelimit-remaining": String(d.remaining),
    "x-ratelimit-reset": String(d.resetUnix),
  };
}
