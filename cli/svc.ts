#!/usr/bin/env bun
// svc serve [--demo] | migrate | admin … | version
import { runAdminCommand } from "../src/admin/cli";
import { ConfigError, loadConfig } from "../src/config";
import { flushStdout } from "../src/core/logger";
import { migrate, openDatabase } from "../src/db/open";
import { connectPostgres, DatabaseUnavailable, describeDatabaseUrl } from "../src/db/pg/connect";
import { CopyRefused } from "../src/db/pg/copy-from-sqlite";
import { MigrationMismatch, migratePostgres } from "../src/db/pg/migrate";
import { ServeLockHeld } from "../src/db/sqlite/serve-lock";
import { openServices, startServer, VERSION } from "../src/main";

const USAGE = `использование: svc <команда>
  serve [--demo]   применить миграции, запустить HTTP-сервер и фоновые задачи
                   (--demo: на пустой базе — демо-компания, счета и токены)
  migrate          применить миграции и выйти (SQLite в SVC_DB_PATH или
                   PostgreSQL в SVC_DATABASE_URL)
  admin …          администрирование на файле базы (svc admin help)
  version          показать версию`;

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case "version":
    case "--version":
      console.log(VERSION);
      return 0;
    case "serve": {
      const config = loadConfig();
      const server = await startServer(config, { demo: rest.includes("--demo") });
      const onSignal = (signal: string) => {
        server.services.logger.info("signal", { signal });
        server.stop().then(
          () => {
            flushStdout();
            process.exit(0);
          },
          () => {
            flushStdout();
            process.exit(1);
          },
        );
      };
      process.on("SIGTERM", () => onSignal("SIGTERM"));
      process.on("SIGINT", () => onSignal("SIGINT"));
      return -1; // keep running
    }
    case "migrate": {
      const config = loadConfig();
      if (config.databaseUrl !== null) return migratePostgresDatabase(config.databaseUrl);
      const database = openDatabase(config.dbPath);
      migrate(database.db);
      database.close();
      console.log(`migrations applied to ${config.dbPath}`);
      return 0;
    }
    case "admin":
      return runAdminCommand(loadConfig(), rest, (config) => openServices(config));
    case undefined:
    case "help":
    case "--help":
      console.log(USAGE);
      return command === undefined ? 2 : 0;
    default:
      console.error(`неизвестная команда "${command}"\n${USAGE}`);
      return 2;
  }
}

async function migratePostgresDatabase(url: string): Promise<number> {
  const sql = connectPostgres(url, { max: 1 });
  try {
    const outcome = await migratePostgres(sql, url);
    const n = outcome.applied.length;
    console.log(
      `${describeDatabaseUrl(url)}: ${n} migration${n === 1 ? "" : "s"} applied, ` +
        `${outcome.total} of ${outcome.total} in place`,
    );
    return 0;
  } finally {
    await sql.end({ timeout: 5 });
  }
}

// Every file a command writes (the database with its -wal and -shm, backups, key files, the serve
// lock) is the owner's only, and so is every folder it makes (decisions §20).
process.umask(0o077);

try {
  const code = await main(process.argv.slice(2));
  if (code >= 0) process.exit(code);
} catch (e) {
  if (e instanceof ConfigError) {
    console.error(`ошибка конфигурации: ${e.message}`);
    process.exit(2);
  }
  if (
    e instanceof ServeLockHeld ||
    e instanceof DatabaseUnavailable ||
    e instanceof MigrationMismatch ||
    e instanceof CopyRefused
  ) {
    console.error(e.message);
    process.exit(2);
  }
  console.error(e instanceof Error ? e.message : String(e));
  process.exit(1);
}
