// The OAuth tables' sweep, every 10 minutes, by one replica of the fleet per interval (FleetSchedule):
// expired authorization requests, dead refresh tokens, grants nothing can renew, clients never used
// (OAuthService.sweepOnce). One batch of each per transaction, the event loop free between batches.
import type { Logger } from "../core/logger";
import { betweenBatches, FleetJob, type FleetSchedule } from "../db/fleet-schedule";
import { SWEEP_BATCH } from "./repository";
import type { OAuthService } from "./service";

const INTERVAL_MS = 10 * 60_000;
/** Batches per run at most: what is left waits for the next interval. */
const MAX_BATCHES = 200;

export class OAuthSweeper extends FleetJob {
  readonly name = "oauth-sweeper";

  constructor(
    private readonly oauth: OAuthService,
    logger: Logger,
    schedule: FleetSchedule | null = null,
    intervalMs = INTERVAL_MS,
  ) {
    super(logger, schedule, intervalMs);
  }

  /** Sweeps until nothing is left (or the run's batches are used up); resolves with rows removed. */
  protected async work(): Promise<number> {
    const total = { requests: 0, refresh_tokens: 0, grants: 0, clients: 0 };
    for (let i = 0; i < MAX_BATCHES && !this.stopped; i++) {
      const n = this.oauth.sweepOnce();
      total.requests += n.requests;
      total.refresh_tokens += n.refreshTokens;
      total.grants += n.grants;
      total.clients += n.clients;
      if (Math.max(n.requests, n.refreshTokens, n.grants, n.clients) < SWEEP_BATCH) break;
      await betweenBatches();
    }
    const removed = total.requests + total.refresh_tokens + total.grants + total.clients;
    if (removed > 0) this.logger.info("oauth tables swept", total);
    return removed;
  }
}
