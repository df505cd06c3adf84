// Online backups of the SQLite database. `VACUUM INTO` copies one read transaction's snapshot: a
// consistent database while the server goes on writing (WAL readers never block the writer). The
// copy is written beside the target and renamed into place, so a target that exists is always a
// whole backup.
import { Database } from "bun:sqlite";
import { existsSync, renameSync, rmSync, statSync } from "node:fs";
import { embeddedMigrations } from "../db/migrations.gen";
import { makePrivateParent, privateFile } from "../db/sqlite/private-files";

export class BackupError extends Error {}

/** Copies the database at `source` to `target` (which must not exist); returns its size. */
export function backupDatabase(source: string, target: string): { bytes: number } {
  if (source === ":memory:") throw new BackupError("базу в памяти (:memory:) не скопировать");
  if (!existsSync(source)) throw new BackupError(`нет базы данных: ${source}`);
  if (existsSync(target)) throw new BackupError(`${target} уже есть; укажите новый файл`);
  makePrivateParent(target);
  const partial = `${target}.partial`;
  rmSync(partial, { force: true });
  // VACUUM INTO writes into an empty file that exists: made here owner-only (a copy of the whole
  // database), so the backup never has a wider mode, not even for a moment.
  privateFile(partial);
  // A read-only connection of its own: a backup can never write to the live database.
  const db = new Database(source, { readonly: true, strict: true });
  try {
    db.exec("PRAGMA busy_timeout = 5000");
    db.query("VACUUM INTO ?").run(partial);
  } catch (e) {
    rmSync(partial, { force: true });
    throw new BackupError(`копия не снята: ${e instanceof Error ? e.message : String(e)}`);
  } finally {
    db.close();
  }
  renameSync(partial, target);
  return { bytes: statSync(target).size };
}

export interface BackupReport {
  ok: boolean;
  file: string;
  integrity: string;
  /** Migrations applied in the copy, and how many this version of svc has. */
  schema: { applied: number; expected: number; last: string | null };
  rows: Record<string, number>;
}

const COUNTED_TABLES = [
  "companies",
  "bank_accounts",
  "api_tokens",
  "statements",
  "operations",
  "balances",
  "payment_imports",
  "payment_items",
  "audit_log",
];

/** Checks a backup file: SQLite's integrity check, its schema version, and its row counts. */
export function verifyBackup(file: string): BackupReport {
  if (!existsSync(file)) throw new BackupError(`нет файла: ${file}`);
  let db: Database;
  try {
    db = new Database(file, { readonly: true, strict: true });
  } catch (e) {
    throw new BackupError(`${file} — не база данных: ${e instanceof Error ? e.message : String(e)}`);
  }
  try {
    return readReport(db, file);
  } catch (e) {
    if (e instanceof BackupError) throw e;
    throw new BackupError(`${file} — не целая база SQLite: ${e instanceof Error ? e.message : String(e)}`);
  } finally {
    db.close();
  }
}

function readReport(db: Database, file: string): BackupReport {
  let integrity: string;
  try {
    const rows = db.query<{ integrity_check: string }, []>("PRAGMA integrity_check").all();
    integrity = rows.map((r) => r.integrity_check).join("; ");
  } catch (e) {
    integrity = e instanceof Error ? e.message : String(e);
  }
  const tables = new Set(
    db
      .query<{ name: string }, []>("SELECT name FROM sqlite_master WHERE type = 'table'")
      .all()
      .map((r) => r.name),
  );
  const applied = tables.has("__drizzle_migrations")
    ? (db.query<{ n: number }, []>("SELECT count(*) AS n FROM __drizzle_migrations").get()?.n ?? 0)
    : 0;
  const rows: Record<string, number> = {};
  for (const table of COUNTED_TABLES) {
    if (tables.has(table)) {
      rows[table] = db.query<{ n: number }, []>(`SELECT count(*) AS n FROM "${table}"`).get()?.n ?? 0;
    }
  }
  const expected = embeddedMigrations.length;
  const last = applied > 0 ? (embeddedMigrations[applied - 1]?.tag ?? null) : null;
  return {
    ok: integrity === "ok" && applied === expected,
    file,
    integrity,
    schema: { applied, expected, last },
    rows,
  };
}
