// A worker thread's own connection to PostgreSQL (the workers slot: ../worker-connection.ts).
// Loaded only by the threads that reach PostgreSQL.
import type { WorkerConnection, WorkerConnectionOptions } from "../worker-types";
import { PostgresExportQueries } from "./export-reads";
import { postgresPort } from "./port";
import { PgSyncClient } from "./sync-client";

export function openPostgresWorkerConnection(
  location: { url: string; timeoutMs: number },
  options: WorkerConnectionOptions,
): WorkerConnection {
  const client = new PgSyncClient(location.url, {
    timeoutMs: location.timeoutMs,
    readOnly: options.mode === "read",
  });
  const port = postgresPort(client);
  return { port, exportReads: () => new PostgresExportQueries(port), close: () => client.close() };
}
