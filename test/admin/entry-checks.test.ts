// lanes: sqlite postgres
// Data checked on entry (decisions §19): an account number whose control key does not fit its BIK,
// an alias taken in the company, a test token given an account outside the sandbox — refused on the
// admin API, the admin pages and `svc admin`; a forbidden_account says why; the same 1C file
// uploaded twice makes one statement.
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { withAccountKey } from "../../src/formats/validators";
import { signIn } from "../helpers/admin-browser";
import { BASE, json, makeTestApp, type TestApp } from "../helpers/app";
import { expectError } from "../helpers/envelope";
import { svcAdminRun, tempDir } from "../helpers/server";
import { bankFile, importFile, storedCounts } from "../statements/import-support";

const BIK = "044525225";
const VALID = withAccountKey("40702810900000004321", BIK);
/** The same number with another control key: one digit off. */
const WRONG_KEY = `${VALID.slice(0, 8)}${(Number(VALID[8]) + 1) % 10}${VALID.slice(9)}`;

function accountBody(companyId: string, over: Record<string, unknown> = {}) {
  return { company_id: companyId, bank: "sandbox", account_number: VALID, bik: BIK, ...over };
}

function fileAccount(t: TestApp, companyId: string) {
  const account = t.fixtures.account(companyId, "file");
  return {
    account,
    number: t.services.accounts.findById(account.bank_account_id)?.accountNumber as string,
  };
}

describe("bank accounts", () => {
  test("a number whose control key does not fit the BIK is 400 on account_number; nothing is stored", async () => {
    const t = makeTestApp();
    const company = t.fixtures.company();
    const details = await expectError(
      await t.admin("POST", "/bank-accounts", accountBody(company.company_id, { account_number: WRONG_KEY })),
      400,
      "validation_error",
    );
    expect(details).toEqual({ field: "account_number" });
    expect(t.services.admin.accounts.list()).toHaveLength(0);
    // The payment upload's own check agrees: the valid number is taken.
    expect((await t.admin("POST", "/bank-accounts", accountBody(company.company_id))).status).toBe(201);
  });

  test("an alias taken in the company is 409 on alias; another company may use it", async () => {
    const t = makeTestApp();
    const a = t.fixtures.company("ООО А", "7719617469");
    const b = t.fixtures.company("ООО Б", "7707083893");
    expect(
      (await t.admin("POST", "/bank-accounts", accountBody(a.company_id, { alias: "main" }))).status,
    ).toBe(201);
    const second = withAccountKey("40702810900000008888", BIK);
    const details = await expectError(
      await t.admin(
        "POST",
        "/bank-accounts",
        accountBody(a.company_id, { account_number: second, alias: "main" }),
      ),
      409,
      "conflict",
    );
    expect(details).toEqual({ field: "alias" });
    const other = await t.admin(
      "POST",
      "/bank-accounts",
      accountBody(b.company_id, { account_number: second, alias: "main" }),
    );
    expect(other.status).toBe(201);
  });

  test("without an alias, two numbers ending alike get different ones", async () => {
    const t = makeTestApp();
    const company = t.fixtures.company();
    const one = withAccountKey("40702810900000012345", BIK);
    const two = withAccountKey("40702810900000022345", BIK);
    const first = await json<{ alias: string }>(
      await t.admin("POST", "/bank-accounts", accountBody(company.company_id, { account_number: one })),
    );
    const second = await json<{ alias: string }>(
      await t.admin("POST", "/bank-accounts", accountBody(company.company_id, { account_number: two })),
    );
    expect(first.alias).toBe("2345");
    expect(second.alias).toBe(two.slice(-6));
  });

  test("the admin pages' form refuses a wrong control key and a taken alias with the service's message", async () => {
    const t = makeTestApp();
    const company = t.fixtures.company();
    const browser = await signIn(t);
    const wrong = await browser.post("/admin/accounts", {
      company_id: company.company_id,
      bank: "sandbox",
      account_number: WRONG_KEY,
      bik: BIK,
    });
    expect(wrong.status).toBe(400);
    expect(await wrong.text()).toContain("контрольный ключ");
    t.fixtures.account(company.company_id, "sandbox", { alias: "main" });
    const taken = await browser.post("/admin/accounts", {
      company_id: company.company_id,
      bank: "sandbox",
      account_number: VALID,
      bik: BIK,
      alias: "main",
    });
    expect(taken.status).toBe(409);
    expect(await taken.text()).toContain("Псевдоним main уже занят");
    expect(t.services.admin.accounts.list()).toHaveLength(1);
  });
  test("svc admin refuses a wrong control key, a taken alias and a test token's live account", async () => {
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
    const account = (number: string, bank = "sandbox") => [
      ...["account", "create", "--company", companyId, "--bank", bank],
      ...["--number", number, "--bik", BIK, "--alias", "main"],
    ];
    const wrong = await svcAdminRun(dbPath, account(WRONG_KEY));
    expect(wrong.code).toBe(1);
    expect(JSON.parse(wrong.err)).toMatchObject({
      error: { code: "validation_error", details: { field: "account_number" } },
    });
    const made = await svcAdminRun(dbPath, account(VALID, "file"));
    expect(made.code).toBe(0);
    const taken = await svcAdminRun(dbPath, account(withAccountKey("40702810900000008888", BIK)));
    expect(JSON.parse(taken.err)).toMatchObject({ error: { code: "conflict", details: { field: "alias" } } });
    const accountId = (JSON.parse(made.out) as { bank_account_id: string }).bank_account_id;
    const token = await svcAdminRun(dbPath, [
      ...["token", "create", "--company", companyId, "--purpose", "integration", "--mode", "test"],
      ...["--read-statements", "--account", accountId],
    ]);
    expect(token.code).toBe(1);
    expect(JSON.parse(token.err)).toMatchObject({
      error: { code: "validation_error", details: { field: "accounts" } },
    });
  });
});

describe("test tokens and forbidden_account", () => {
  test("a svc_test_ token cannot be given an account outside the sandbox (create and change)", async () => {
    const t = makeTestApp();
    const company = t.fixtures.company();
    const { account: file } = fileAccount(t, company.company_id);
    const sandbox = t.fixtures.account(company.company_id);
    const grant = (id: string) => ({ bank_account_id: id, allow_read_statements: true });
    const refused = await expectError(
      await t.admin("POST", "/tokens", {
        company_id: company.company_id,
        name: "erp",
        purpose: "integration",
        mode: "test",
        scope_read_statements: true,
        accounts: [grant(sandbox.bank_account_id), grant(file.bank_account_id)],
      }),
      400,
      "validation_error",
    );
    expect(refused).toMatchObject({ field: "accounts", bank_account_ids: [file.bank_account_id] });

    const token = t.fixtures.token(company.company_id, { accounts: [grant(sandbox.bank_account_id)] });
    const patched = await expectError(
      await t.admin("PATCH", `/tokens/${token.api_token_id}`, { accounts: [grant(file.bank_account_id)] }),
      400,
      "validation_error",
    );
    expect(patched).toMatchObject({ field: "accounts" });
    // A live token may have it.
    const live = await t.admin("POST", "/tokens", {
      company_id: company.company_id,
      name: "erp live",
      purpose: "integration",
      mode: "live",
      scope_read_statements: true,
      accounts: [grant(file.bank_account_id)],
    });
    expect(live.status).toBe(201);
  });

  test("forbidden_account carries details.reason: no_allow, or test_token for one stored before the check", async () => {
    const t = makeTestApp();
    const company = t.fixtures.company();
    const { account: file } = fileAccount(t, company.company_id);
    const sandbox = t.fixtures.account(company.company_id);
    const token = t.fixtures.token(company.company_id, {
      accounts: [{ bank_account_id: sandbox.bank_account_id, allow_read_statements: true }],
    });
    const order = (accountId: string) =>
      t.request("POST", "/api/v1/integration/statements", {
        token: token.token,
        body: {
          bank_account_id: accountId,
          external_id: `o-${accountId}`,
          date_from: "2026-11-01",
          date_to: "2026-11-02",
        },
      });
    const noAllow = await expectError(await order(file.bank_account_id), 403, "forbidden_account");
    expect(noAllow).toEqual({ reason: "no_allow" });

    // A database of an earlier version may hold such an allow (stored past the admin's check).
    const again = t.fixtures.token(company.company_id);
    t.services.tokens.update(again.api_token_id, {}, [
      { bankAccountId: file.bank_account_id, allowReadStatements: true, allowSendPayments: false },
    ]);
    const res = await t.request("POST", "/api/v1/integration/statements", {
      token: again.token,
      body: {
        bank_account_id: file.bank_account_id,
        external_id: "x",
        date_from: "2026-11-01",
        date_to: "2026-11-02",
      },
    });
    const testToken = await expectError(res, 403, "forbidden_account");
    expect(testToken).toEqual({ reason: "test_token" });
  });
});

describe("the same 1C file twice", () => {
  test("from the admin page: one statement, the page says the file is already there", async () => {
    const t = makeTestApp();
    const company = t.fixtures.company();
    const { account, number } = fileAccount(t, company.company_id);
    const browser = await signIn(t);
    const file = bankFile(number, "2026-11-02", "2026-11-05");
    const upload = () => {
      const form = new FormData();
      form.append("_csrf", browser.csrf);
      form.append("bank_account_id", account.bank_account_id);
      form.append("file", new Blob([file.bytes as Uint8Array<ArrayBuffer>]), "kl_to_1c.txt");
      return t.app.handle(
        new Request(`${BASE}/admin/statements/import`, {
          method: "POST",
          headers: { cookie: browser.cookie, origin: BASE },
          body: form,
        }),
      );
    };
    expect((await upload()).status).toBe(303);
    const once = storedCounts(t);
    expect(once.statements).toBe(1);
    expect((await upload()).status).toBe(303);
    expect(storedCounts(t)).toEqual(once);
    expect(await (await browser.get("/admin/statements")).text()).toContain("Этот файл уже загружен");
  });

  test("through the API under another external_id: the statement already imported, 200", async () => {
    const t = makeTestApp();
    const company = t.fixtures.company();
    const { account, number } = fileAccount(t, company.company_id);
    const token = t.fixtures.token(company.company_id, {
      mode: "live",
      accounts: [{ bank_account_id: account.bank_account_id, allow_read_statements: true }],
    });
    const file = bankFile(number, "2026-11-02", "2026-11-05");
    const first = await importFile(t, token.token, account.bank_account_id, "nov-a", file.bytes);
    expect(first.status).toBe(201);
    const { statement_id } = await json<{ statement_id: string }>(first);
    const second = await importFile(t, token.token, account.bank_account_id, "nov-b", file.bytes);
    expect(second.status).toBe(200);
    expect(await json(second)).toMatchObject({ statement_id, external_id: "nov-a" });
    expect(storedCounts(t).statements).toBe(1);
  });
});
