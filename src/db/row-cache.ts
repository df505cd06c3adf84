// Rows that requests read again and again and that change rarely (tokens, their grants, bank
// accounts, statements, agent sessions, balances) are kept in memory. A cache forgets what its
// repository writes, and all of them are emptied when another connection has committed anything
// (PRAGMA data_version moves): a token revoked by `svc admin` from another process fails from the
// next request on, as one revoked here does.
//
// The rule lives here, not in the repositories: `RowCache.get` looks for other connections'
// commits before it answers, and `write`/`writeAll` forget after the write they run. A repository
// has no way to read a row without the look nor to forget one without writing.
/** What a RowCache needs of whoever watches for other writers: ExternalChanges on SQLite,
 *  PgChangeFeed on PostgreSQL (which empties only the caches of the tables that changed). */
export interface CacheChanges {
  readonly keepRows: boolean;
  register(clear: () => void, table: string): void;
  check(): void;
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
