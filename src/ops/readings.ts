// What /metrics reads from the database and the file system at scrape time.
import { statSync } from "node:fs";
import type { Clock } from "../core/clock";
import type { Store } from "../db/store";
import type { OpsReadings } from "./metrics";

function fileBytes(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0; // no WAL yet, or an in-memory database
  }
}

export function storeReadings(store: Store, dbPath: string, clock: Clock): OpsReadings {
  const { port } = store;
  const byStatus = port.prepare<{ status: string; count: number }, []>(
    "SELECT status, count(*) AS count FROM statements GROUP BY status ORDER BY status",
  );
  const oldest = port.prepare<{ created_at: string | null }, []>(
    "SELECT min(created_at) AS created_at FROM statements WHERE status = 'processing'",
  );
  const sessions = port.prepare<{ count: number }, [number]>(
    "SELECT count(*) AS count FROM mcp_sessions WHERE expires_at_ms > ?",
  );
  // The shared database's size (PostgreSQL); it has no WAL file of svc's own.
  const pgSize =
    store.kind === "postgres"
      ? port.prepare<{ bytes: number }, []>("SELECT pg_database_size(current_database()) AS bytes")
      : null;
  return {
    statementsByStatus: () => byStatus.all(),
    oldestProcessingAgeSeconds: () => {
      const at = oldest.get()?.created_at;
      if (!at) return 0;
      return Math.max(0, (clock.now().getTime() - Date.parse(at)) / 1000);
    },
    openAgentSessions: () => sessions.get(clock.now().getTime())?.count ?? 0,
    databaseBytes: () => {
      if (pgSize) return { database: pgSize.get()?.bytes ?? 0, wal: 0 };
      return dbPath === ":memory:"
        ? { database: 0, wal: 0 }
        : { database: fileBytes(dbPath), wal: fileBytes(`${dbPath}-wal`) };
    },
  };
}
