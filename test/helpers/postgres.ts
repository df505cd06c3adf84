// Databases of their own on the suite's throwaway PostgreSQL (scripts/pg-test.sh; `make test`
// exports SVC_TEST_DATABASE_URL), so that test files running side by side never share a schema.
import { afterAll, expect } from "bun:test";
import postgres from "postgres";
import { migratePostgres } from "../../src/db/pg/migrate";

const made: string[] = [];
const clients: postgres.Sql[] = [];

/** A client of the given database, ended when the file's tests end. */
export function connect(url: string): postgres.Sql {
  const sql = postgres(url, { max: 2, onnotice: () => {} });
  clients.push(sql);
  return sql;
}

/** The URL of the suite's server; a file run alone without one fails saying how to run it. */
function suiteServerUrl(): string {
  const url = process.env.SVC_TEST_DATABASE_URL;
  expect(
    url,
    "SVC_TEST_DATABASE_URL: run through make test (scripts/run-tests.sh starts the server)",
  ).toBeString();
  return url!;
}

/** An empty database, dropped when the file's tests end; returns its URL. */
export async function freshDatabase(prefix = "svc_t"): Promise<string> {
  const server = suiteServerUrl();
  const name = `${prefix}_${crypto.randomUUID().replaceAll("-", "")}`;
  const admin = postgres(server, { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end({ timeout: 5 });
  }
  made.push(name);
  const url = new URL(server);
  url.pathname = `/${name}`;
  return url.toString();
}

/** A fresh database with every migration of this build applied; returns its URL. */
export async function migratedDatabase(): Promise<string> {
  const url = await freshDatabase();
  await migratePostgres(connect(url), url);
  return url;
}

afterAll(async () => {
  for (const c of clients.splice(0)) await c.end({ timeout: 5 });
  if (made.length === 0) return;
  const admin = postgres(suiteServerUrl(), { max: 1, onnotice: () => {} });
  try {
    // FORCE: a connection a test left open (or a killed process's) must not keep the database.
    for (const name of made.splice(0)) await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  } finally {
    await admin.end({ timeout: 5 });
  }
});

/** Waits until `ready()` holds (what PostgreSQL announces arrives after the commit, asynchronously). */
export async function until(ready: () => boolean): Promise<void> {
  for (let i = 0; i < 1000 && !ready(); i++) await Bun.sleep(5);
  expect(ready()).toBe(true);
}
