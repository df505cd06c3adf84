// GET /readyz: whether this process can do its work now (liveness is /healthz). Each check names
// what failed, so that a load balancer's log or an operator's curl says why.
import type { Clock } from "../core/clock";
import type { WriteCheck } from "../db/store";

export type CheckResult = "ok" | string;

/**
 * How long another connection (an `svc admin` command, a script) may be seen holding SQLite's
 * write lock before the database counts as not writable: a lock held that long makes the server's
 * own writes give up after their busy_timeout.
 */
export const WRITE_LOCK_HELD_TOO_LONG_MS = 30_000;

/**
 * The readiness check of the database from the store's lock-free probe: "ok" while the write
 * lock is free or has been seen taken for less than WRITE_LOCK_HELD_TOO_LONG_MS, else why not.
 */
export function databaseWritableCheck(probe: () => WriteCheck, clock: Clock): () => CheckResult {
  let busySinceMs: number | null = null;
  return () => {
    const result = probe();
    if (result.state !== "busy") {
      busySinceMs = null;
      return result.state === "ok" ? "ok" : result.reason;
    }
    const now = clock.now().getTime();
    busySinceMs ??= now;
    const heldMs = now - busySinceMs;
    if (heldMs < WRITE_LOCK_HELD_TOO_LONG_MS) return "ok";
    return `database not writable: another connection has held the write lock for ${Math.round(heldMs / 1000)} s`;
  };
}

export interface ReadinessDeps {
  /** Whether the database takes writes now ("ok" or why not); never waits for a lock. */
  databaseWritable: () => CheckResult;
  clock: Clock;
  /** Migrations this binary carries vs. those the database has applied. */
  migrations: () => { embedded: number; applied: number };
  /** When the statement poller last finished a pass (ms), and its interval. */
  poller: { lastPassAtMs: () => number | null; intervalMs: number };
  /** Whether a large export can get its threads (true when exports run in the server's thread). */
  exportThreads: () => Promise<boolean>;
}

export interface Readiness {
  ready: boolean;
  checks: Record<"database" | "migrations" | "poller" | "export_threads", CheckResult>;
}

export async function checkReadiness(deps: ReadinessDeps): Promise<Readiness> {
  const checks: Readiness["checks"] = {
    database: deps.databaseWritable(),
    migrations: migrationsCurrent(deps.migrations),
    poller: pollerAlive(deps),
    export_threads: (await deps.exportThreads().catch(() => false)) ? "ok" : "export threads cannot start",
  };
  return { ready: Object.values(checks).every((c) => c === "ok"), checks };
}

function migrationsCurrent(migrations: ReadinessDeps["migrations"]): CheckResult {
  try {
    const { embedded, applied } = migrations();
    if (applied === embedded) return "ok";
    return `migrations: ${applied} applied, ${embedded} expected`;
  } catch (e) {
    return `migrations unreadable: ${e instanceof Error ? e.message : String(e)}`;
  }
}

function pollerAlive(deps: ReadinessDeps): CheckResult {
  const last = deps.poller.lastPassAtMs();
  if (last === null) return "statement poller has not finished a pass yet";
  const ageMs = deps.clock.now().getTime() - last;
  if (ageMs <= 3 * deps.poller.intervalMs) return "ok";
  return `statement poller's last pass was ${Math.round(ageMs / 1000)} s ago`;
}
