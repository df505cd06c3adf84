// The OAuth tables' sweep, every 10 minutes, by one replica of the fleet per interval (FleetSchedule):
// expired authorization requests, dead refresh tokens, grants nothing can renew, clients never used
// (OAuthService.sweepOnce). One batch of each per transaction, the event loop free between batches.
import type { Logger } from "../core/logger";
import { type FleetSchedule, fleetInterval } from "../db/fleet-schedule";
import { SWEEP_BATCH } from "./repository";
import type { OAuthService } from "./service";

const INTERVAL_MS = 10 * 60_000;
/** Batches per run at most: what is left waits for the next interval. */
const MAX_BATCHES = 200;

export class OAuthSweeper {
  readonly name = "oauth-sweeper";
  private timer: ReturnType<typeof setInterval> | null = null;
  private running: Promise<number> | null = null;
  private stopped = false;

  constructor(
    private readonly oauth: OAuthService,
    private readonly logger: Logger,
    private readonly schedule: FleetSchedule | null = null,
    private readonly intervalMs = INTERVAL_MS,
  ) {}

  start(): void {
    this.stopped = false;
    this.timer ??= fleetInterval(this.schedule, this.name, this.intervalMs, () => void this.runOnce());
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
  }

  /** Sweeps until nothing is left (or the run's batches are used up); resolves with rows removed. */
  runOnce(): Promise<number> {
    this.running ??= this.sweep()
      .catch((e) => {
        this.logger.error("oauth sweep failed", { error: e instanceof Error ? e.message : String(e) });
        return 0;
      })
      .finally(() => {
        this.running = null;
      });
    return this.running;
  }

  private async sweep(): Promise<number> {
    const total = { requests: 0, refresh_tokens: 0, grants: 0, clients: 0 };
    for (let i = 0; i < MAX_BATCHES && !this.stopped; i++) {
      const n = this.oauth.sweepOnce();
      total.requests += n.requests;
      total.refresh_tokens += n.refreshTokens;
      total.grants += n.grants;
      total.clients += n.clients;
      if (Math.max(n.requests, n.refreshTokens, n.grants, n.clients) < SWEEP_BATCH) break;
      await new Promise<void>((resolve) => setTimeout(resolve, 0));
    }
    const removed = total.requests + total.refresh_tokens + total.grants + total.clients;
    if (removed > 0) this.logger.info("oauth tables swept", total);
    return removed;
  }
}
