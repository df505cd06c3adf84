// lanes: sqlite
// Migration 0019 on SQLite: a database that already holds ready statements gets their days in
// statement_days (test/db/statement-days-backfill.ts), so coverage is right the moment it upgrades.
import { test } from "bun:test";
import { embeddedMigrations } from "../../src/db/migrations.gen";
import { embeddedMigrationMeta, migrate, openDatabase } from "../../src/db/open";
import { sqlitePort } from "../../src/db/sql-port";
import { expectBackfilled, insertOldStatements } from "./statement-days-backfill";

test("the days of the ready statements already stored fill statement_days", () => {
  const db = openDatabase(":memory:");
  const before = embeddedMigrations.findIndex((m) => m.tag === "0019_statement_days");
  migrate(db.db, embeddedMigrationMeta().slice(0, before));
  const port = sqlitePort(db.sqlite);
  insertOldStatements(port);
  migrate(db.db);
  expectBackfilled(port);
  db.sqlite.close();
});
