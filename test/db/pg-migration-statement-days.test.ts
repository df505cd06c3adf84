// lanes: postgres
// Migration 0013 on PostgreSQL: a database that already holds ready statements gets their days in
// statement_days (test/db/statement-days-backfill.ts), so coverage is right the moment it upgrades.
import { test } from "bun:test";
import { embeddedPgMigrations, migratePostgres } from "../../src/db/pg/migrate";
import { postgresPort } from "../../src/db/pg/port";
import { PgSyncClient } from "../../src/db/pg/sync-client";
import { connect, freshDatabase } from "../helpers/pg";
import { expectBackfilled, insertOldStatements } from "./statement-days-backfill";

test("the days of the ready statements already stored fill statement_days", async () => {
  const url = await freshDatabase();
  const sql = connect(url);
  const migrations = embeddedPgMigrations();
  const before = migrations.findIndex((m) => m.tag === "0013_statement_days");
  await migratePostgres(sql, url, migrations.slice(0, before));
  const client = new PgSyncClient(url, { timeoutMs: 10_000 });
  try {
    const port = postgresPort(client);
    insertOldStatements(port);
    await migratePostgres(sql, url);
    expectBackfilled(port);
  } finally {
    client.close();
  }
});
