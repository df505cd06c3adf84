// The background job that runs the due syncs of every replica: each pass asks which accounts are
// due and runs them one by one (each run claims itself, so replicas passing together order each
// piece once). A switch-on or a bank's notice asks for a pass at once (kick).
import type { Logger } from "../core/logger";
import { errorText } from "../core/logger";
import type { SyncService } from "./service";

const BATCH = 50;

export class SyncRunner {
  readonly name = "statement-sync";
  private timer: ReturnType<typeof setInterval> | null = null;
  private running: Promise<number> | null = null;
  private again = false;
  private stopped = false;

  constructor(
    private readonly syncs: SyncService,
    private readonly intervalMs: number,
    private readonly logger: Logger,
  ) {}

  start(): void {
    this.stopped = false;
    this.timer = setInterval(() => this.kick(), this.intervalMs);
    this.kick();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
  }

  /** A pass now, or right after the one in progress. */
  kick(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.runOnce().catch((e) => this.logger.error("sync pass failed", { error: errorText(e) }));
  }

  /** One pass over the due accounts; resolves with the pieces ordered (tests call it directly). */
  runOnce(): Promise<number> {
    this.running ??= (async () => {
      let ordered = 0;
      do {
        this.again = false;
        for (const id of this.syncs.due(BATCH)) {
          if (this.stopped) break;
          try {
            ordered += this.syncs.runAccount(id).length;
          } catch (e) {
            this.logger.error("sync run failed", { bank_account_id: id, error: errorText(e) });
          }
          // Requests go on between two accounts' runs.
          await new Promise<void>((resolve) => setImmediate(resolve));
        }
      } while (this.again && !this.stopped);
      return ordered;
    })().finally(() => {
      this.running = null;
    });
    return this.running;
  }
}
