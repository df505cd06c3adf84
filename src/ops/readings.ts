// What /metrics reads from the database and the file system at scrape time.
import type { Database } from "bun:sqlite";
import { statSync } from "node:fs";
import type { Clock } from "../core/clock";
import type { OpsReadings } from "./metrics";

function fileBytes(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0; // no WAL yet, or an in-memory database
  }
}

export function sqliteReadings(sqlite: Database, dbPath: string, clock: Clock): OpsReadings {
  const byStatus = sqlite.query<{ status: string; count: number }, []>(
    "SELECT status, count(*) AS count FROM statements GROUP BY status",
  );
  const oldest = sqlite.query<{ created_at: string | null }, []>(
    "SELECT min(created_at) AS created_at FROM statements WHERE status = 'processing'",
  );
  const sessions = sqlite.query<{ count: number }, [number]>(
    "SELECT count(*) AS count FROM mcp_sessions WHERE expires_at_ms > ?",
  );
  return {
    statementsByStatus: () => byStatus.all(),
    oldestProcessingAgeSeconds: () => {
      const at = oldest.get()?.created_at;
      if (!at) return 0;
      return Math.max(0, (clock.now().getTime() - Date.parse(at)) / 1000);
    },
    openAgentSessions: () => sessions.get(clock.now().getTime())?.count ?? 0,
    databaseBytes: () =>
      dbPath === ":memory:"
        ? { database: 0, wal: 0 }
        : { database: fileBytes(dbPath), wal: fileBytes(`${dbPath}-wal`) },
  };
}
