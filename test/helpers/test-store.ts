// The store makeTestApp builds on. By default an SQLite database in memory; with
// SVC_TEST_STORE=postgres (the suite's second lane, scripts/run-tests.sh) a PostgreSQL database of
// its own, cloned from a migrated template, so the same route tests run against both stores.
//
// Servers a test starts itself (startServer) get a cloned database through serverStoreEnv.
//
// A PostgreSQL store holds two connections (each a worker thread): those made during a test are
// closed and their databases dropped when the test ends, those made outside a test (beforeAll) when
// the file ends (test/preload.ts calls the two hooks below).
import { PgSyncClient } from "../../src/db/pg/sync-client";
import { type PostgresStore, postgresStore } from "../../src/db/store";

/** Whether this run's makeTestApp builds on PostgreSQL. */
export const onPostgres = process.env.SVC_TEST_STORE === "postgres";

/** The migrated template scripts/run-tests.sh makes (scripts/pg-test-template.ts). */
export const PG_TEMPLATE = "svc_test_template";

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
  const name = `svc_app_${crypto.randomUUID().replaceAll("-", "")}`;
  // FILE_COPY: copies the template's few files instead of logging every page (faster by half here).
  client.run(`CREATE DATABASE ${name} TEMPLATE ${PG_TEMPLATE} STRATEGY FILE_COPY`);
  const url = new URL(process.env.SVC_TEST_DATABASE_URL!);
  url.pathname = `/${name}`;
  return url.toString();
}

/** A PostgreSQL store on a fresh database, closed and dropped by the hooks below. */
export function postgresTestStore(databaseUrl: string, rowCache: boolean): PostgresStore {
  const store = postgresStore({ databaseUrl, databaseTimeoutMs: 30_000, rowCache });
  open.push({ store, database: new URL(databaseUrl).pathname.slice(1), madeInTest: inTest });
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

/** Ends every store of the file, and the connection to the server. */
export function fileEnded(): void {
  if (open.length > 0) closeWhere(() => true);
  for (const name of serverDatabases.splice(0)) {
    serverClient().run(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  }
  server?.close();
  server = null;
}
