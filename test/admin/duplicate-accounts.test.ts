// lanes: sqlite postgres
// An account number with its BIK is one account: a second one is 409 conflict (admin API, CLI,
// admin pages), and a database that already holds one twice makes svc refuse to start, naming
// them, before any migration is applied.
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { embeddedMigrations } from "../../src/db/migrations.gen";
import { embeddedMigrationMeta, migrate, openDatabase } from "../../src/db/open";
import { withAccountKey } from "../../src/formats/validators";
import { ADMIN_TOKEN, BASE, json, makeTestApp } from "../helpers/app";
import { expectError } from "../helpers/envelope";
import { startServe, svcAdminRun, tempDir } from "../helpers/server";

const BIK = "044525225";
const NUMBER = withAccountKey("40702810900000000777", BIK);

describe("one account per number and BIK", () => {
  test("the admin API answers 409 conflict, in the same company and in another, naming the account", async () => {
    const t = makeTestApp();
    const a = t.fixtures.company("ООО А", "7719617469");
    const b = t.fixtures.company("ООО Б", "7707083893");
    const body = (companyId: string) => ({
      company_id: companyId,
      bank: "sandbox",
      account_number: NUMBER,
      bik: BIK,
    });
    const first = await json<{ bank_account_id: string }>(
      await t.admin("POST", "/bank-accounts", body(a.company_id)),
    );
    for (const companyId of [a.company_id, b.company_id]) {
      const details = await expectError(
        await t.admin("POST", "/bank-accounts", body(companyId)),
        409,
        "conflict",
      );
      expect(details).toEqual({ field: "account_number", bank_account_id: first.bank_account_id });
    }
    // Another BIK is another account (one under which the same number's control key holds too).
    const other = await t.admin("POST", "/bank-accounts", { ...body(b.company_id), bik: "044525140" });
    expect(other.status).toBe(201);
    expect(t.services.admin.accounts.list()).toHaveLength(2);
  });

  test("the admin pages say so on the form", async () => {
    const t = makeTestApp();
    const a = t.fixtures.company();
    await t.admin("POST", "/bank-accounts", {
      company_id: a.company_id,
      bank: "sandbox",
      account_number: NUMBER,
      bik: BIK,
    });
    const login = await t.app.handle(
      new Request(`${BASE}/admin/login`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", origin: BASE },
        body: new URLSearchParams({ token: ADMIN_TOKEN }).toString(),
      }),
    );
    const cookie = login.headers.get("set-cookie")?.split(";")[0] ?? "";
    const page = await (
      await t.app.handle(new Request(`${BASE}/admin/accounts`, { headers: { cookie } }))
    ).text();
    const csrf = /name="_csrf" value="([^"]+)"/.exec(page)?.[1] ?? "";
    const res = await t.app.handle(
      new Request(`${BASE}/admin/accounts`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", origin: BASE, cookie },
        body: new URLSearchParams({
          _csrf: csrf,
          company_id: a.company_id,
          bank: "sandbox",
          account_number: NUMBER,
          bik: BIK,
        }).toString(),
      }),
    );
    expect(res.status).toBe(409);
    expect(await res.text()).toContain("Счёт с таким номером и БИК уже добавлен");
    expect(t.services.admin.accounts.list()).toHaveLength(1);
  });

  test("svc admin account create refuses the second one", async () => {
    const dbPath = join(tempDir(), "svc.db");
    const company = await svcAdminRun(dbPath, [
      "company",
      "create",
      "--name",
      "ООО А",
      "--inn",
      "7719617469",
    ]);
    const companyId = (JSON.parse(company.out) as { company_id: string }).company_id;
    const args = [
      "account",
      "create",
      "--company",
      companyId,
      "--bank",
      "sandbox",
      "--number",
      NUMBER,
      "--bik",
      BIK,
    ];
    expect((await svcAdminRun(dbPath, args)).code).toBe(0);
    const again = await svcAdminRun(dbPath, args);
    expect(again.code).toBe(1);
    expect(JSON.parse(again.err)).toMatchObject({ error: { code: "conflict" } });
  });

  test("a database that holds an account twice: svc refuses to start, names both, changes nothing", async () => {
    const dbPath = join(tempDir(), "svc.db");
    // The database as a release before the rule left it, with the same account in two companies.
    const db = openDatabase(dbPath);
    const before = embeddedMigrations.findIndex((m) => m.tag.startsWith("0009_"));
    migrate(db.db, embeddedMigrationMeta().slice(0, before));
    const insert = db.sqlite.query(
      `INSERT INTO bank_accounts (id, company_id, bank, account_number, bik, currency, alias, created_at)
       VALUES (?, ?, 'sandbox', ?, ?, 'RUB', ?, '2026-11-01T00:00:00.000Z')`,
    );
    db.sqlite.exec(
      "INSERT INTO companies (id, name, inn, created_at) VALUES ('c-1', 'ООО А', '7719617469', '2026-11-01T00:00:00.000Z'), ('c-2', 'ООО Б', '7707083893', '2026-11-01T00:00:00.000Z')",
    );
    insert.run("acc-one", "c-1", NUMBER, BIK, "main");
    insert.run("acc-two", "c-2", NUMBER, BIK, "copy");
    db.close();

    const failed = await startServe({ dbPath }).then(
      () => null,
      (e: Error) => e.message,
    );
    expect(failed).toContain("same bank account more than once");
    expect(failed).toContain(NUMBER);
    expect(failed).toContain("acc-one (company c-1, alias main)");
    expect(failed).toContain("acc-two (company c-2, alias copy)");
    expect(failed).toContain("Nothing was changed");

    const after = openDatabase(dbPath);
    const accounts = after.sqlite
      .query<{ n: number }, []>("SELECT count(*) AS n FROM bank_accounts")
      .get()?.n;
    const applied = after.sqlite
      .query<{ n: number }, []>("SELECT count(*) AS n FROM __drizzle_migrations")
      .get()?.n;
    after.close();
    expect(accounts).toBe(2);
    expect(applied).toBe(before);
  });
});
