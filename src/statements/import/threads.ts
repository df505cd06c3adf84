// Imports of large files run in worker threads (worker.ts), one per import, each parsing the file
// and storing its operations through a connection of its own: the server's thread meanwhile only
// answers other requests (a 45 MB file of 49,600 documents held it for 8.9 s before). At most
// `maxRunning` imports have threads at once; more wait for one to end (each holds its file and
// its parsed operations, some hundreds of MB for the largest). Small files, and every file of an
// in-memory database (no other connection can see it), are imported in the server's thread.
import type { Logger } from "../../core/logger";
import { workerEntry } from "../../core/worker-entry";
import type { StoreLocation } from "../../db/worker-connection";
import type { StatementRepository } from "../repository";
import {
  errorOf,
  type ImportJob,
  type ImportLease,
  type ImportRunner,
  type ImportSummary,
  inlineImports,
  type ParsedImport,
} from ".";
import type { ImportWorkerCommand, ImportWorkerMessage } from "./worker";

export interface ImportThreadsOptions {
  /** Files smaller than this are imported in the server's thread (default 1 MB). */
  minBytes?: number;
  /** Imports with a thread at once (default 2). */
  maxRunning?: number;
}

/** The worker's module (an entrypoint of the compiled binary too: see the Makefile). */
const WORKER_MODULE = "src/statements/import/worker.ts";
const MIN_BYTES = 1 << 20;
const MAX_RUNNING = 2;

/** One import's thread: its answers in order, as they arrive. */
class ImportThread {
  // A full-size heap: the worker holds a 50 MB file and its documents as objects.
  private readonly worker = new Worker(workerEntry(WORKER_MODULE));
  private readonly messages: ImportWorkerMessage[] = [];
  private waiting: (() => void) | null = null;
  private ended = false;
  private markEnded!: () => void;
  readonly done = new Promise<void>((resolve) => {
    this.markEnded = resolve;
  });

  constructor(logger: Logger) {
    this.worker.onmessage = (event: MessageEvent<ImportWorkerMessage>) => {
      const message = event.data;
      // A chunk is stored: the next may start (this runs when the server's thread is free).
      if (typeof message === "object" && "chunk" in message) this.send("next");
      else this.push(message);
    };
    this.worker.onerror = (event) => {
      logger.error("import thread failed", { error: event.message });
      this.push({ failed: { internal: event.message } });
      this.end();
    };
  }

  send(command: ImportWorkerCommand, transfer: ArrayBuffer[] = []): void {
    if (!this.ended) this.worker.postMessage(command, transfer);
  }

  /** The next answer; a failure is thrown as the error it stands for. */
  async next(): Promise<ImportWorkerMessage> {
    while (this.messages.length === 0) {
      if (this.ended) throw new Error("statement import thread ended");
      await new Promise<void>((resolve) => {
        this.waiting = resolve;
      });
    }
    const message = this.messages.shift()!;
    if (typeof message === "object" && "failed" in message) {
      this.end();
      throw errorOf(message.failed);
    }
    return message;
  }

  async storeAs(statementId: string, bankAccountId: string, lease: ImportLease): Promise<string[]> {
    this.send({ store: { statementId, bankAccountId, lease } });
    try {
      const message = await this.next();
      if (typeof message === "object" && "stored" in message) return message.stored;
      throw new Error("statement import thread: unexpected answer");
    } finally {
      this.end();
    }
  }

  private push(message: ImportWorkerMessage): void {
    this.messages.push(message);
    const waiting = this.waiting;
    this.waiting = null;
    waiting?.();
  }

  /** Ends the thread (its connection, if open, goes with it: SQLite and PostgreSQL roll back). */
  end(): void {
    if (this.ended) return;
    this.ended = true;
    this.worker.terminate();
    const waiting = this.waiting;
    this.waiting = null;
    waiting?.();
    this.markEnded();
  }
}

export class ImportThreads implements ImportRunner {
  private readonly minBytes: number;
  private readonly maxRunning: number;
  private readonly inline: ImportRunner;
  private running = 0;
  private readonly queue: (() => void)[] = [];
  private readonly threads = new Set<ImportThread>();

  /** `store`: where workers store; null: every import in the server's thread. */
  constructor(
    private readonly store: StoreLocation | null,
    repo: StatementRepository,
    private readonly logger: Logger,
    options: ImportThreadsOptions = {},
  ) {
    this.inline = inlineImports(repo);
    this.minBytes = options.minBytes ?? MIN_BYTES;
    this.maxRunning = options.maxRunning ?? MAX_RUNNING;
  }

  async parse(job: ImportJob): Promise<ParsedImport> {
    const store = this.store;
    if (store === null || job.bytes.byteLength < this.minBytes) return this.inline.parse(job);
    await this.slot();
    const thread = new ImportThread(this.logger);
    this.threads.add(thread);
    void thread.done.then(() => {
      this.threads.delete(thread);
      this.release();
    });
    // Handed over, not copied: the request's bytes are the worker's from here on.
    const bytes = job.bytes.slice();
    thread.send({ parse: { store, job: { ...job, bytes } } }, [bytes.buffer as ArrayBuffer]);
    let summary: ImportSummary;
    try {
      const message = await thread.next();
      if (typeof message !== "object" || !("parsed" in message)) throw new Error("unexpected answer");
      summary = message.parsed;
    } catch (e) {
      thread.end();
      throw e;
    }
    return {
      summary,
      store: (statementId, bankAccountId, lease) => thread.storeAs(statementId, bankAccountId, lease),
      discard: () => thread.end(),
    };
  }

  /** Stops the imports still running (the server is stopping): their statements stay processing. */
  stop(): void {
    for (const thread of this.threads) thread.end();
  }

  private async slot(): Promise<void> {
    if (this.running < this.maxRunning) {
      this.running += 1;
      return;
    }
    await new Promise<void>((resolve) => this.queue.push(resolve));
  }

  private release(): void {
    const next = this.queue.shift();
    if (next) next();
    else this.running -= 1;
  }
}
