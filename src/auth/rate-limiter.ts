// Fixed one-minute windows aligned to the wall clock. Behind an interface so that a shared
// store (for several instances) can replace the in-process one.
import type { Clock } from "../core/clock";

export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  resetUnix: number; // the unix second at which the window ends
  retryAfterSeconds: number;
}

export interface RateLimiter {
  hit(key: string, limit: number): RateDecision;
}

const WINDOW_MS = 60_000;

export class InMemoryRateLimiter implements RateLimiter {
  private window = -1;
  private counts = new Map<string, number>();

  constructor(private readonly clock: Clock) {}

  hit(key: string, limit: number): RateDecision {
    const nowMs = this.clock.now().getTime();
    const window = Math.floor(nowMs / WINDOW_MS);
    if (window !== this.window) {
      // A new window forgets every counter at once: memory stays bounded by one minute of keys.
      this.window = window;
      this.counts.clear();
    }
    const used = (this.counts.get(key) ?? 0) + 1;
    this.counts.set(key, used);
    const resetMs = (window + 1) * WINDOW_MS;
    return {
      allowed: used <= limit,
      limit,
      remaining: Math.max(0, limit - used),
      resetUnix: resetMs / 1000,
      retryAfterSeconds: Math.max(1, Math.ceil((resetMs - nowMs) / 1000)),
    };
  }
}

export function rateLimitHeaders(d: RateDecision): Record<string, string> {
  return {
    "x-ratelimit-limit": String(d.limit),
    "x-ratelimit-remaining": String(d.remaining),
    "x-ratelimit-reset": String(d.resetUnix),
  };
}
