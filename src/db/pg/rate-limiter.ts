// Rate limits shared by every replica on one PostgreSQL: the same fixed one-minute windows as the
// in-process limiter, counted in the UNLOGGED table rate_limit_hits (migrations-pg/0002). One
// statement per hit: the upsert takes the row lock, so concurrent hits from any process are
// counted one after another and each learns its own count; no BEGIN/COMMIT, one round trip.
// Windows come from svc's clock, not the database's now(): tests with a fixed clock work, and
// replicas agree on a window as far as their clocks agree.
import type { Sql } from "postgres";
import type { Clock } from "../../core/clock";
import {
  decide,
  type RateDecision,
  type RateLimiter,
  WINDOW_MS,
  windowStartOf,
} from "../../core/rate-window";

/** How long a hit may wait for the database before it fails (and the request gets 503). */
const DEFAULT_TIMEOUT_MS = 2_000;

export class PostgresRateLimiter implements RateLimiter {
  readonly answersAtOnce = false;
  /** The window whose predecessors this process last swept. */
  private sweptWindowMs = -1;

  constructor(
    private readonly sql: Sql,
    private readonly clock: Clock,
    private readonly timeoutMs = DEFAULT_TIMEOUT_MS,
  ) {}

  async hit(key: string, limit: number): Promise<RateDecision> {
    const nowMs = this.clock.now().getTime();
    const windowStartMs = windowStartOf(nowMs);
    const used = await withTimeout(this.count(key, windowStartMs), this.timeoutMs);
    return decide(used, limit, windowStartMs, nowMs);
  }

  private async count(key: string, windowStartMs: number): Promise<number> {
    // The first hit of a window from this process also deletes the windows before the previous
    // one (once a minute per replica, in the same round trip). The previous window is kept for a
    // replica whose clock is a little behind: its hits still count where the others' did. Rows
    // another replica is deleting are skipped, not waited for: no hit waits on a sweep, and two
    // sweeps cannot deadlock.
    const sweep =
      windowStartMs === this.sweptWindowMs
        ? this.sql``
        : this.sql`WITH swept AS (
            DELETE FROM rate_limit_hits WHERE (key, window_start_ms) IN (
              SELECT key, window_start_ms FROM rate_limit_hits
               WHERE window_start_ms < ${windowStartMs - WINDOW_MS} FOR UPDATE SKIP LOCKED))
          `;
    this.sweptWindowMs = windowStartMs;
    const rows = await this.sql<{ used: number }[]>`
      ${sweep}INSERT INTO rate_limit_hits AS h (key, window_start_ms, used)
      VALUES (${key}, ${windowStartMs}, 1)
      ON CONFLICT (key, window_start_ms) DO UPDATE SET used = h.used + 1
      RETURNING h.used`;
    const row = rows[0];
    if (!row) throw new Error("rate_limit_hits: the upsert returned no row");
    return row.used;
  }
}

// No query.cancel() on expiry: for a query already sent it opens one more connection to a server
// that is not answering, and postgres.js drops the promise of that attempt (a refused connection
// would end the process as an unhandled rejection). A query still waiting for a connection fails
// by itself at the pool's connect_timeout; one that still runs later counts a hit for a request
// that was refused, which errs on the safe side.
function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`rate_limit_hits: no answer from PostgreSQL in ${ms} ms`)), ms);
  });
  return Promise.race([work, expired]).finally(() => clearTimeout(timer));
}
