import { Database } from "bun:sqlite";
import { createHash } from "node:crypto";
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { type BunSQLiteDatabase, drizzle } from "drizzle-orm/bun-sqlite";
import type { MigrationMeta } from "drizzle-orm/migrator";
import { embeddedMigrations } from "./migrations.gen";
import * as schema from "./schema";
import { WalIndexHeader } from "./sqlite/wal-index-header";

export type Db = BunSQLiteDatabase<typeof schema> & { $client: Database };

/** Transactions that write take the write lock up front (BEGIN IMMEDIATE): no upgrade deadlocks. */
export const IMMEDIATE = { behavior: "immediate" } as const;

export interface OpenedDatabase {
  sqlite: Database;
  db: Db;
  /** Where other connections' commits show first (null in memory); see `ExternalChanges`. */
  walHeader: WalIndexHeader | null;
  /** Last of all the process's connections to the file (it releases the header's descriptor). */
  close(): void;
}

function applyPragmas(sqlite: Database, readOnly: boolean): void {
  // bun:sqlite has no lock timeout of its own.
  sqlite.exec("PRAGMA busy_timeout = 5000");
  if (!readOnly) {
    sqlite.exec("PRAGMA journal_mode = WAL");
    sqlite.exec("PRAGMA synchronous = NORMAL");
  }
  sqlite.exec("PRAGMA foreign_keys = ON");
}

export function openDatabase(path: string): OpenedDatabase {
  if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
  const sqlite = new Database(path, { create: true, strict: true });
  applyPragmas(sqlite, false);
  const db = drizzle({ client: sqlite, schema }) as Db;
  // A first read creates the -shm file of a new database.
  sqlite.query("PRAGMA schema_version").get();
  const walHeader = WalIndexHeader.open(path);
  return {
    sqlite,
    db,
    walHeader,
    close: () => {
      sqlite.close();
      walHeader?.close();
    },
  };
}

/**
 * A second connection that SQLite itself refuses to write through (SQLITE_OPEN_READONLY plus
 * query_only): what the agent tools read with. For ":memory:" databases, which cannot be shared
 * between connections, the caller gets a query_only view of the same connection instead.
 */
export function openReadOnly(path: string, primary: Database): Database {
  if (path === ":memory:") return primary;
  const ro = new Database(path, { readonly: true, strict: true });
  applyPragmas(ro, true);
  ro.exec("PRAGMA query_only = ON");
  return ro;
}

export function embeddedMigrationMeta(): MigrationMeta[] {
  return embeddedMigrations.map((m) => ({
    sql: m.sql.split("--> statement-breakpoint"),
    bps: m.breakpoints,
    folderMillis: m.when,
    hash: createHash("sha256").update(m.sql).digest("hex"),
  }));
}

/** Applies pending migrations with drizzle's own migrator, from the migrations embedded at build
 *  time (a test may pass the first few, to build a database as an older release left it). */
export function migrate(db: Db, migrations: MigrationMeta[] = embeddedMigrationMeta()): void {
  const dialect = (
    db as unknown as { dialect: { migrate: (m: MigrationMeta[], s: unknown, c: object) => void } }
  ).dialect;
  const session = (db as unknown as { session: unknown }).session;
  dialect.migrate(migrations, session, { migrationsFolder: "(embedded)" });
}
