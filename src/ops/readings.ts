// What /metrics reads from the database at scrape time (its size is the store's to tell).
import type { Clock } from "../core/clock";
import type { Store } from "../db/store";
import type { OpsReadings } from "./metrics";

export function storeReadings(store: Store, clock: Clock, syncLags: OpsReadings["syncLags"]): OpsReadings {
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
  return {
    statementsByStatus: () => byStatus.all(),
    oldestProcessingAgeSeconds: () => {
      const at = oldest.get()?.created_at;
      if (!at) return 0;
      return Math.max(0, (clock.now().getTime() - Date.parse(at)) / 1000);
    },
    openAgentSessions: () => sessions.get(clock.now().getTime())?.count ?? 0,
    databaseBytes: () => store.databaseBytes(),
    syncLags,
  };
}
