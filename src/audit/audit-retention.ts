// SVC_AUDIT_RETENTION_DAYS: audit entries older than that are deleted, a small batch per
// transaction with the event loop free between batches, so that requests (whose own audit rows
// need the write lock) wait at most one batch. Portable SQL on the stores' port.
import type { Clock } from "../core/clock";
import type { Logger } from "../core/logger";
import { type FleetSchedule, fleetInterval } from "../db/fleet-schedule";
import type { SqlPort } from "../db/sql-port";

const BATCH = 500;
const HOUR_MS = 3_600_000;

export class AuditRetention {
  readonly name = "audit-retention";
  private timer: ReturnType<typeof setInterval> | null = null;
  private running: Promise<number> | null = null;
  private stopped = false;
  private readonly deleteBatch;
  private readonly dropBlocks;

  constructor(
    private readonly port: SqlPort,
    private readonly days: number,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly intervalMs = HOUR_MS,
    /** With several replicas, one deletes per interval. */
    private readonly schedule: FleetSchedule | null = null,
  ) {
    this.deleteBatch = port.prepare<unknown, [string, number]>(
      `DELETE FROM audit_log WHERE id IN (SELECT id FROM audit_log WHERE at < ? ORDER BY at LIMIT ?)`,
    );
    // The per-token block map (migration 0005) loses the blocks wholly below the oldest entry left.
    this.dropBlocks = port.prepare<unknown, []>(
      `DELETE FROM audit_token_blocks
        WHERE (SELECT min(id) FROM audit_log) IS NULL OR block < (SELECT min(id) FROM audit_log) >> 12`,
    );
  }

  start(): void {
    this.stopped = false;
    if (this.schedule === null || this.schedule.claim(this.name, this.intervalMs)) void this.runOnce();
    this.timer = fleetInterval(this.schedule, this.name, this.intervalMs, () => void this.runOnce());
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
  }

  /** Deletes every entry older than the retention; resolves with how many were deleted. */
  runOnce(): Promise<number> {
    this.running ??= this.purge()
      .catch((e) => {
        this.logger.error("audit retention failed", { error: e instanceof Error ? e.message : String(e) });
        return 0;
      })
      .finally(() => {
        this.running = null;
      });
    return this.running;
  }

  private async purge(): Promise<number> {
    const cutoff = new Date(this.clock.now().getTime() - this.days * 86_400_000).toISOString();
    let deleted = 0;
    for (;;) {
      const n = this.port.transaction(() => this.deleteBatch.run(cutoff, BATCH).changes);
      deleted += n;
      if (n < BATCH || this.stopped) break;
      await new Promise<void>((resolve) => setTimeout(resolve, 0));
    }
    if (deleted > 0) {
      this.dropBlocks.run();
      this.logger.info("audit entries past retention deleted", { deleted, older_than: cutoff });
    }
    return deleted;
  }
}
