// Checkpoints of the WAL move out of the request path. By default SQLite checkpoints inside the
// commit that grows the WAL past 1000 pages: that request (and every request behind it on the
// event loop) waits for the copy and two fsyncs. Under agent load, whose every call commits an
// audit entry, those commits were most of the slowest 1 %. A worker thread with its own connection
// checkpoints every interval instead; the server's own connection keeps a much higher automatic
// threshold only as a safety net, and goes back to SQLite's default if the worker fails.
import type { Database } from "bun:sqlite";
import type { Logger } from "../../core/logger";
import { workerEntry } from "../../core/worker-entry";
import type { CheckpointWorkerStart } from "./checkpoint-worker";

const CHECKPOINT_INTERVAL_MS = 20;
/** The server connection's own threshold while the worker runs (pages; 4 KB each). */
export const SAFETY_NET_PAGES = 10_000;
const SQLITE_DEFAULT_PAGES = 1000;

export class WalCheckpointer {
  readonly name = "wal-checkpointer";
  private worker: Worker | null = null;

  constructor(
    private readonly sqlite: Database,
    private readonly path: string,
    private readonly logger: Logger,
    private readonly intervalMs = CHECKPOINT_INTERVAL_MS,
  ) {}

  start(): void {
    if (this.worker || this.path === ":memory:") return;
    const worker = new Worker(workerEntry("src/db/sqlite/checkpoint-worker.ts"));
    this.worker = worker;
    worker.onmessage = (event: MessageEvent<"started" | "recovered" | "stopped" | { error: string }>) => {
      if (event.data === "started") {
        this.sqlite.exec(`PRAGMA wal_autocheckpoint = ${SAFETY_NET_PAGES}`);
        this.logger.info("database checkpoints run in a worker thread", {
          interval_ms: this.intervalMs,
        });
      } else if (event.data === "recovered") {
        this.logger.info("background checkpoints work again");
      } else if (typeof event.data === "object") {
        this.logger.warn("background checkpoints fail; retried every interval", { error: event.data.error });
      }
    };
    worker.onerror = (event) => {
      this.logger.warn("checkpoint worker failed; checkpoints happen on commit again", {
        error: event.message,
      });
      this.fallBack();
    };
    worker.postMessage({ path: this.path, intervalMs: this.intervalMs } satisfies CheckpointWorkerStart);
  }

  /** Stops the worker after a last checkpoint (waiting at most two seconds for it). */
  async stop(): Promise<void> {
    const worker = this.worker;
    if (!worker) return;
    await new Promise<void>((resolve) => {
      const done = setTimeout(resolve, 2000);
      worker.onmessage = (event) => {
        if (event.data === "stopped") {
          clearTimeout(done);
          resolve();
        }
      };
      worker.postMessage("stop");
    });
    this.fallBack();
  }

  /** What SQLite does by itself: checkpoint on commit past 1000 pages. */
  private fallBack(): void {
    this.worker?.terminate();
    this.worker = null;
    try {
      this.sqlite.exec(`PRAGMA wal_autocheckpoint = ${SQLITE_DEFAULT_PAGES}`);
    } catch {
      // The connection is already closed.
    }
  }
}
