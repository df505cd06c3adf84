// Row caches on PostgreSQL. Other replicas write the same tables, so a cached row may be stale the
// moment another replica commits. PostgreSQL announces every committed change of a cached table
// (a row trigger NOTIFYs its name, delivered at commit; migrations-pg 0001), the client's
// worker counts the announcements per table, and a cache looks at the count before it answers:
// a token revoked on one replica fails on every replica from their next request on. While no
// listener is connected (the connection dropped, the worker restarted) nothing is kept at all;
// when one listens again every cache starts empty, since changes made meanwhile are unknown.
import type { CacheChanges } from "../row-cache";
import type { PgSyncClient } from "./sync-client";

/** The tables svc keeps rows of (RowCache users); the migration announces changes of these. */
export const CACHED_TABLES = [
  "api_tokens",
  "token_accounts",
  "bank_accounts",
  "balances",
  "mcp_sessions",
  "statements",
] as const;

export class PgChangeFeed implements CacheChanges {
  private readonly clears = new Map<string, (() => void)[]>();
  private seen: number[] | null = null;
  private checkedInThisRun = false;
  private readonly endRun = () => {
    this.checkedInThisRun = false;
  };

  constructor(
    private readonly client: PgSyncClient,
    readonly keepRows = true,
  ) {}

  register(clear: () => void, table: string): void {
    if (!this.client.watched.includes(table)) throw new Error(`changes of ${table} are not announced`);
    const list = this.clears.get(table) ?? [];
    list.push(clear);
    this.clears.set(table, list);
  }

  /** Empties every cache: for changes made behind the repositories. */
  invalidate(): void {
    for (const list of this.clears.values()) for (const clear of list) clear();
  }

  /** Empties the caches of every table that changed since the last look (once per run of code,
   *  as ExternalChanges does on SQLite: the look reads shared memory, no statement). */
  check(): void {
    if (this.checkedInThisRun) return;
    this.checkedInThisRun = true;
    queueMicrotask(this.endRun);
    const { listening, counts } = this.client.changes();
    const watched = this.client.watched;
    for (let i = 0; i < watched.length; i++) {
      if (!listening || this.seen === null || counts[i] !== this.seen[i]) {
        for (const clear of this.clears.get(watched[i]!) ?? []) clear();
      }
    }
    this.seen = listening ? counts : null;
  }
}
