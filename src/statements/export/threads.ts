// Large exports are rendered by worker threads, each with its own read-only connection: the
// server's thread only passes their pages on, so a long download neither holds up other requests
// between its pages nor is limited to one core (a 155k-operation 1C export: about 135k ops/s in
// one thread, 240k with two). Workers start per export (some 20 ms) and end with it; small
// statements, an in-memory database, or too many running already: rendered in this thread. By
// default only one export at a time gets threads: on two cores, four 1C exports with two threads
// each came out slower in all than one (291k against 324k ops/s) and took 262 MB instead of 140.
// On PostgreSQL every page is a round trip, which in this thread would wait with every other
// request behind it: there exports go to threads from far fewer operations.
import { availableParallelism } from "node:os";
import type { Logger } from "../../core/logger";
import type { RequestArrivals } from "../../core/request-arrivals";
import type { LongWorkPriority } from "../../core/thread-priority";
import { workerEntry } from "../../core/worker-entry";
import type { StoreLocation } from "../../db/worker-connection";
import type { ExportJob, PageSource } from ".";
import type { ExportWorkerCommand, ExportWorkerMessage, ExportWorkerStart } from "./worker";

export interface ExportThreadsOptions {
  /** Threads per export (default: on SQLite the cores, at most 2; on PostgreSQL 1; 0: every export
   *  in the server's thread); null: the default. */
  threads?: number | null;
  /** Statements with fewer operations are rendered in the server's thread (default: 20,000 on
   *  SQLite, 2,000 on PostgreSQL). */
  minOperations?: number;
  /** Export threads running at once, over all exports (default: on SQLite `threads`, one export's
   *  worth; on PostgreSQL two exports' worth, on two cores or more). */
  maxRunning?: number;
  /** How the threads are scheduled beside the server's own (default: low). */
  priority?: LongWorkPriority;
  /** The server's count of requests: at `low`, SQLite's export threads render at normal priority
   *  until another request arrives (none given: at `low` from the start). */
  arrivals?: RequestArrivals | null;
}

const MIN_OPERATIONS = { sqlite: 20_000, postgres: 2_000 } as const;
/** On PostgreSQL an export thread spends its time waiting for round trips, and a second one per
 *  export took CPU from everyone (the database's too) for little: beside an export and a search
 *  loop an unrelated poll's p99 was 19-21 ms with two threads per export, 11-12 ms with one, while
 *  the busy export took as long (1.5-1.75 s against 1.74-1.78 s; 0.84-0.97 s against 1.26-1.4 s
 *  with the machine to itself). */
const THREADS_PER_EXPORT = { sqlite: Math.min(2, availableParallelism()), postgres: 1 } as const;
/** Exports that get threads at once, by default: on SQLite one (its threads take the cores), on
 *  PostgreSQL as many as the cores, up to 2 (a thread each). */
const EXPORTS_WITH_THREADS = { sqlite: 1, postgres: Math.min(2, availableParallelism()) } as const;
/** At `low`, whether an export's threads wait for another request before they lower themselves.
 *  On SQLite they do: alone, a lower priority only lets the download's own client and the server's
 *  thread passing the pages on come first (with idle threads a single 1C export in `make bench`,
 *  curl on the same two cores, was 25-30 % slower); so a download alone keeps its speed. On
 *  PostgreSQL not: the thread of a connection takes its priority from the export thread when it
 *  starts, and it does much of the work. */
const LOWER_ON_ARRIVAL = { sqlite: true, postgres: false } as const;
/** Pages a worker may have waiting unread: enough to keep it busy, little held in memory. */
const AHEAD = 3;
/** The worker's module (an entrypoint of the compiled binary too: see the Makefile). */
const WORKER_MODULE = "src/statements/export/worker.ts";
/** How long a worker may take to close its connection when told to stop. */
const STOP_GRACE_MS = 5000;

/** One worker: its pages in order, as they arrive. */
class ExportThread {
  private readonly worker: Worker;
  private readonly pages: Uint8Array[] = [];
  private failure: Error | null = null;
  private waiting: (() => void) | null = null;
  private grace: ReturnType<typeof setTimeout> | null = null;
  private ended = false;
  private markStopped!: () => void;
  readonly stopped = new Promise<void>((resolve) => {
    this.markStopped = resolve;
  });

  constructor(start: ExportWorkerStart, logger: Logger) {
    this.worker = new Worker(workerEntry(WORKER_MODULE), { smol: true });
    this.worker.onmessage = (event: MessageEvent<ExportWorkerMessage>) => {
      const message = event.data;
      if (message === "stopped") this.terminate();
      else if (message instanceof Uint8Array) {
        this.pages.push(message);
        this.wake();
      } else this.fail(message.error);
    };
    this.worker.onerror = (event) => {
      logger.error("export thread failed", { error: event.message });
      this.fail(event.message);
      this.terminate();
    };
    this.send({ start });
  }

  /** Its next page; throws what the worker reported. */
  async take(): Promise<Uint8Array> {
    while (this.pages.length === 0) {
      if (this.failure) throw this.failure;
      await new Promise<void>((resolve) => {
        this.waiting = resolve;
      });
    }
    this.send("more");
    return this.pages.shift()!;
  }

  /** Asks the worker to close its connection, then ends it (also when it does not answer). */
  stop(): Promise<void> {
    if (!this.ended && !this.grace) {
      this.grace = setTimeout(() => this.terminate(), STOP_GRACE_MS);
      this.send("stop");
    }
    return this.stopped;
  }

  private send(command: ExportWorkerCommand): void {
    if (!this.ended) this.worker.postMessage(command);
  }

  private fail(message: string): void {
    this.failure ??= new Error(`export page failed: ${message}`);
    this.wake();
  }

  private wake(): void {
    const waiting = this.waiting;
    this.waiting = null;
    waiting?.();
  }

  private terminate(): void {
    if (this.ended) return;
    this.ended = true;
    if (this.grace) clearTimeout(this.grace);
    this.worker.terminate();
    this.fail("stopped");
    this.markStopped();
  }
}

export class ExportThreads {
  private readonly threads: number;
  private readonly minOperations: number;
  private readonly maxRunning: number;
  private readonly priority: LongWorkPriority;
  private readonly arrivals: RequestArrivals | null;
  private running = 0;
  private readonly exports = new Set<ExportThread[]>();
  private startedOnce = false;

  /** `store`: where the threads read; null (an in-memory database): every export in this thread. */
  constructor(
    private readonly store: StoreLocation | null,
    private readonly logger: Logger,
    options: ExportThreadsOptions = {},
  ) {
    const kind = store?.kind ?? "sqlite";
    this.threads = store === null ? 0 : (options.threads ?? THREADS_PER_EXPORT[kind]);
    this.minOperations = options.minOperations ?? MIN_OPERATIONS[kind];
    this.maxRunning = options.maxRunning ?? this.threads * EXPORTS_WITH_THREADS[kind];
    this.priority = options.priority ?? "low";
    this.arrivals = this.priority === "low" && LOWER_ON_ARRIVAL[kind] ? (options.arrivals ?? null) : null;
  }

  /** Export threads running now. */
  get runningThreads(): number {
    return this.running;
  }

  /** The `pages` pages of `job` from worker threads, or null when it is rendered in this thread. */
  source(job: ExportJob, pages: number, operations: number): PageSource | null {
    const store = this.store;
    if (store === null || operations < this.minOperations) return null;
    const count = Math.min(this.threads, pages);
    if (count < 1 || this.running + count > this.maxRunning) return null;
    // This export's own request has been counted: any after it is somebody else's.
    const arrivals = this.arrivals && { buffer: this.arrivals.buffer, atStart: this.arrivals.seen() };
    // Worker i renders pages i, i + count, i + 2·count, …
    const threads = Array.from(
      { length: count },
      (_, first) =>
        new ExportThread(
          { store, priority: this.priority, arrivals, job, first, stride: count, pages, ahead: AHEAD },
          this.logger,
        ),
    );
    this.running += count;
    this.exports.add(threads);
    for (const t of threads) void t.stopped.then(() => (this.running -= 1));
    const stopAll = () => {
      this.exports.delete(threads);
      return Promise.all(threads.map((t) => t.stop()));
    };
    let n = 0;
    return {
      next: async () => {
        if (n >= pages) {
          void stopAll();
          return null;
        }
        const page = await threads[n % count]!.take();
        n += 1;
        return page;
      },
      cancel: () => void stopAll(),
    };
  }

  /**
   * Whether a large export can get its threads now: an export thread is started and told to stop
   * (it loads the worker module, which a compiled binary must carry). Once one has started, the
   * answer is kept; a failure is tried again at the next question. True when exports run here.
   */
  available(): Promise<boolean> {
    if (this.threads === 0) return Promise.resolve(true);
    if (this.startedOnce) return Promise.resolve(true);
    return new Promise<boolean>((resolve) => {
      const worker = new Worker(workerEntry(WORKER_MODULE), { smol: true });
      const done = (ok: boolean) => {
        clearTimeout(timer);
        worker.terminate();
        if (ok) this.startedOnce = true;
        resolve(ok);
      };
      const timer = setTimeout(() => done(false), STOP_GRACE_MS);
      worker.onmessage = (event: MessageEvent<ExportWorkerMessage>) => done(event.data === "stopped");
      worker.onerror = () => done(false);
      worker.postMessage("stop" satisfies ExportWorkerCommand);
    });
  }

  /** Stops the exports still running (the server is stopping). */
  async stop(): Promise<void> {
    await Promise.all([...this.exports].flatMap((threads) => threads.map((t) => t.stop())));
    this.exports.clear();
  }
}
