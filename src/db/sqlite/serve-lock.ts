// One `svc serve` per SQLite file. Rate-limit windows, row caches and the background jobs live in
// the server's memory, so a second server on the same file would silently halve every limit and
// run every job twice; it refuses to start instead. The lock is SQLite's own: a small file beside
// the database held in exclusive locking mode for the server's lifetime. The operating system
// drops it when the process ends, however it ends, so a crash leaves nothing to clean up.
import { Database } from "bun:sqlite";
import { makePrivateParent, privateFile } from "./private-files";

export class ServeLockHeld extends Error {}

export interface ServeLock {
  release(): void;
}

function serveLockPath(dbPath: string): string {
  return `${dbPath}-serve.lock`;
}

/** Takes the lock of `dbPath` or throws ServeLockHeld naming the other server; a no-op for ":memory:". */
export function acquireServeLock(dbPath: string, who: { pid: number; startedAt: string }): ServeLock {
  if (dbPath === ":memory:") return { release() {} };
  // Before the database is opened (which makes its folder): the lock comes first.
  makePrivateParent(dbPath);
  privateFile(serveLockPath(dbPath));
  const lock = new Database(serveLockPath(dbPath), { create: true });
  try {
    lock.exec("PRAGMA locking_mode = EXCLUSIVE");
    lock.exec("PRAGMA busy_timeout = 0");
    lock.exec("CREATE TABLE IF NOT EXISTS holder (pid INTEGER, started_at TEXT)");
    // The first write takes the exclusive lock and keeps it until this connection closes.
    lock.exec("BEGIN IMMEDIATE");
    lock.exec("DELETE FROM holder");
    lock.query("INSERT INTO holder (pid, started_at) VALUES (?, ?)").run(who.pid, who.startedAt);
    lock.exec("COMMIT");
  } catch (e) {
    lock.close();
    if (e instanceof Error && /locked|busy/i.test(e.message)) {
      throw new ServeLockHeld(
        `другой svc serve уже работает с базой ${dbPath}; второй сервер на том же файле дал бы каждому свои ` +
          "лимиты запросов и повторял бы фоновые задачи. Остановите первый или укажите другой SVC_DB_PATH",
      );
    }
    throw e;
  }
  return { release: () => lock.close() };
}
