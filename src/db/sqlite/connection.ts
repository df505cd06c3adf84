// Connections to the database file with the server's settings, for the server and for worker
// threads. Only bun:sqlite here: a worker thread that imports this loads nothing else (drizzle, the
// schema and the embedded migrations are open.ts's).
import { Database } from "bun:sqlite";

/** How long a statement waits for another connection's lock before SQLITE_BUSY. */
export const BUSY_TIMEOUT_MS = 5000;

export function applyPragmas(sqlite: Database, readOnly: boolean): void {
  // bun:sqlite has no lock timeout of its own.
  sqlite.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
  if (!readOnly) {
    sqlite.exec("PRAGMA journal_mode = WAL");
    sqlite.exec("PRAGMA synchronous = NORMAL");
  }
  sqlite.exec("PRAGMA foreign_keys = ON");
}

/**
 * Another connection that writes to the same file, with the same settings as the server's (a
 * worker thread's: the statement imports). Its commits are other connections' changes to the
 * server's row caches, as `svc admin`'s are.
 */
export function openWriter(path: string): Database {
  const sqlite = new Database(path, { strict: true });
  applyPragmas(sqlite, false);
  return sqlite;
}

/** A read-only connection to a database file (the agent tools', a worker thread's reads). */
export function openReadOnlyFile(path: string): Database {
  const ro = new Database(path, { readonly: true, strict: true });
  applyPragmas(ro, true);
  ro.exec("PRAGMA query_only = ON");
  return ro;
}
