// The store's workers slot: where a worker thread (an export, an import, a search) opens a
// connection of its own to the server's database, on either store. Long work runs in such threads
// so that the server's thread only answers requests: a connection of its own means the work's
// round trips and locks never wait in the server's thread (docs/architecture.md, decision 12).
import type { ExportReads } from "./export-reads";
import { openReadOnlyFile, openWriter } from "./open";
import { PostgresExportQueries } from "./pg/export-reads";
import { postgresPort } from "./pg/port";
import { PgSyncClient } from "./pg/sync-client";
import { type SqlPort, sqlitePort } from "./sql-port";
import { ExportQueries } from "./sqlite/export-reads";

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

export function openWorkerConnection(
  location: StoreLocation,
  options: WorkerConnectionOptions,
): WorkerConnection {
  if (location.kind === "sqlite") {
    const sqlite = options.mode === "read" ? openReadOnlyFile(location.path) : openWriter(location.path);
    if (options.busyTimeoutMs !== undefined) sqlite.exec(`PRAGMA busy_timeout = ${options.busyTimeoutMs}`);
    return {
      port: sqlitePort(sqlite),
      exportReads: () => new ExportQueries(sqlite),
      close: () => sqlite.close(),
    };
  }
  const client = new PgSyncClient(location.url, {
    timeoutMs: location.timeoutMs,
    readOnly: options.mode === "read",
  });
  const port = postgresPort(client);
  return { port, exportReads: () => new PostgresExportQueries(port), close: () => client.close() };
}
