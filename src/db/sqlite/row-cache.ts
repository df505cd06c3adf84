// Rows that requests read again and again and that change rarely (tokens, their grants, bank
// accounts, statements, agent sessions, balances) are kept in memory. A cache is emptied when its
// repository writes, and all of them when another connection has committed anything (PRAGMA
// data_version moves): a token revoked by `svc admin` from another process fails from the next
// request on, as one revoked here does.
import type { Database } from "bun:sqlite";
import type { WalIndexHeader } from "./wal-index-header";

export class ExternalChanges {
  private readonly stmt;
  private version: number;
  private readonly caches: RowCache<unknown>[] = [];
  private checkedInThisRun = false;
  private readonly endRun = () => {
    this.checkedInThisRun = false;
  };

  /**
   * `header`: the database's WAL-index header; without one (in memory) every check asks SQLite.
   * `caching: false` (SVC_ROW_CACHE=off) keeps nothing: every read goes to the database.
   */
  constructor(
    sqlite: Database,
    private readonly header: WalIndexHeader | null = null,
    readonly caching = true,
  ) {
    this.stmt = sqlite.query<{ data_version: number }, []>("PRAGMA data_version");
    header?.moved();
    this.version = this.read();
  }

  register(cache: RowCache<unknown>): void {
    this.caches.push(cache);
  }

  /**
   * Empties every registered cache if another connection has committed since the last check.
   * Asks SQLite only when the WAL-index header has changed since the last look (some connection
   * committed: this process's own included); reading it is one pread instead of a statement.
   * Looks once per synchronous run of code (until the next microtask): a request asks several
   * repositories in one run, and each look is a SQLite statement, several microseconds under
   * load. Nothing of this process interleaves with a run, and another process's commit during
   * it is indistinguishable from one just after it.
   */
  check(): void {
    if (this.checkedInThisRun) return;
    this.checkedInThisRun = true;
    queueMicrotask(this.endRun);
    // No commit by any connection since the last look: nothing to ask SQLite. (The header is
    // remembered before asking, so a commit in between moves it again for the next check.)
    if (this.header && !this.header.moved()) return;
    const version = this.read();
    if (version === this.version) return;
    this.version = version;
    for (const cache of this.caches) cache.clear();
  }

  /** Empties every cache: for changes made behind the repositories on this same connection. */
  invalidate(): void {
    for (const cache of this.caches) cache.clear();
  }

  private read(): number {
    return this.stmt.get()?.data_version ?? 0;
  }
}

const MAX_ENTRIES = 10_000;

/**
 * The one way a repository keeps rows: `get` looks for other connections' commits first (once per
 * run of code) and then loads what is missing; `forget` after the repository's own write. No
 * caller has a check to remember, so none can read a row another process has changed.
 */
export class RowCache<V> {
  private readonly rows = new Map<string, V>();
  private readonly caching: boolean;

  constructor(private readonly changes: ExternalChanges) {
    this.caching = changes.caching;
    changes.register(this as RowCache<unknown>);
  }

  /** The cached row, else `load()`'s (cached unless null: misses are not kept). */
  get(key: string, load: () => V | null): V | null {
    if (!this.caching) return load();
    this.changes.check();
    const hit = this.rows.get(key);
    if (hit !== undefined) return hit;
    const row = load();
    if (row === null) return null;
    if (this.rows.size >= MAX_ENTRIES) this.rows.clear();
    this.rows.set(key, row);
    return row;
  }

  /** Drops one row (after a write to it). */
  forget(key: string): void {
    this.rows.delete(key);
  }

  clear(): void {
    this.rows.clear();
  }
}
