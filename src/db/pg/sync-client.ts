// A synchronous PostgreSQL client. svc's stores are synchronous (bun:sqlite): a request's reads,
// decisions and writes run without yielding, and a transaction is a plain function. This client
// keeps that shape on PostgreSQL: a worker thread holds the connection (postgres.js) and the
// server's thread waits for each answer with Atomics.wait, bounded by a timeout, as it waits for
// SQLite's disk today. Measured on this project's machines: 128 µs a statement against 103 µs
// for sequential awaits of postgres.js (docs/architecture.md, "PostgreSQL behind synchronous stores").
import { deserialize } from "bun:jsc";
import { workerEntry } from "../../core/worker-entry";
import { StoreUnavailable } from "../sql-port";
import { describeDatabaseUrl } from "./connect";
import {
  ANSWER_ID,
  ANSWER_LENGTH,
  CHANGES_FROM,
  LISTENING,
  type SyncAnswer,
  type SyncWorkerMessage,
} from "./sync-protocol";

export interface PgSyncOptions {
  /** The longest a statement may take, connecting included, before the caller hears "unavailable". */
  timeoutMs: number;
  /** Tables whose announced changes `changes()` counts (see PgChangeFeed). */
  watch?: string[];
  /** Every transaction of the connection read-only: PostgreSQL itself refuses writes through it. */
  readOnly?: boolean;
}

/** An SQL error PostgreSQL answered with (a constraint, a syntax error…): `code` is its SQLSTATE. */
export class PgQueryError extends Error {
  override name = "PgQueryError";
  constructor(
    message: string,
    readonly code: string | null,
  ) {
    super(message);
  }
}

/** PostgreSQL did not answer in time, or could not be reached: the statement's fate is unknown
 *  to the caller, the connection is dropped (an open transaction is rolled back by the server). */
export class PgUnavailable extends StoreUnavailable {
  override name = "PgUnavailable";
}

const INITIAL_BUFFER = 1 << 20;

export class PgSyncClient {
  private worker: Worker | null = null;
  // Kept across restarts of the worker: answer ids only grow, change counts only grow.
  private readonly control: Int32Array;
  private data = new SharedArrayBuffer(INITIAL_BUFFER);
  private nextId = 1;
  private open = false;

  constructor(
    private readonly url: string,
    private readonly options: PgSyncOptions,
  ) {
    this.control = new Int32Array(new SharedArrayBuffer(4 * (CHANGES_FROM + (options.watch?.length ?? 0))));
  }

  /** Whether a transaction of this client is open (statements now run inside it). */
  get inTransaction(): boolean {
    return this.open;
  }

  /** The tables whose changes `changes()` counts, in its order. */
  get watched(): readonly string[] {
    return this.options.watch ?? [];
  }

  /**
   * Whether the change listener is connected, and how many changes of each watched table were
   * announced so far (in `watch` order). Starts the worker (and its listener) if it is not running.
   */
  changes(): { listening: boolean; counts: number[] } {
    if (this.worker === null) this.start();
    const counts = (this.options.watch ?? []).map((_, i) => Atomics.load(this.control, CHANGES_FROM + i));
    return { listening: Atomics.load(this.control, LISTENING) === 1, counts };
  }

  /** The rows of one statement ($1, $2… parameters). */
  query<Row = Record<string, unknown>>(text: string, params: unknown[] = []): Row[] {
    return this.send(text, params).rows as Row[];
  }

  /** A statement's affected row count. */
  run(text: string, params: unknown[] = []): number {
    return this.send(text, params).count;
  }

  /** Runs `work` in one transaction: committed when it returns, rolled back when it throws. */
  transaction<T>(work: () => T, isolation: "read committed" | "serializable" = "read committed"): T {
    if (this.open) throw new Error("transactions do not nest");
    this.send(
      `BEGIN ISOLATION LEVEL ${isolation === "serializable" ? "SERIALIZABLE" : "READ COMMITTED"}`,
      [],
    );
    this.open = true;
    try {
      const result = work();
      this.send("COMMIT", []);
      return result;
    } catch (e) {
      if (this.worker !== null) {
        try {
          this.send("ROLLBACK", []);
        } catch {
          // The connection is gone: the server rolls the transaction back itself.
        }
      }
      throw e;
    } finally {
      this.open = false;
    }
  }

  close(): void {
    this.drop();
  }

  private send(text: string, params: unknown[]): { rows: unknown[]; count: number } {
    const worker = this.worker ?? this.start();
    const id = this.nextId++;
    worker.postMessage({ kind: "query", id, text, params } satisfies SyncWorkerMessage);
    let length = this.await(id);
    if (length < 0) {
      let size = this.data.byteLength;
      while (size < -length) size *= 2;
      this.data = new SharedArrayBuffer(size);
      // The worker answers a resend under the same id: clear the mark before asking, then wait for it.
      Atomics.store(this.control, ANSWER_ID, 0);
      worker.postMessage({ kind: "resend", id, data: this.data } satisfies SyncWorkerMessage);
      length = this.await(id);
    }
    const answer = deserialize(new Uint8Array(this.data, 0, length).slice()) as SyncAnswer;
    if ("error" in answer) {
      if (answer.error.connection) {
        this.drop();
        throw new PgUnavailable(`PostgreSQL ${describeDatabaseUrl(this.url)}: ${answer.error.message}`);
      }
      throw new PgQueryError(answer.error.message, answer.error.code);
    }
    return answer;
  }

  /** Waits for the answer `id`; its length (negative: needs a larger buffer). */
  private await(id: number): number {
    const deadline = performance.now() + this.options.timeoutMs;
    for (;;) {
      const seen = Atomics.load(this.control, ANSWER_ID);
      if (seen === id) return Atomics.load(this.control, ANSWER_LENGTH);
      const left = deadline - performance.now();
      if (left <= 0 || Atomics.wait(this.control, ANSWER_ID, seen, left) === "timed-out") {
        this.drop();
        throw new PgUnavailable(
          `PostgreSQL ${describeDatabaseUrl(this.url)}: no answer within ${this.options.timeoutMs} ms`,
        );
      }
    }
  }

  /** A fresh thread and connection on the next statement; a late answer of this one is never read. */
  private drop(): void {
    this.worker?.terminate();
    this.worker = null;
    this.open = false;
    // Its listener went with it: until the next one listens, nothing may be kept.
    Atomics.store(this.control, LISTENING, 0);
  }

  private start(): Worker {
    const worker = new Worker(workerEntry("src/db/pg/sync-worker.ts"), { smol: true });
    // Only a statement in flight needs the thread, and the caller is waiting for that one.
    worker.unref();
    worker.postMessage({
      kind: "start",
      url: this.url,
      statementTimeoutMs: this.options.timeoutMs,
      connectTimeoutSeconds: Math.max(1, Math.ceil(this.options.timeoutMs / 1000)),
      control: this.control.buffer as SharedArrayBuffer,
      data: this.data,
      watch: this.options.watch ?? [],
      readOnly: this.options.readOnly ?? false,
    } satisfies SyncWorkerMessage);
    this.worker = worker;
    return worker;
  }
}
