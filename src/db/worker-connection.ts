// The store's workers slot: where a worker thread (an export, an import, a search) opens a
// connection of its own to the server's database, on either store. Long work runs in such threads
// so that the server's thread only answers requests: a connection of its own means the work's
// round trips and locks never wait in the server's thread (docs/architecture.md, decision 12).
import type { SqlPort } from "./sql-port";
import { openReadOnlyFile, openWriter } from "./sqlite/connection";
import { ExportQueries } from "./sqlite/export-reads";
import type { StoreLocation, WorkerConnection, WorkerConnectionOptions } from "./worker-types";

export type { StoreLocation, WorkerConnection, WorkerConnectionOptions } from "./worker-types";

export function openWorkerConnection(
  location: StoreLocation,
  options: WorkerConnectionOptions,
): WorkerConnection {
  if (location.kind === "sqlite") {
    const sqlite = options.mode === "read" ? openReadOnlyFile(location.path) : openWriter(location.path);
    if (options.busyTimeoutMs !== undefined) sqlite.exec(`PRAGMA busy_timeout = ${options.busyTimeoutMs}`);
    let port: SqlPort | null = null;
    return {
      // Made on first use: an export thread never needs it, and its modules (drizzle's, the
      // errors') would cost every export thread their memory.
      get port() {
        port ??= (require("./sql-port") as typeof import("./sql-port")).sqlitePort(sqlite);
        return port;
      },
      exportReads: () => new ExportQueries(sqlite),
      close: () => sqlite.close(),
    };
  }
  // PostgreSQL's modules are loaded by the threads that reach it only. With them, and with the
  // port's, every SQLite export thread held more memory: the server's peak RSS during a
  // 155k-operation json export was 180-200 MB, against 150-165 MB without (as before threads
  // opened their connections here).
  const { openPostgresWorkerConnection } =
    require("./pg/worker-connection") as typeof import("./pg/worker-connection");
  return openPostgresWorkerConnection(location, options);
}
