// The database a process works on, whichever it is: one SQLite file (the default: one server), or
// a PostgreSQL database shared by several replicas (SVC_DATABASE_URL). Everything above the stores
// sees the same things of both: a port for statements, a read-only one for the agent tools, the
// changes that empty row caches, and what readiness and metrics ask of the database. Where the two
// differ for the process around them (its size, the shared rate limits, the jobs and backups of a
// local file), the store answers for its dialect: nothing above db/ asks which one it holds.
import type { Database } from "bun:sqlite";
import { statSync } from "node:fs";
import type { Clock } from "../core/clock";
import type { Logger } from "../core/logger";
import type { RateLimiter } from "../core/rate-window";
import type { LongWorkPriority } from "../core/thread-priority";
import type { ExportReads } from "./export-reads";
import { migrate, migrationState, type OpenedDatabase, openDatabase, openReadOnly } from "./open";
import { CACHED_TABLES, PgChangeFeed } from "./pg/change-feed";
import { connectPostgres, describeDatabaseUrl } from "./pg/connect";
import { PostgresExportQueries } from "./pg/export-reads";
import { embeddedPgMigrations, migratePostgres } from "./pg/migrate";
import { postgresPort } from "./pg/port";
import { PostgresRateLimiter } from "./pg/rate-limiter";
import { PgSyncClient } from "./pg/sync-client";
import type { CacheChanges } from "./row-cache";
import { type OperationSearches, searchesHere, searchesInThreads } from "./search-threads";
import { type SqlPort, sqlitePort } from "./sql-port";
import { BUSY_TIMEOUT_MS } from "./sqlite/connection";
import { ExportQueries } from "./sqlite/export-reads";
import { ExternalChanges } from "./sqlite/external-changes";
import { WalCheckpointer } from "./sqlite/wal-checkpointer";
import type { StoreLocation } from "./worker-connection";

/** What opening a store needs of the configuration (SVC_DB_PATH, SVC_DATABASE_URL, …). */
export interface StoreSettings {
  dbPath: string;
  /** null: the SQLite file at dbPath. */
  databaseUrl: string | null;
  databaseTimeoutMs: number;
  /** Rows kept in memory between requests (SVC_ROW_CACHE). */
  rowCache: boolean;
  /** Worker threads for search_operations (SVC_SEARCH_THREADS; 0 or none given: this thread). */
  searchThreads?: number;
  /** How the search threads are scheduled (SVC_LONG_WORK_PRIORITY; none given: low). */
  longWorkPriority?: LongWorkPriority;
}

/**
 * "ok"; "busy": another connection holds SQLite's write lock at this moment (a write would wait
 * for it, up to busy_timeout); "failed": a write would fail, and why.
 */
export type WriteCheck = { state: "ok" } | { state: "busy" } | { state: "failed"; reason: string };

/** Something that runs in the background of the server process and must stop cleanly. */
export interface BackgroundJob {
  name: string;
  start(): void;
  stop(): Promise<void>;
}

/** Row-cache changes, and a way to forget everything (after a change made behind the stores). */
export interface StoreChanges extends CacheChanges {
  invalidate(): void;
}

interface StoreBase {
  /** The stores' statements and transactions. */
  readonly port: SqlPort;
  /** The agent tools' reads: the database itself refuses writes through it. */
  readonly readPort: SqlPort;
  readonly changes: StoreChanges;
  /**
   * Where worker threads open connections of their own (exports, imports, searches); null for an
   * in-memory database, which no other connection can see: its long work runs in this thread.
   */
  readonly workerLocation: StoreLocation | null;
  /** What the statement exports read in this thread. */
  readonly exportReads: ExportReads;
  /** search_operations' searches and totals: in the store's search threads, or here. */
  readonly searches: OperationSearches;
  /** Migrations this build carries vs. those the database has applied. */
  migrationState(): { embedded: number; applied: number };
  /** Whether a write would succeed now, learnt without waiting for any lock. */
  writable(): WriteCheck;
  /** The database's size for /metrics: SQLite's file and its WAL; PostgreSQL's whole database
   *  (it has no WAL file of svc's own). */
  databaseBytes(): { database: number; wal: number };
  /** Rate limits counted in the database, shared by the replicas; null: each process counts its
   *  own (one SQLite server counts in its memory). */
  sharedRateLimiter(clock: Clock, timeoutMs: number): RateLimiter | null;
  /** The jobs the database needs of the server process (SQLite's WAL checkpoints, unless an
   *  external replicator owns them); none for PostgreSQL, whose server does its own. */
  backgroundJobs(settings: { checkpoints: "internal" | "external" }, logger: Logger): BackgroundJob[];
  /** The file a scheduled backup copies: the SQLite file; null in memory and on PostgreSQL (whose
   *  backups are the database server's). */
  readonly localFile: string | null;
  /** Where the data is, for the log: the file, or the URL without its password. */
  readonly location: string;
  /** Closes every connection (the read-only one first). */
  close(): void;
}

export interface SqliteStore extends StoreBase {
  readonly kind: "sqlite";
  readonly database: OpenedDatabase;
  /** The read-only connection (the primary itself for ":memory:", where it is query_only). */
  readonly readDatabase: Database;
  readonly changes: ExternalChanges;
}

export interface PostgresStore extends StoreBase {
  readonly kind: "postgres";
  readonly client: PgSyncClient;
}

export type Store = SqliteStore | PostgresStore;

/** The SQLite database of a store (tests, SQLite-only tools); a PostgreSQL store has none. */
export function sqliteDatabaseOf(store: Store): OpenedDatabase {
  if (store.kind !== "sqlite") throw new Error("the store is PostgreSQL: no SQLite database");
  return store.database;
}

function fileBytes(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0; // no WAL yet
  }
}

export function sqliteStore(
  database: OpenedDatabase,
  config: Pick<StoreSettings, "dbPath" | "rowCache" | "searchThreads" | "longWorkPriority">,
): SqliteStore {
  const { sqlite } = database;
  const { dbPath } = config;
  const readDatabase = openReadOnly(dbPath, sqlite);
  const inMemory = dbPath === ":memory:";
  const readPort = sqlitePort(readDatabase);
  const workerLocation: StoreLocation | null = inMemory ? null : { kind: "sqlite", path: dbPath };
  const searches = searchesOf(workerLocation, readPort, config);
  return {
    kind: "sqlite",
    database,
    readDatabase,
    port: sqlitePort(sqlite),
    readPort,
    workerLocation,
    searches,
    exportReads: new ExportQueries(sqlite),
    // Another process (`svc admin`) may change tokens and accounts: cached rows follow its commits.
    changes: new ExternalChanges(sqlite, database.walHeader, config.rowCache),
    migrationState: () => migrationState(sqlite),
    databaseBytes: () =>
      inMemory ? { database: 0, wal: 0 } : { database: fileBytes(dbPath), wal: fileBytes(`${dbPath}-wal`) },
    sharedRateLimiter: () => null,
    backgroundJobs(settings, logger) {
      if (settings.checkpoints === "internal") return [new WalCheckpointer(sqlite, dbPath, logger)];
      logger.info("checkpoints are left to an external replicator (SVC_CHECKPOINTS=external)");
      return [];
    },
    localFile: inMemory ? null : dbPath,
    location: dbPath,
    writable() {
      // Asks for the write lock without waiting (busy_timeout 0, restored before returning; the
      // connection is the server thread's own, so nothing else runs meanwhile) and gives it back:
      // a read-only file or folder fails, another connection holding the lock is "busy". Waiting
      // for the lock here would stall every request of the server behind one readiness probe.
      // A transaction of this connection's own in progress (never across an await, so not now)
      // holds the lock already: it is not the probe's to end.
      if (sqlite.inTransaction) return { state: "ok" };
      sqlite.exec("PRAGMA busy_timeout = 0");
      try {
        sqlite.exec("BEGIN IMMEDIATE");
        sqlite.exec("ROLLBACK");
        return { state: "ok" };
      } catch (e) {
        if (sqlite.inTransaction) sqlite.exec("ROLLBACK");
        if (String((e as { code?: unknown }).code).startsWith("SQLITE_BUSY")) return { state: "busy" };
        return {
          state: "failed",
          reason: `database not writable: ${e instanceof Error ? e.message : String(e)}`,
        };
      } finally {
        sqlite.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
      }
    },
    close() {
      searches.close();
      if (readDatabase !== sqlite) readDatabase.close();
      // The main connection last (see OpenedDatabase.close).
      database.close();
    },
  };
}

/**
 * The SQLite file of one server (or of `svc admin`), opened and migrated. With a replicator
 * (Litestream) owning checkpoints (`external`), no commit of this process may start one.
 */
export function openSqliteStore(
  config: Pick<StoreSettings, "dbPath" | "rowCache"> & { checkpoints: "internal" | "external" },
): SqliteStore {
  const database = openDatabase(config.dbPath);
  if (config.checkpoints === "external") database.sqlite.exec("PRAGMA wal_autocheckpoint = 0");
  migrate(database.db);
  return sqliteStore(database, config);
}

/**
 * A replica's store on the shared PostgreSQL database, its migrations applied first (under the
 * advisory lock, on a connection of their own, so replicas starting together apply each once).
 * `applied`: the migrations this replica applied.
 */
export async function openPostgresStore(
  config: Pick<StoreSettings, "databaseUrl" | "databaseTimeoutMs" | "rowCache">,
): Promise<{ store: PostgresStore; applied: string[] }> {
  const url = config.databaseUrl;
  if (url === null) throw new Error("openPostgresStore without SVC_DATABASE_URL");
  const sql = connectPostgres(url, { max: 1 });
  try {
    const { applied } = await migratePostgres(sql, url);
    return { store: postgresStore(config), applied };
  } finally {
    await sql.end({ timeout: 5 });
  }
}

/**
 * A replica's connections to the shared database: one for the stores (it also listens for the
 * other replicas' changes of cached tables) and one, read-only, for the agent tools. Nothing is
 * asked of PostgreSQL until the first statement; its schema is `svc migrate`'s (or serve's) work.
 */
export function postgresStore(
  config: Pick<
    StoreSettings,
    "databaseUrl" | "databaseTimeoutMs" | "rowCache" | "searchThreads" | "longWorkPriority"
  >,
): PostgresStore {
  const url = config.databaseUrl;
  if (url === null) throw new Error("postgresStore without SVC_DATABASE_URL");
  const timeoutMs = config.databaseTimeoutMs;
  const client = new PgSyncClient(url, { timeoutMs, watch: [...CACHED_TABLES] });
  const readClient = new PgSyncClient(url, { timeoutMs, readOnly: true });
  const feed = new PgChangeFeed(client, config.rowCache);
  // Awaited statements (the shared rate limits): a small pool of their own.
  const pool = connectPostgres(url, { max: 4 });
  const port = postgresPort(client);
  const readPort = postgresPort(readClient);
  const workerLocation: StoreLocation = { kind: "postgres", url, timeoutMs };
  const searches = searchesOf(workerLocation, readPort, config);
  const size = port.prepare<{ bytes: number }, []>("SELECT pg_database_size(current_database()) AS bytes");
  return {
    kind: "postgres",
    client,
    port,
    exportReads: new PostgresExportQueries(port),
    readPort,
    workerLocation,
    searches,
    changes: feed,
    migrationState: () => ({
      embedded: embeddedPgMigrations().length,
      applied:
        client.query<{ n: number }>("SELECT count(*)::int AS n FROM drizzle.__drizzle_migrations")[0]?.n ?? 0,
    }),
    databaseBytes: () => ({ database: size.get()?.bytes ?? 0, wal: 0 }),
    sharedRateLimiter: (clock, timeoutMs) => new PostgresRateLimiter(pool, clock, timeoutMs),
    backgroundJobs: () => [],
    localFile: null,
    location: describeDatabaseUrl(url),
    writable() {
      try {
        // A transaction as the stores begin them: read-only on a standby, or when the database or
        // role defaults to read-only transactions (e.g. during maintenance); fails on a lost server.
        const [row] = client.query<{ ro: string }>("SELECT current_setting('transaction_read_only') AS ro");
        // No lock is taken: the answer never waits for another transaction.
        if (row?.ro === "on") {
          return {
            state: "failed",
            reason: "database not writable: transactions are read-only (a standby server?)",
          };
        }
        return { state: "ok" };
      } catch (e) {
        return {
          state: "failed",
          reason: `database not writable: ${e instanceof Error ? e.message : String(e)}`,
        };
      }
    },
    close() {
      searches.close();
      readClient.close();
      client.close();
      void pool.end({ timeout: 5 });
    },
  };
}

function searchesOf(
  location: StoreLocation | null,
  readPort: SqlPort,
  config: Pick<StoreSettings, "searchThreads" | "longWorkPriority">,
): OperationSearches {
  const threads = config.searchThreads ?? 0;
  return location !== null && threads > 0
    ? searchesInThreads(location, threads, config.longWorkPriority)
    : searchesHere(readPort);
}
