// Other connections' commits to the SQLite file (another process: `svc admin`, a second server's
// readers): every read first looks at the WAL-index header and, when any connection has
// committed, asks SQLite's data_version; a commit by another connection empties the caches.
import type { Database } from "bun:sqlite";
import type { CacheChanges } from "../row-cache";
import type { WalIndexHeader } from "./wal-index-header";

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
