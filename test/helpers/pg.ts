// A database of its own on the suite's PostgreSQL (SVC_TEST_DATABASE_URL): tests and benchmarks
// share one server, so each makes a database, migrates it and drops it at the end.
import { resolve } from "node:path";
import { drizzle } from "drizzle-orm/postgres-js";
import { migrate } from "drizzle-orm/postgres-js/migrator";
import postgres, { type Sql } from "postgres";

export const PG_MIGRATIONS = resolve(import.meta.dir, "../../migrations-pg");

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
  const name = `${prefix}_${crypto.randomUUID().replaceAll("-", "")}`;
  await admin.unsafe(`CREATE DATABASE ${name}`);
  const target = new URL(serverUrl);
  target.pathname = `/${name}`;
  const sql = postgres(target.toString(), { max, onnotice: () => {} });
  return {
    sql,
    migrate: (folder = PG_MIGRATIONS) => migrate(drizzle(sql), { migrationsFolder: folder }),
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
