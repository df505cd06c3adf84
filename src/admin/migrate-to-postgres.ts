// `svc admin migrate-to-postgres`: the SQLite installation at SVC_DB_PATH copied into the empty
// PostgreSQL database at SVC_DATABASE_URL, in one command. No server may be writing the file
// meanwhile: the command holds the file's serve lock for the whole copy.
import { existsSync } from "node:fs";
import { secretKeyFileOf } from "../auth/secret-box";
import type { Config } from "../config";
import { migrate, openDatabase } from "../db/open";
import { connectPostgres, describeDatabaseUrl } from "../db/pg/connect";
import { copySqliteToPostgres } from "../db/pg/copy-from-sqlite";
import { migratePostgres } from "../db/pg/migrate";
import { acquireServeLock } from "../db/sqlite/serve-lock";
import { storedRowChecker } from "./entry-rules";

export class MigrateToPostgresUsage extends Error {}

export async function migrateToPostgres(config: Config): Promise<number> {
  const url = config.databaseUrl;
  if (url === null)
    throw new MigrateToPostgresUsage("нужен SVC_DATABASE_URL: база PostgreSQL, куда копировать");
  if (config.dbPath === ":memory:" || !existsSync(config.dbPath)) {
    throw new MigrateToPostgresUsage(`нет файла базы SQLite ${config.dbPath} (SVC_DB_PATH)`);
  }
  const started = performance.now();
  const lock = acquireServeLock(config.dbPath, { pid: process.pid, startedAt: new Date().toISOString() });
  const source = openDatabase(config.dbPath);
  const target = connectPostgres(url, { max: 1 });
  try {
    migrate(source.db);
    await migratePostgres(target, url);
    const { tables } = await copySqliteToPostgres(source.sqlite, target, { check: storedRowChecker() });
    const keyFile = secretKeyFileOf(config.dbPath);
    console.log(
      JSON.stringify(
        {
          source: config.dbPath,
          target: describeDatabaseUrl(url),
          rows: Object.values(tables).reduce((a, b) => a + b, 0),
          tables,
          seconds: Math.round(performance.now() - started) / 1000,
          // Bank logins are copied sealed: every replica needs the key they were sealed with.
          secret_key: sealingKeyNote(config, keyFile, (tables.bank_connections ?? 0) > 0),
        },
        null,
        2,
      ),
    );
    return 0;
  } finally {
    await target.end({ timeout: 5 });
    source.close();
    lock.release();
  }
}

function sealingKeyNote(config: Config, keyFile: string, sealedLogins: boolean): string | null {
  if (config.secretKey !== null) return "SVC_SECRET_KEY: give every replica the same";
  if (existsSync(keyFile)) return `${keyFile}: give every replica its content as SVC_SECRET_KEY`;
  return sealedLogins
    ? "bank logins were sealed with a key not found here (SVC_SECRET_KEY unset, no key file): replicas need that key"
    : null;
}
