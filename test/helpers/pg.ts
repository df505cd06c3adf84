// The PostgreSQL of the tests (and benchmarks): every database a test uses is one of its own on the
// suite's throwaway server (scripts/pg-test.sh; scripts/run-tests.sh exports SVC_TEST_DATABASE_URL),
// so that files running side by side never share a schema. One module, four uses:
//
// - apps: makeTestApp in the PostgreSQL lane (SVC_TEST_STORE=postgres) builds on `cloneTemplate()`,
//   a copy of the migrated template (scripts/pg-test-template.ts) made in a few tens of
//   milliseconds, through `postgresTestStore` (closed and dropped when its test ends);
// - servers a test starts itself get one through `serverStoreEnv()` (dropped when the file ends);
// - the PostgreSQL-only tests take `freshDatabase()` (empty) or `migratedDatabase()` (every
//   migration of this build applied), with `connect()` for a client, all ended and dropped when
//   the file ends; `twoStores()` gives the same repository on SQLite and PostgreSQL;
// - benchmarks keep or drop an `ownDatabase()` themselves.
//
// A PostgreSQL store holds two connections (each a worker thread): those made during a test are
// closed and their databases dropped when the test ends, those made outside a test (beforeAll) when
// the file ends (test/preload.ts calls the hooks at the end of this module).
import type { Database } from "bun:sqlite";
import { afterAll, beforeAll, expect } from "bun:test";
import { resolve } from "node:path";
import { drizzle } from "drizzle-orm/postgres-js";
import { migrate as migrateFolder } from "drizzle-orm/postgres-js/migrator";
import postgres, { type Sql } from "postgres";
import { migrate, openDatabase } from "../../src/db/open";
import { migratePostgres } from "../../src/db/pg/migrate";
import { postgresPort } from "../../src/db/pg/port";
import { PgSyncClient } from "../../src/db/pg/sync-client";
import { BankAccountRepository, CompanyRepository } from "../../src/db/repos/accounts";
import type { CacheChanges } from "../../src/db/row-cache";
import { type SqlPort, sqlitePort } from "../../src/db/sql-port";
import { type PostgresStore, postgresStore, type StoreSettings } from "../../src/db/store";
import { accountRow, companyRow } from "./rows";

export const PG_MIGRATIONS = resolve(import.meta.dir, "../../migrations-pg");

/** Whether this run's makeTestApp builds on PostgreSQL. */
export const onPostgres = process.env.SVC_TEST_STORE === "postgres";

/** The migrated template scripts/run-tests.sh makes (scripts/pg-test-template.ts). */
export const PG_TEMPLATE = "svc_test_template";

const uniqueName = (prefix: string) => `${prefix}_${crypto.randomUUID().replaceAll("-", "")}`;

function databaseUrl(serverUrl: string, name: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/** The URL of the suite's server; without one a test fails saying how to run it. */
function suiteServerUrl(): string {
  const url = process.env.SVC_TEST_DATABASE_URL;
  expect(
    url,
    "SVC_TEST_DATABASE_URL: run through make test (scripts/run-tests.sh starts the server)",
  ).toBeString();
  return url!;
}

// ---- apps and servers: clones of the template, made synchronously (makeTestApp is synchronous)

interface OpenStore {
  store: PostgresStore;
  database: string;
  madeInTest: boolean;
}

let server: PgSyncClient | null = null;
const open: OpenStore[] = [];
/** Databases of servers the tests start themselves (serverStoreEnv), dropped when the file ends. */
const serverDatabases: string[] = [];
let inTest = false;

function serverClient(): PgSyncClient {
  const url = process.env.SVC_TEST_DATABASE_URL;
  if (!url) {
    throw new Error("SVC_TEST_STORE=postgres needs SVC_TEST_DATABASE_URL: run through make test");
  }
  server ??= new PgSyncClient(url, { timeoutMs: 30_000 });
  return server;
}

/** The URL of a fresh database cloned from the template (a few tens of milliseconds). */
export function cloneTemplate(): string {
  const client = serverClient();
  const name = uniqueName("svc_app");
  // FILE_COPY: copies the template's few files instead of logging every page (faster by half here).
  client.run(`CREATE DATABASE ${name} TEMPLATE ${PG_TEMPLATE} STRATEGY FILE_COPY`);
  return databaseUrl(process.env.SVC_TEST_DATABASE_URL!, name);
}

/** A PostgreSQL store on a fresh database, closed and dropped by the hooks below. */
export function postgresTestStore(
  url: string,
  rowCache: boolean,
  threads: Pick<StoreSettings, "searchThreads" | "longWorkPriority"> = {},
): PostgresStore {
  const store = postgresStore({ databaseUrl: url, databaseTimeoutMs: 30_000, rowCache, ...threads });
  open.push({ store, database: new URL(url).pathname.slice(1), madeInTest: inTest });
  return store;
}

/**
 * What a test that starts a server itself (startServer) adds to its configuration: in the
 * PostgreSQL lane a database of its own (dropped when the file ends), else nothing.
 */
export function serverStoreEnv(): Record<string, string> {
  if (!onPostgres) return {};
  const url = cloneTemplate();
  serverDatabases.push(new URL(url).pathname.slice(1));
  return { SVC_DATABASE_URL: url };
}

// ---- the PostgreSQL-only tests: empty or migrated databases, and clients of them

const made: string[] = [];
const clients: Sql[] = [];

/** A client of the given database, ended when the file's tests end. */
export function connect(url: string, max = 2): Sql {
  const sql = postgres(url, { max, onnotice: () => {} });
  clients.push(sql);
  return sql;
}

/** An empty database, dropped when the file's tests end; returns its URL. */
export async function freshDatabase(prefix = "svc_t"): Promise<string> {
  const serverUrl = suiteServerUrl();
  const name = uniqueName(prefix);
  const admin = postgres(serverUrl, { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end({ timeout: 5 });
  }
  made.push(name);
  return databaseUrl(serverUrl, name);
}

/** A fresh database with every migration of this build applied; returns its URL. */
export async function migratedDatabase(): Promise<string> {
  const url = await freshDatabase();
  await migratePostgres(connect(url), url);
  return url;
}

/** Waits until `ready()` holds (what PostgreSQL announces arrives after the commit, asynchronously). */
export async function until(ready: () => boolean): Promise<void> {
  for (let i = 0; i < 1000 && !ready(); i++) await Bun.sleep(5);
  expect(ready()).toBe(true);
}

/** Row caches that keep nothing (the stores themselves are under test). */
export const UNCACHED: CacheChanges = { keepRows: false, register() {}, check() {} };

/**
 * The same repository on both stores: `ports` is [SQLite in memory, a migrated PostgreSQL
 * database], filled before the file's tests, each holding company c1 with account acc1;
 * `pgPort()` opens another client on the same PostgreSQL database (another replica); `sqlite`:
 * the SQLite port's database.
 */
export function twoStores(): { ports: SqlPort[]; pgPort(): SqlPort; sqlite: Database } {
  const sqlite = openDatabase(":memory:");
  migrate(sqlite.db);
  const syncClients: PgSyncClient[] = [];
  const ports: SqlPort[] = [];
  let url = "";
  const pgPort = () => {
    const client = new PgSyncClient(url, { timeoutMs: 10_000 });
    syncClients.push(client);
    return postgresPort(client);
  };
  beforeAll(async () => {
    url = await migratedDatabase();
    ports.push(sqlitePort(sqlite.sqlite), pgPort());
    for (const port of ports) {
      new CompanyRepository(port).insert(companyRow());
      new BankAccountRepository(port, UNCACHED).insert(accountRow());
    }
  });
  afterAll(() => {
    for (const c of syncClients.splice(0)) c.close();
    sqlite.close();
  });
  return { ports, pgPort, sqlite: sqlite.sqlite };
}

// ---- benchmarks: a database they keep (to measure it again) or drop

export interface OwnDatabase {
  sql: Sql;
  /** Applies migrations-pg/ (or another folder of drizzle-kit migrations). */
  migrate(folder?: string): Promise<void>;
  drop(): Promise<void>;
  /** Ends the connections and leaves the database (a benchmark's, to measure it again). */
  keep(): Promise<void>;
}

export async function ownDatabase(serverUrl: string, prefix: string, max = 4): Promise<OwnDatabase> {
  const admin = postgres(serverUrl, { max: 1, onnotice: () => {} });
  const name = uniqueName(prefix);
  await admin.unsafe(`CREATE DATABASE ${name}`);
  const sql = postgres(databaseUrl(serverUrl, name), { max, onnotice: () => {} });
  return {
    sql,
    migrate: (folder = PG_MIGRATIONS) => migrateFolder(drizzle(sql), { migrationsFolder: folder }),
    async drop() {
      await sql.end({ timeout: 5 });
      await admin.unsafe(`DROP DATABASE ${name}`);
      await admin.end({ timeout: 5 });
    },
    async keep() {
      await sql.end({ timeout: 5 });
      await admin.end({ timeout: 5 });
    },
  };
}

// ---- the hooks test/preload.ts runs around every test and file

function closeWhere(which: (o: OpenStore) => boolean): void {
  for (const o of open.filter(which)) {
    open.splice(open.indexOf(o), 1);
    o.store.close();
    serverClient().run(`DROP DATABASE IF EXISTS ${o.database} WITH (FORCE)`);
  }
}

export function testStarted(): void {
  inTest = true;
}

/** Ends the stores made during the test that just ended. */
export function testEnded(): void {
  inTest = false;
  closeWhere((o) => o.madeInTest);
}

/** Ends every store, client and database of the file, and the connections to the server. */
export async function fileEnded(): Promise<void> {
  if (open.length > 0) closeWhere(() => true);
  for (const name of serverDatabases.splice(0)) {
    serverClient().run(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  }
  server?.close();
  server = null;
  for (const c of clients.splice(0)) await c.end({ timeout: 5 });
  if (made.length === 0) return;
  const admin = postgres(suiteServerUrl(), { max: 1, onnotice: () => {} });
  try {
    // FORCE: a connection a test left open (or a killed process's) must not keep the database.
    for (const name of made.splice(0)) await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  } finally {
    await admin.end({ timeout: 5 });
  }
}
