import { Database } from "bun:sqlite";
import { createHash } from "node:crypto";
import { type BunSQLiteDatabase, drizzle } from "drizzle-orm/bun-sqlite";
import type { MigrationMeta } from "drizzle-orm/migrator";
import { embeddedMigrations } from "./migrations.gen";
import * as schema from "./schema";
import { applyPragmas, openReadOnlyFile } from "./sqlite/connection";
import { makePrivateParent, privateFile, tightenMode } from "./sqlite/private-files";
import { WalIndexHeader } from "./sqlite/wal-index-header";

export type Db = BunSQLiteDatabase<typeof schema> & { $client: Database };

export interface OpenedDatabase {
  sqlite: Database;
  db: Db;
  /** Where other connections' commits show first (null in memory); see `ExternalChanges`. */
  walHeader: WalIndexHeader | null;
  /** Last of all the process's connections to the file (it releases the header's descriptor). */
  close(): void;
}

export function openDatabase(path: string): OpenedDatabase {
  if (path !== ":memory:") {
    makePrivateParent(path);
    // The database, and with it its -wal and -shm, owner-only; older ones are tightened.
    privateFile(path);
    tightenMode(`${path}-wal`);
    tightenMode(`${path}-shm`);
  }
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
  return path === ":memory:" ? primary : openReadOnlyFile(path);
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
  refuseDuplicateAccounts(db.$client, migrations);
  const dialect = (
    db as unknown as { dialect: { migrate: (m: MigrationMeta[], s: unknown, c: object) => void } }
  ).dialect;
  const session = (db as unknown as { session: unknown }).session;
  dialect.migrate(migrations, session, { migrationsFolder: "(embedded)" });
}

/** A migration that would have to change or drop data to apply: svc stops and says what to fix. */
class MigrationRefused extends Error {
  override name = "MigrationRefused";
}

/**
 * Migration 0009 makes an account number with its BIK unique. A database where one account was
 * added twice cannot take it; rather than delete either (tokens, statements and grants refer to
 * both), svc refuses to start and names them, before anything is applied.
 */
function refuseDuplicateAccounts(sqlite: Database, migrations: MigrationMeta[]): void {
  const adds = migrations.some((m) => m.sql.some((part) => part.includes("bank_accounts_number_bik_uq")));
  if (!adds) return;
  const has = (type: string, name: string) =>
    sqlite.query("SELECT 1 FROM sqlite_master WHERE type = ? AND name = ?").get(type, name) !== null;
  if (!has("table", "bank_accounts") || has("index", "bank_accounts_number_bik_uq")) return;
  const twice = sqlite
    .query<{ account_number: string; bik: string; accounts: string }, []>(
      `SELECT account_number, bik,
              group_concat(id || ' (company ' || company_id || ', alias ' || alias || ')', ', ') AS accounts
         FROM bank_accounts GROUP BY account_number, bik HAVING count(*) > 1 ORDER BY account_number, bik`,
    )
    .all();
  if (twice.length === 0) return;
  const lines = twice.map((d) => `  ${d.account_number} / БИК ${d.bik}: ${d.accounts}`);
  throw new MigrationRefused(
    [
      "The database holds the same bank account more than once (one account number with one BIK is one account):",
      ...lines,
      "Nothing was changed. Keep one entry of each (move its tokens' grants and statements to it, or",
      "delete the extra entries that nothing refers to), then start svc again.",
    ].join("\n"),
  );
}

/** Migrations this build carries, and how many the database has applied (for readiness checks). */
export function migrationState(sqlite: Database): { embedded: number; applied: number } {
  const applied =
    sqlite.query<{ n: number }, []>("SELECT count(*) AS n FROM __drizzle_migrations").get()?.n ?? 0;
  return { embedded: embeddedMigrations.length, applied };
}
