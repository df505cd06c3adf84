// lanes: sqlite postgres
// Statements from a bank that speaks 1C:DirectBank (decisions §18), through svc's own API, against
// a fake bank on a loopback port that checks every request svc sends against the official schema
// and answers with documents that validate — and one answering Alfa-Bank's messages as they are.
import { afterEach, describe, expect, test } from "bun:test";
import { DirectBankFormatError, parseStatement } from "../../src/formats/directbank";
import type { StatementOperation } from "../../src/formats/types";
import { withAccountKey } from "../../src/formats/validators";
import { signIn } from "../helpers/admin-browser";
import { BASE, json, makeTestApp, storeDump, type TestApp } from "../helpers/app";
import { BANK_BIC, type FakeDirectBank, SAMPLES, startFakeDirectBank } from "../support/fake-directbank";

const ACCOUNT = withAccountKey("40702810900000000777", BANK_BIC);
let fake: FakeDirectBank | null = null;

afterEach(async () => {
  const f = fake;
  fake = null;
  if (f) {
    await f.stop();
    expect(f.violations).toEqual([]);
  }
});

function op(i: number, direction: "credit" | "debit", date: string, amount: number): StatementOperation {
  const us = { name: "ООО Ромашка", inn: "7719617469", kpp: "771901001", account: ACCOUNT };
  const them = {
    name: `Контрагент ${i}`,
    inn: "7707083893",
    kpp: "773601001",
    account: "40702810100000000001",
  };
  const bank = { bank_name: "АО Тестбанк", bank_bik: BANK_BIC, bank_corr_account: "30101810400000000999" };
  return {
    operation_id: `op-${i}`,
    direction,
    doc_type: "payment_order",
    doc_number: String(100 + i),
    doc_date: date,
    amount,
    currency: "RUB",
    purpose: `Оплата по счёту ${i}`,
    payer: { ...(direction === "credit" ? them : us), ...bank },
    payee: { ...(direction === "credit" ? us : them), ...bank },
    priority: "5",
  };
}

const OPERATIONS = [
  op(1, "credit", "2026-10-01", 150_000_00),
  op(2, "debit", "2026-10-03", 12_345_67),
  op(3, "credit", "2026-10-09", 1_00),
  op(4, "debit", "2026-10-15", 99_99),
  op(5, "credit", "2026-10-20", 5_000_00),
];

interface World {
  t: TestApp;
  fake: FakeDirectBank;
  companyId: string;
  token: string;
  tokenId: string;
}

function world(options: Parameters<typeof startFakeDirectBank>[0] = {}): World {
  fake = startFakeDirectBank(options);
  fake.addUser("statements", "s3cret");
  fake.addAccount(ACCOUNT, { opening: 1_000_000_00, operations: OPERATIONS });
  const t = makeTestApp();
  const company = t.services.admin.companies.create({
    name: "ООО Ромашка",
    inn: "7719617469",
    kpp: "771901001",
  });
  const token = t.fixtures.token(company.company_id, { mode: "live", read: true });
  return { t, fake, companyId: company.company_id, token: token.token, tokenId: token.api_token_id };
}

async function addAccount(w: World, credentials: Record<string, unknown>, number = ACCOUNT, bik = BANK_BIC) {
  const res = await w.t.admin("POST", "/bank-accounts", {
    company_id: w.companyId,
    bank: "directbank",
    account_number: number,
    bik,
    credentials: { kind: "directbank", login: "statements", password: "s3cret", ...credentials },
  });
  if (res.status === 201) {
    const id = (await json<{ bank_account_id: string }>(res)).bank_account_id;
    w.t.services.admin.tokens.patch(w.tokenId, {
      accounts: [{ bank_account_id: id, allow_read_statements: true }],
    });
    return { res, id };
  }
  return { res, id: "" };
}

async function order(w: World, accountId: string, from: string, to: string) {
  const res = await w.t.request("POST", "/api/v1/integration/statements", {
    token: w.token,
    body: { bank_account_id: accountId, date_from: from, date_to: to, external_id: crypto.randomUUID() },
  });
  expect(res.status).toBe(201);
  return (await json<{ statement_id: string }>(res)).statement_id;
}

async function settle(w: World, id: string) {
  for (let i = 0; i < 8; i++) {
    await w.t.services.poller.tick();
    await w.t.services.poller.idle();
    if (w.t.services.statementRepo.findById(id)?.status !== "processing") break;
    w.t.clock.advance(15 * 60_000);
  }
  return json<Record<string, unknown>>(
    await w.t.request("GET", `/api/v1/integration/statements/${id}`, { token: w.token }),
  );
}

async function exported(w: World, id: string) {
  return json<{ operations: Record<string, unknown>[] }>(
    await w.t.request("GET", `/api/v1/integration/statements/${id}/export?format=json`, { token: w.token }),
  );
}

describe("statements from a DirectBank bank", () => {
  for (const version of ["2.3.2", "2.2.2"] as const) {
    test(`settings file → logon → a request per week → list → packets → ready, equal to the bank's (${version})`, async () => {
      const w = world({ version, listsBeforeReady: 1 });
      const { res, id } = await addAccount(w, { settings: w.fake.settingsXml() });
      expect(res.status).toBe(201);
      const statementId = await order(w, id, "2026-10-01", "2026-10-20");
      const statement = await settle(w, statementId);
      expect(statement.status).toBe("ready");
      // 20 days in pieces of at most 7.
      expect(w.fake.requests).toEqual([
        { from: "2026-10-01", to: "2026-10-07", type: "0" },
        { from: "2026-10-08", to: "2026-10-14", type: "0" },
        { from: "2026-10-15", to: "2026-10-20", type: "0" },
      ]);
      expect(statement.operations_count).toBe(OPERATIONS.length);
      const row = w.t.services.statementRepo.findById(statementId)!;
      expect(row.opening_balance).toBe(1_000_000_00);
      expect(row.closing_balance).toBe(1_000_000_00 + 150_000_00 - 12_345_67 + 1_00 - 99_99 + 5_000_00);
      const ops = (await exported(w, statementId)).operations;
      // Every field the bank sent, the bank's own operation ids included; amounts exact.
      expect(ops).toEqual(OPERATIONS.map(({ priority, ...o }) => ({ ...o, amount: o.amount / 100 })));
      // The login is sealed: its password is nowhere in the store.
      expect(storeDump(w.t)).not.toContain("s3cret");
    });
  }

  test("url + customer_id instead of settings; an expired session is opened again; statements matched by their period", async () => {
    const w = world({ echoRequestId: false });
    const { res, id } = await addAccount(w, { url: w.fake.url, customer_id: w.fake.customerId });
    expect(res.status).toBe(201);
    const statementId = await order(w, id, "2026-10-01", "2026-10-05");
    await w.t.services.poller.tick();
    await w.t.services.poller.idle();
    w.fake.expireSessions();
    const statement = await settle(w, statementId);
    expect(statement.status).toBe("ready");
    expect(w.fake.calls.filter((c) => c === "Logon").length).toBeGreaterThanOrEqual(3);
  });

  test("the balance is a StatementType 2 request (matched by its kind and date when the bank names no request)", async () => {
    const w = world({ echoRequestId: false });
    const { id } = await addAccount(w, { settings: w.fake.settingsXml() });
    const res = await w.t.admin("POST", `/bank-accounts/${id}/balance/refresh`);
    expect(res.status).toBe(200);
    const view = await json<{ balance: number }>(res);
    expect(Math.round(view.balance * 100)).toBe(
      1_000_000_00 + 150_000_00 - 12_345_67 + 1_00 - 99_99 + 5_000_00,
    );
    expect(w.fake.requests.map((r) => r.type)).toEqual(["2"]);
  });

  /** An account on the fake, the bank changed by `arrange`, a three-day statement ordered and settled. */
  async function failedOrder(arrange: (fake: FakeDirectBank) => void) {
    const w = world();
    const { id } = await addAccount(w, { settings: w.fake.settingsXml() });
    arrange(w.fake);
    const statement = await settle(w, await order(w, id, "2026-10-01", "2026-10-03"));
    expect(statement.status).toBe("failed");
    return { w, id, error: statement.error as { code: string; message: string; details?: unknown } };
  }

  test("a statement refused in a StatusPacketNotice fails with bank_error and the bank's code", async () => {
    const { error } = await failedOrder((fake) => fake.refuseStatements("2206"));
    expect(error).toMatchObject({ code: "bank_error", details: { bank_code: "2206" } });
  });

  test("a statement that does not add up fails naming the gap", async () => {
    const { error } = await failedOrder((fake) => fake.skewNextStatement(1_00));
    expect(error.code).toBe("bank_error");
    expect(error.message).toContain("расхождение 1.00");
  });

  test("a statement without a required element fails naming it", async () => {
    const { error } = await failedOrder((fake) =>
      fake.editNextStatement((xml) => xml.replace(/<ClosingBalance>[^<]*<\/ClosingBalance>/, "")),
    );
    expect(error.code).toBe("bank_error");
    expect(error.message).toContain("ClosingBalance");
  });

  test("an element the schema does not know is ignored", async () => {
    const w = world();
    const { id } = await addAccount(w, { settings: w.fake.settingsXml() });
    w.fake.editNextStatement((xml) => xml.replace("</Data>", "<BankExtra>ignored</BankExtra></Data>"));
    expect((await settle(w, await order(w, id, "2026-10-01", "2026-10-03"))).status).toBe("ready");
  });

  test("an unknown packet (2102) ends the order with the bank's code", async () => {
    const { error } = await failedOrder((fake) => fake.forgetPackets());
    expect(error).toMatchObject({ code: "bank_error", details: { bank_code: "2102" } });
  });

  test("a password changed at the bank: the order fails with 1201 and the admin view names the cause", async () => {
    const { w, id, error } = await failedOrder((fake) => {
      fake.addUser("statements", "changed");
      fake.expireSessions();
    });
    expect(error).toMatchObject({ code: "bank_error", details: { bank_code: "1201" } });
    const list = await json<{
      bank_accounts: { bank_account_id: string; credentials_status: string; credentials_message: string }[];
    }>(await w.t.admin("GET", "/bank-accounts"));
    const view = list.bank_accounts.find((a) => a.bank_account_id === id)!;
    expect(view.credentials_status).toBe("renewal_needed");
    expect(view.credentials_message).toContain("1201");

    // The operator replaces the login (url and customer id are enough); the bank tries it first.
    const replace = (password: string) =>
      w.t.admin("PUT", `/bank-accounts/${id}/credentials`, {
        credentials: {
          kind: "directbank",
          url: w.fake.url,
          customer_id: w.fake.customerId,
          login: "statements",
          password,
        },
      });
    const refused = await replace("s3cret");
    expect(refused.status).toBe(400);
    expect((await json<{ error: { details: { field: string } } }>(refused)).error.details.field).toBe(
      "credentials.login",
    );
    const replaced = await replace("changed");
    expect(replaced.status).toBe(200);
    expect((await json<{ credentials_status: string }>(replaced)).credentials_status).toBe("active");
    expect((await settle(w, await order(w, id, "2026-10-04", "2026-10-05"))).status).toBe("ready");
  });
});

describe("accounts the settings name", () => {
  test("discovered through the login and added in one step, sharing it; each orders its own statement", async () => {
    const w = world();
    const second = withAccountKey("40702840100000000778", BANK_BIC);
    w.fake.addAccount(second, {
      opening: 5_00,
      operations: [{ ...op(9, "credit", "2026-10-02", 7_00), currency: "USD" }],
    });
    const { id } = await addAccount(w, { settings: w.fake.settingsXml({ accounts: [ACCOUNT, second] }) });
    const found = await json<{ accounts: Record<string, unknown>[] }>(
      await w.t.admin("GET", `/banks/directbank/accounts?bank_account_id=${id}`),
    );
    expect(found.accounts).toEqual([
      { account_number: ACCOUNT, bik: BANK_BIC, currency: "RUB", status: "Enabled", bank_account_id: id },
      { account_number: second, bik: BANK_BIC, currency: "USD", status: "Enabled", bank_account_id: null },
    ]);
    const imported = await w.t.admin("POST", "/banks/directbank/accounts/import", {
      bank_account_id: id,
      accounts: [{ account_number: second, bik: BANK_BIC }],
    });
    expect(imported.status).toBe(201);
    const secondId = (await json<{ bank_accounts: { bank_account_id: string }[] }>(imported))
      .bank_accounts[0]!.bank_account_id;
    w.t.services.admin.tokens.patch(w.tokenId, {
      accounts: [{ bank_account_id: secondId, allow_read_statements: true }],
    });
    const statementId = await order(w, secondId, "2026-10-01", "2026-10-02");
    expect((await settle(w, statementId)).status).toBe("ready");
    expect(w.t.services.statementRepo.findById(statementId)!.closing_balance).toBe(12_00);
    // A currency account's operations are in its currency (the bank's documents name none).
    expect((await exported(w, statementId)).operations).toMatchObject([{ amount: 7, currency: "USD" }]);
  });
});

describe("a real bank's messages (Alfa-Bank, 2.2.2) as they are", () => {
  test("the sample statement is read, adds up, and equals the document", async () => {
    const w = world({ version: "2.2.2", samples: true });
    const { res, id } = await addAccount(
      w,
      { url: w.fake.url, customer_id: w.fake.customerId, version: "2.2.2", max_days: 30 },
      "40702810701300009144",
      "044525593",
    );
    expect(res.status).toBe(201);
    const statementId = await order(w, id, "2021-05-01", "2021-05-30");
    const statement = await settle(w, statementId);
    expect(statement.status).toBe("ready");
    const bank = parseStatement(await Bun.file(`${SAMPLES}/getpack-response-statement.xml`).text());
    expect(statement.operations_count).toBe(bank.operations.length);
    const row = w.t.services.statementRepo.findById(statementId)!;
    expect(row.opening_balance).toBe(bank.openingBalance!);
    expect(row.closing_balance).toBe(bank.closingBalance);
    // As the bank wrote them: dates without their zone, names as cut, every party field.
    const ops = (await exported(w, statementId)).operations;
    expect(
      ops.map((o) => [
        o.operation_id,
        o.direction,
        o.doc_number,
        o.doc_date,
        Math.round((o.amount as number) * 100),
      ]),
    ).toEqual(bank.operations.map((o) => [o.operation_id, o.direction, o.doc_number, o.doc_date, o.amount]));
    expect(ops[0]).toMatchObject({
      operation_id: "WSHHD215B0000004",
      doc_date: "2021-05-11",
      amount: 2433.07,
      payer: { name: 'Общество с ограниченной ответственностью "Мир Технологий', inn: "6315016823" },
    });
    expect(ops.map((o) => [o.purpose, o.payer, o.payee])).toEqual(
      bank.operations.map((o) => [o.purpose, o.payer, o.payee]),
    );
  });

  test("a statement missing a required element is an error naming it", () => {
    const xml = `<Statement xmlns="http://directbank.1c.ru/XMLSchema" id="x" formatVersion="2.2.2" creationDate="2021-06-11T08:46:52Z"><Sender bic="044525593"/><Recipient id="1"/><Data><StatementType>0</StatementType><DateTo>2021-05-30Z</DateTo><Bank><BIC>044525593</BIC></Bank><ClosingBalance>1</ClosingBalance><Unknown>ignored</Unknown></Data></Statement>`;
    expect(() => parseStatement(xml)).toThrow(DirectBankFormatError);
    expect(() => parseStatement(xml)).toThrow(/Account/);
  });
});

describe("a DirectBank account's login at creation", () => {
  test("bad settings, a plain-http address, a login the bank refuses: 400 with details.field, nothing stored", async () => {
    const w = world();
    const cases: [Record<string, unknown>, string][] = [
      [{ settings: "<NotSettings/>" }, "credentials.settings"],
      [{ url: "http://bank.example.com/directbank", customer_id: "1" }, "credentials.url"],
      [{ settings: w.fake.settingsXml({ url: "http://bank.example.com/x" }) }, "credentials.settings"],
      [{ settings: w.fake.settingsXml(), password: "wrong" }, "credentials.login"],
      // Nothing answers there: the address is at fault.
      [{ url: "http://127.0.0.1:9/directbank", customer_id: "1" }, "credentials.url"],
    ];
    for (const [credentials, field] of cases) {
      const { res } = await addAccount(w, credentials);
      expect(res.status).toBe(400);
      const body = await json<{ error: { code: string; details: { field: string } } }>(res);
      expect(body.error.code).toBe("validation_error");
      expect(body.error.details.field).toBe(field);
    }
    const list = await json<{ bank_accounts: unknown[] }>(await w.t.admin("GET", "/bank-accounts"));
    expect(list.bank_accounts).toEqual([]);
  });
});

describe("the admin page's DirectBank form", () => {
  test("the settings file uploaded and the password entered: the login is tried, the account added; a wrong password is named", async () => {
    const w = world();
    const browser = await signIn(w.t);
    const page = await (await browser.get("/admin/accounts")).text();
    expect(page).toContain('action="/admin/accounts/directbank"');
    const post = (password: string) => {
      const form = new FormData();
      const fields = { _csrf: browser.csrf, company_id: w.companyId, account_number: ACCOUNT, bik: BANK_BIC };
      for (const [k, v] of Object.entries({ ...fields, password })) form.append(k, v);
      form.append("settings_file", new Blob([w.fake.settingsXml()]), "settings.xml");
      return w.t.app.handle(
        new Request(`${BASE}/admin/accounts/directbank`, {
          method: "POST",
          headers: { cookie: browser.cookie, origin: BASE },
          body: form,
        }),
      );
    };
    // The login comes from the settings' ReceiptStatement; the bank refuses the wrong password.
    const refused = await post("wrong");
    expect(refused.status).toBe(400);
    const text = await refused.text();
    expect(text).toContain("1201");
    expect(text).not.toContain("wrong");
    const added = await post("s3cret");
    expect(added.status).toBe(303);
    const list = await json<{ bank_accounts: { bank: string; credentials_status: string }[] }>(
      await w.t.admin("GET", "/bank-accounts"),
    );
    expect(list.bank_accounts).toMatchObject([{ bank: "directbank", credentials_status: "active" }]);
  });
});
