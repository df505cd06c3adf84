// SVC_AUDIT_RETENTION_DAYS: audit entries older than that are deleted, a small batch per
// transaction with the event loop free between batches, so that requests (whose own audit rows
// need the write lock) wait at most one batch. Portable SQL on the stores' port.
import type { Clock } from "../core/clock";
import type { Logger } from "../core/logger";
import { betweenBatches, FleetJob, type FleetSchedule } from "../db/fleet-schedule";
import type { SqlPort } from "../db/sql-port";

const BATCH = 500;
const HOUR_MS = 3_600_000;

export class AuditRetention extends FleetJob {
  readonly name = "audit-retention";
  private readonly deleteBatch;
  private readonly dropBlocks;

  constructor(
    private readonly port: SqlPort,
    private readonly days: number,
    private readonly clock: Clock,
    logger: Logger,
    intervalMs = HOUR_MS,
    /** With several replicas, one deletes per interval. */
    schedule: FleetSchedule | null = null,
  ) {
    super(logger, schedule, intervalMs, true);
    this.deleteBatch = port.prepare<unknown, [string, number]>(
      `DELETE FROM audit_log WHERE id IN (SELECT id FROM audit_log WHERE at < ? ORDER BY at LIMIT ?)`,
    );
    // The per-token block map (migration 0005) loses the blocks wholly below the oldest entry left.
    this.dropBlocks = port.prepare<unknown, []>(
      `DELETE FROM audit_token_blocks
        WHERE (SELECT min(id) FROM audit_log) IS NULL OR block < (SELECT min(id) FROM audit_log) >> 12`,
    );
  }

  /** Deletes every entry older than the retention; resolves with how many were deleted. */
  protected async work(): Promise<number> {
    const cutoff = new Date(this.clock.now().getTime() - this.days * 86_400_000).toISOString();
    let deleted = 0;
    for (;;) {
      const n = this.port.transaction(() => this.deleteBatch.run(cutoff, BATCH).changes);
      deleted += n;
      if (n < BATCH || this.stopped) break;
      await betweenBatches();
    }
    if (deleted > 0) {
      this.dropBlocks.run();
      this.logger.info("audit entries past retention deleted", { deleted, older_than: cutoff });
    }
    return deleted;
  }
}
