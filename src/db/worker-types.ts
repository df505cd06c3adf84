// What a worker thread's own connection is (the workers slot, worker-connection.ts), apart from
// how each store opens one, so that PostgreSQL's opener (pg/worker-connection.ts) needs nothing of
// the module that loads it.
import type { ExportReads } from "./export-reads";
import type { SqlPort } from "./sql-port";

/** The server's database as a worker thread reaches it: plain data, posted to the thread. */
export type StoreLocation =
  | { kind: "sqlite"; path: string }
  | { kind: "postgres"; url: string; timeoutMs: number };

/** A worker's own connection: statements through `port`, or the export reads over it. */
export interface WorkerConnection {
  readonly port: SqlPort;
  exportReads(): ExportReads;
  close(): void;
}

export interface WorkerConnectionOptions {
  /** "read": the database itself refuses writes through it (as the agent tools' connection). */
  mode: "read" | "write";
  /** SQLite: how long a statement waits for another connection's write lock. */
  busyTimeoutMs?: number;
}
