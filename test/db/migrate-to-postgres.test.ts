// lanes: postgres
// `svc admin migrate-to-postgres`: a SQLite installation with data in every table, copied into an
// empty PostgreSQL database by the command itself, compared value for value; refusals (a running
// server, a target that holds data, no target) and all-or-nothing.

import { Database } from "bun:sqlite";
import { beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { PgTable, getTableConfig as pgTableConfig } from "drizzle-orm/pg-core";
import { SQLiteTable, getTableConfig as sqliteTableConfig } from "drizzle-orm/sqlite-core";
import type postgres from "postgres";
import { migratePostgres } from "../../src/db/pg/migrate";
import * as pgSchema from "../../src/db/pg/schema";
import * as sqliteSchema from "../../src/db/schema";
import { acquireServeLock } from "../../src/db/sqlite/serve-lock";
import { makeTestApp } from "../helpers/app";
import { connect, freshDatabase } from "../helpers/pg";
import { svcAdminRun, tempDir } from "../helpers/server";
import { readyStatement } from "../statements/export-support";

/** The one row a query returns. */
function first<T>(rows: readonly T[]): T {
  expect(rows.length).toBe(1);
  return rows[0]!;
}

const pgTables = (Object.values(pgSchema) as unknown[])
  .filter((v): v is PgTable => v instanceof PgTable)
  .map((t) => pgTableConfig(t));
const sqliteTables = (Object.values(sqliteSchema) as unknown[])
  .filter((v): v is SQLiteTable => v instanceof SQLiteTable)
  .map((t) => sqliteTableConfig(t));
const pgTypeOf = (table: string, column: string) =>
  pgTables
    .find((t) => t.name === table)!
    .columns.find((c) => c.name === column)!
    .getSQLType();

/**
 * What a user's database holds (a company, a sandbox account, tokens, a ready statement with its
 * operations and balance), then a row or two in every table still empty: 64-bit numbers where
 * PostgreSQL has bigint, both booleans, every byte value in blobs, Cyrillic and quotes in text,
 * and NULL in every nullable column of the second row.
 */
async function installationWithEveryTable(dbPath: string): Promise<void> {
  const t = makeTestApp({}, "2026-11-20T09:00:00Z", { dbPath });
  const w = t.fixtures.world({ ops_per_day: 40 });
  await readyStatement(t, w.token, w.account.bank_account_id, "2026-10-01", "2026-10-31");
  t.services.store.close();

  const db = new Database(dbPath, { strict: true });
  db.exec("PRAGMA foreign_keys = ON");
  const count = (table: string) =>
    (db.query(`SELECT count(*) AS n FROM "${table}"`).get() as { n: number }).n;
  let pending = sqliteTables.filter((t) => count(t.name) === 0);
  for (let round = 0; pending.length > 0 && round < 10; round++) {
    pending = pending.filter((table) => {
      try {
        for (const k of [1, 2]) {
          const values = table.columns.map((c) => {
            const fk = table.foreignKeys.find((f) =>
              f.reference().columns.some((col) => col.name === c.name),
            );
            if (fk) {
              const parent = sqliteTableConfig(fk.reference().foreignTable).name;
              const column = fk.reference().foreignColumns[0]!.name;
              const row = db.query(`SELECT "${column}" AS v FROM "${parent}" LIMIT 1`).get() as {
                v: unknown;
              } | null;
              if (row === null) throw new Error("FOREIGN KEY: the parent has no row yet");
              return row.v;
            }
            if (k === 2 && !c.notNull && !c.primary) return null;
            const type = c.getSQLType();
            if (c.columnType === "SQLiteBoolean") return k % 2;
            if (type === "blob") return new Uint8Array([...Array(256).keys()].map((b) => (b + k) % 256));
            if (type === "integer") return pgTypeOf(table.name, c.name) === "bigint" ? 2 ** 40 + k : 7 + k;
            return `Ёлка «${table.name}» ${k}\n'"\\ ${c.name}`;
          });
          try {
            db.query(
              `INSERT INTO "${table.name}" (${table.columns.map((c) => `"${c.name}"`).join(", ")})
               VALUES (${table.columns.map(() => "?").join(", ")})`,
            ).run(...(values as never[]));
          } catch (e) {
            // A key that is also the parent's (one balance per account): one row it is.
            if (k === 2 && /UNIQUE/.test(String(e))) continue;
            throw e;
          }
        }
        return false;
      } catch (e) {
        if (/FOREIGN KEY/i.test(String(e))) return true; // its parent is filled in a later round
        throw new Error(`${table.name}: ${e}`);
      }
    });
  }
  expect(pending.map((t) => t.name)).toEqual([]);
  db.close();
}

/** Every row of a table in both stores, ordered by key, as comparable plain values. */
async function sameRows(db: Database, sql: postgres.Sql, table: string) {
  const config = pgTables.find((t) => t.name === table)!;
  const columns = config.columns.map((c) => c.name);
  const keys = [
    ...config.columns.filter((c) => c.primary).map((c) => c.name),
    ...config.primaryKeys.flatMap((p) => p.columns.map((c) => c.name)),
  ];
  const order = (keys.length > 0 ? keys : columns).map((c) => `"${c}"`).join(", ");
  const list = columns.map((c) => `"${c}"`).join(", ");
  const plain = (column: string, v: unknown) => {
    if (v === null || v === undefined) return null;
    if (v instanceof Uint8Array) return Buffer.from(v).toString("hex");
    if (typeof v === "boolean") return v ? 1 : 0;
    if (pgTypeOf(table, column) === "bigint") return Number(v);
    return v;
  };
  const normalise = (rows: Record<string, unknown>[]) => rows.map((r) => columns.map((c) => plain(c, r[c])));
  const fromSqlite = normalise(db.query(`SELECT ${list} FROM "${table}" ORDER BY ${order}`).all() as never);
  const fromPg = normalise(await sql.unsafe(`SELECT ${list} FROM "${table}" ORDER BY ${order}`));
  return { fromSqlite, fromPg };
}

describe("svc admin migrate-to-postgres", () => {
  let dbPath = "";
  beforeAll(async () => {
    dbPath = join(tempDir("svc-m2pg-"), "svc.db");
    await installationWithEveryTable(dbPath);
  });

  test("copies every table value for value; the password is never printed", async () => {
    const url = new URL(await freshDatabase());
    url.password = "s3cret";
    const run = await svcAdminRun(dbPath, ["migrate-to-postgres"], { SVC_DATABASE_URL: url.toString() });
    expect(run.err).toBe("");
    expect(run.code).toBe(0);
    expect(run.out + run.err).not.toContain("s3cret");
    const report = JSON.parse(run.out) as { rows: number; tables: Record<string, number>; target: string };
    expect(report.target).toBe(`postgres://svc@${url.host}${url.pathname}`);
    expect(Object.keys(report.tables).sort()).toEqual(pgTables.map((t) => t.name).sort());

    const db = new Database(dbPath, { readonly: true, strict: true });
    const sql = connect(url.toString());
    let total = 0;
    for (const table of pgTables) {
      const { fromSqlite, fromPg } = await sameRows(db, sql, table.name);
      expect(fromSqlite.length, table.name).toBeGreaterThan(0);
      expect(fromPg, table.name).toEqual(fromSqlite);
      expect(report.tables[table.name], table.name).toBe(fromSqlite.length);
      total += fromSqlite.length;
    }
    expect(report.rows).toBe(total);
    // Insertion order survives: PostgreSQL's seq numbers the rows as SQLite's rowid had them.
    for (const table of ["companies", "bank_accounts", "api_tokens"]) {
      const sqliteOrder = (
        db.query(`SELECT id FROM "${table}" ORDER BY rowid`).all() as { id: string }[]
      ).map((r) => r.id);
      const pgOrder = (await sql.unsafe(`SELECT id FROM "${table}" ORDER BY seq`)).map((r) => r.id);
      expect(pgOrder, table).toEqual(sqliteOrder);
    }
    const operations = report.tables.operations!;
    expect(operations).toBeGreaterThan(1000);

    // Identity columns continue after the copied ids.
    const { max } = first(await sql<{ max: string }[]>`SELECT max(id)::text AS max FROM audit_log`);
    const { id } = first(
      await sql<{ id: string }[]>`
      INSERT INTO audit_log (at, actor, action, outcome) VALUES ('2026-11-25T00:00:00Z', 'system', 'x', 'ok')
      RETURNING id::text AS id`,
    );
    expect(BigInt(id)).toBe(BigInt(max) + 1n);

    // A second copy into a database that holds data is refused and changes nothing.
    const again = await svcAdminRun(dbPath, ["migrate-to-postgres"], { SVC_DATABASE_URL: url.toString() });
    expect(again.code).toBe(2);
    expect(again.err).toContain("already holds svc data");
    expect(again.err).toContain("Nothing was written");
    const { n } = first(await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM operations`);
    expect(n).toBe(operations);
    db.close();
  });

  test("a failure part-way leaves the PostgreSQL database empty", async () => {
    const url = await freshDatabase();
    const sql = connect(url);
    await migratePostgres(sql, url);
    // The last tables to be copied (children) refuse rows: everything copied before must go too.
    await sql.unsafe(`
      CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused by the test'; END $$;
      CREATE TRIGGER refuse BEFORE INSERT ON token_accounts FOR EACH ROW EXECUTE FUNCTION refuse();`);
    const run = await svcAdminRun(dbPath, ["migrate-to-postgres"], { SVC_DATABASE_URL: url });
    expect(run.code).toBe(1);
    expect(run.err).toContain("refused by the test");
    for (const table of pgTables) {
      const { n } = first(
        (await sql.unsafe(`SELECT count(*)::int AS n FROM "${table.name}"`)) as unknown as { n: number }[],
      );
      expect(n, table.name).toBe(0);
    }
  });

  test("rows svc refuses today (entry checks, decisions §19) are named and nothing is written", async () => {
    const path = join(tempDir(), "svc.db");
    const t = makeTestApp({}, "2026-11-20T09:00:00Z", { dbPath: path });
    const company = t.fixtures.company();
    const good = t.fixtures.account(company.company_id, "sandbox", { alias: "main" });
    const file = t.fixtures.account(company.company_id, "file", { alias: "bank" });
    const token = t.fixtures.token(company.company_id, {
      accounts: [{ bank_account_id: good.bank_account_id, allow_read_statements: true }],
    });
    t.services.store.close();
    // As a version before the checks could have stored them.
    const db = new Database(path, { strict: true });
    const number = (
      db.query("SELECT account_number FROM bank_accounts WHERE id = ?").get(file.bank_account_id) as {
        account_number: string;
      }
    ).account_number;
    const wrongKey = `${number.slice(0, 8)}${(Number(number[8]) + 1) % 10}${number.slice(9)}`;
    db.query("UPDATE bank_accounts SET account_number = ?, alias = 'main' WHERE id = ?").run(
      wrongKey,
      file.bank_account_id,
    );
    db.query(
      "INSERT INTO token_accounts (token_id, bank_account_id, allow_read_statements, allow_send_payments) VALUES (?, ?, 1, 0)",
    ).run(token.api_token_id, file.bank_account_id);
    db.close();
    const url = await freshDatabase();
    const run = await svcAdminRun(path, ["migrate-to-postgres"], { SVC_DATABASE_URL: url });
    expect(run.code).toBe(2); // refused, as a copy into a database that holds data
    expect(run.err).toContain("svc refuses today");
    expect(run.err).toContain(`bank_accounts ${file.bank_account_id}`);
    expect(run.err).toContain("control key");
    expect(run.err).toContain("alias main");
    expect(run.err).toContain(`test token ${token.api_token_id}`);
    const sql = connect(url);
    const { n } = first(
      (await sql.unsafe(`SELECT count(*)::int AS n FROM bank_accounts`)) as unknown as { n: number }[],
    );
    expect(n).toBe(0);
  });

  test("refused while a server works on the file, and without SVC_DATABASE_URL", async () => {
    const url = await freshDatabase();
    const lock = acquireServeLock(dbPath, { pid: 1, startedAt: "2026-11-25T00:00:00Z" });
    try {
      const run = await svcAdminRun(dbPath, ["migrate-to-postgres"], { SVC_DATABASE_URL: url });
      expect(run.code).toBe(2);
      expect(run.err).toContain("другой svc serve уже работает с базой");
    } finally {
      lock.release();
    }
    const { n } = first(
      await connect(url)<{ n: number }[]>`
      SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema = 'public'`,
    );
    expect(n).toBe(0);

    const noTarget = await svcAdminRun(dbPath, ["migrate-to-postgres"]);
    expect(noTarget.code).toBe(2);
    expect(noTarget.err).toContain("нужен SVC_DATABASE_URL");
    const noSource = await svcAdminRun(join(tempDir(), "none.db"), ["migrate-to-postgres"], {
      SVC_DATABASE_URL: url,
    });
    expect(noSource.code).toBe(2);
    expect(noSource.err).toContain("нет файла базы SQLite");
  });
});
