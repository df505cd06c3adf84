// Agent calls are audited at a high rate; one SQLite commit per entry was the largest single cost
// of a tool call. Entries written during one event-loop turn are committed together, and each
// caller's promise settles only once its entry is committed (or the commit failed): no data goes
// out unaudited.
import { type Metrics, noMetrics } from "../core/metrics";
import type { AuditEntryInput, AuditLog } from "./audit-log";

interface Pending {
  entry: AuditEntryInput;
  resolve: () => void;
  reject: (error: unknown) => void;
}

export interface AuditSink {
  write(entry: AuditEntryInput): void | Promise<void>;
}

export class AuditBatcher implements AuditSink {
  private queue: Pending[] = [];
  private scheduled = false;

  constructor(
    private readonly log: AuditLog,
    private readonly metrics: Metrics = noMetrics,
  ) {}

  write(entry: AuditEntryInput): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ entry, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  /** Commits every queued entry in one transaction; all settle together. */
  flush(): void {
    this.scheduled = false;
    const batch = this.queue;
    this.queue = [];
    if (batch.length === 0) return;
    const started = performance.now();
    try {
      this.log.writeAll(batch.map((p) => p.entry));
    } catch (error) {
      for (const p of batch) p.reject(error);
      return;
    }
    this.metrics.auditCommit((performance.now() - started) / 1000);
    for (const p of batch) p.resolve();
  }
}
