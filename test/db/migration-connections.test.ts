// lanes: sqlite
// Migrations 0010–0011: a login stored on an account (before bank connections existed) moves to a
// connection of its own, sealed bytes unchanged, and the account reaches it from there.
import { expect, test } from "bun:test";
import { join } from "node:path";
import { SecretBox } from "../../src/auth/secret-box";
import { embeddedMigrations } from "../../src/db/migrations.gen";
import { embeddedMigrationMeta, migrate, openDatabase } from "../../src/db/open";
import { tempDir } from "../helpers/server";

test("an account's stored login becomes its connection; accounts without one get none", () => {
  const db = openDatabase(join(tempDir(), "old.db"));
  const before = embeddedMigrations.findIndex((m) => m.tag.startsWith("0010_"));
  migrate(db.db, embeddedMigrationMeta().slice(0, before));
  const box = new SecretBox(new Uint8Array(32).fill(7));
  const sealed = box.seal(JSON.stringify({ kind: "jwt", token: "eyJ.secret" }));
  db.sqlite.exec(
    "INSERT INTO companies (id, name, inn, kpp, created_at) VALUES ('c1', 'ООО Ромашка', '7707083893', NULL, '2026-01-01T00:00:00Z')",
  );
  const insert = db.sqlite.query(
    `INSERT INTO bank_accounts (id, company_id, bank, account_number, bik, currency, alias, credentials_enc, created_at)
     VALUES (?, 'c1', 'sandbox', ?, '044525104', 'RUB', ?, ?, '2026-01-01T00:00:00Z')`,
  );
  insert.run("a1", "40702810000000000001", "with", sealed);
  insert.run("a2", "40702810000000000002", "without", null);

  migrate(db.db);

  const accounts = db.sqlite
    .query<{ id: string; connection_id: string | null; environment: string }, []>(
      "SELECT id, connection_id, environment FROM bank_accounts ORDER BY id",
    )
    .all();
  expect(accounts).toEqual([
    { id: "a1", connection_id: "a1", environment: "production" },
    { id: "a2", connection_id: null, environment: "production" },
  ]);
  const connection = db.sqlite
    .query<{ bank: string; status: string; c: Uint8Array }, []>(
      "SELECT bank, status, credentials_enc AS c FROM bank_connections",
    )
    .get();
  expect(connection?.bank).toBe("sandbox");
  expect(connection?.status).toBe("active");
  expect(JSON.parse(box.open(connection!.c))).toEqual({ kind: "jwt", token: "eyJ.secret" });
  const columns = db.sqlite
    .query<{ name: string }, []>("SELECT name FROM pragma_table_info('bank_accounts')")
    .all();
  expect(columns.map((c) => c.name)).not.toContain("credentials_enc");
  db.sqlite.close();
});
