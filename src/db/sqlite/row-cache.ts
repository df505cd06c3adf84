// Rows that requests read again and again and that change rarely (tokens, their grants, bank
// accounts, statements, agent sessions, balances) are kept in memory. A cache forgets what its
// repository writes, and all of them are emptied when another connection has committed anything
// (PRAGMA data_version moves): a token revoked by `svc admin` from another process fails from the
// next request on, as one revoked here does.
//
// The rule lives here, not in the repositories: `RowCache.get` looks for other connections'
// commits before it answers, and `write`/`writeAll` forget after the write they run. A repository
// has no way to read a row without the look nor to forget one without writing.
import type { Database } from "bun:sqlite";
import type { WalIndexHeader } from "./wal-index-header";

/** What a RowCache needs of whoever watches for other writers: ExternalChanges on SQLite,
 *  PgChangeFeed on PostgreSQL (which empties only the caches of the tables that changed). */
export interface CacheChanges {
  readonly keepRows: boolean;
  register(clear: () => void, table: string): void;
  check(): void;
}

export class ExternalChanges implements CacheChanges {
  private readonly stmt;
  private version: number;
  private readonly clears: (() => void)[] = [];
  private checkedInThisRun = false;
  private readonly endRun = () => {
    this.checkedInThisRun = false;
  };

  /**
   * `header`: the database's WAL-index header; without one (in memory) every check asks SQLite.
   * `keepRows` false (SVC_ROW_CACHE=off): caches keep nothing, every read goes to the database.
   */
  constructor(
    sqlite: Database,
    private readonly header: WalIndexHeader | null = null,
    readonly keepRows = true,
  ) {
    this.stmt = sqlite.query<{ data_version: number }, []>("PRAGMA data_version");
    header?.moved();
    this.version = this.read();
  }

  /** How a cache is emptied when another connection has committed (see `RowCache`); any commit
   *  empties every cache here, whatever its table. */
  register(clear: () => void, _table: string): void {
    this.clears.push(clear);
  }

  /**
   * Empties every registered cache if another connection has committed since the last check.
   * Asks SQLite only when the WAL-index header has changed since the last look (some connection
   * committed: this process's own included); reading it is one pread instead of a statement.
   * Looks once per synchronous run of code (until the next microtask): a request asks several
   * caches in one run, and each look is a SQLite statement, several microseconds under load.
   * Nothing of this process commits through another connection during a run, and another
   * process's commit during it is indistinguishable from one just after it.
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
    for (const clear of this.clears) clear();
  }

  /** Empties every cache: for changes made behind the repositories on this same connection. */
  invalidate(): void {
    for (const clear of this.clears) clear();
  }

  private read(): number {
    return this.stmt.get()?.data_version ?? 0;
  }
}

const MAX_ENTRIES = 10_000;

export class RowCache<V> {
  private readonly rows = new Map<string, V>();
  private readonly keepRows: boolean;

  /** `table`: where the rows come from (a change there empties this cache). */
  constructor(
    private readonly changes: CacheChanges,
    table: string,
  ) {
    this.keepRows = changes.keepRows;
    if (this.keepRows) changes.register(() => this.rows.clear(), table);
  }

  /**
   * The cached row, else `load()`'s (cached unless null: misses are not kept). Other connections'
   * commits are looked for first (once per run of code). Treat the result as read-only: it may be
   * shared with other requests.
   */
  get(key: string, load: () => V | null): V | null {
    if (!this.keepRows) return load();
    this.changes.check();
    const hit = this.rows.get(key);
    if (hit !== undefined) return hit;
    const row = load();
    if (row === null) return null;
    if (this.rows.size >= MAX_ENTRIES) this.rows.clear();
    this.rows.set(key, row);
    return row;
  }

  /** Runs `write`, a change to the row `key`, then forgets that row (also when the write throws). */
  write<T>(key: string, write: () => T): T {
    try {
      return write();
    } finally {
      this.rows.delete(key);
    }
  }

  /** Runs `write`, a change to any rows, then forgets every row (also when the write throws). */
  writeAll<T>(write: () => T): T {
    try {
      return write();
    } finally {
      this.rows.clear();
    }
  }
}
