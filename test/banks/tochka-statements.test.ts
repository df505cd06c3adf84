// lanes: sqlite postgres
// Tochka statements and balances through svc's own API, against the fake bank whose every request
// and answer is checked against the bank's OpenAPI document.
import { describe, expect, test } from "bun:test";
import { parse as parseCsv } from "csv-parse/sync";
import iconv from "iconv-lite";
import { json } from "../helpers/app";
import type { FakeTransaction } from "../support/fake-tochka";
import { type TochkaWorld, tochkaWorlds } from "../support/tochka-world";

const worlds = tochkaWorlds();
const setup = (options: Parameters<typeof worlds.start>[0] = {}) =>
  worlds.start({ pollsBeforeReady: 2, ...options });

async function order(w: TochkaWorld, accountId: string, from = "2026-10-01", to = "2026-10-31") {
  const res = await w.t.request("POST", "/api/v1/integration/statements", {
    token: w.token,
    body: { bank_account_id: accountId, date_from: from, date_to: to, external_id: crypto.randomUUID() },
  });
  expect(res.status).toBe(201);
  return (await json<{ statement_id: string }>(res)).statement_id;
}

/** What svc must make of a fake transaction (kopecks stay kopecks; json shows rubles). */
function expectedJson(tx: FakeTransaction) {
  const party = (p: FakeTransaction["debtor"]) => ({
    name: p.name,
    inn: p.inn ?? "",
    kpp: p.kpp ?? "",
    account: p.account,
    bank_name: p.agent.name,
    bank_bik: p.agent.bik,
    bank_corr_account: p.agent.corrAccount,
  });
  return {
    direction: tx.direction,
    doc_number: tx.documentNumber,
    doc_date: tx.date,
    amount: tx.amount / 100,
    purpose: tx.description,
    payer: party(tx.debtor),
    payee: party(tx.creditor),
    ...(tx.taxFields
      ? {
          budget: Object.fromEntries(
            Object.entries({
              originator_status: tx.taxFields.originatorStatus,
              kbk: tx.taxFields.kbk,
              oktmo: tx.taxFields.oktmo,
              basis: tx.taxFields.base,
              period: tx.taxFields.field107,
              number: tx.taxFields.documentNumber,
              date: tx.taxFields.documentDate,
              type: tx.taxFields.type,
            }).filter(([, v]) => v !== undefined),
          ),
        }
      : {}),
  };
}

function bookedOf(w: TochkaWorld, bankId: string): FakeTransaction[] {
  return w.fake.transactionsOf(bankId).filter((tx) => tx.status === "booked");
}

describe("statements from Tochka", () => {
  test("ordered, polled Created → Processing → Ready; all three exports equal what the bank returned", async () => {
    const w = await setup();
    const account = await w.account({ transactions: 120 });
    const id = await order(w, account.id);
    const statement = await w.settle(id);
    expect(statement.status).toBe("ready");

    const booked = bookedOf(w, account.bankId).filter(
      (tx) => tx.date >= "2026-10-01" && tx.date <= "2026-10-31",
    );
    const pendings = w.fake.transactionsOf(account.bankId).length - bookedOf(w, account.bankId).length;
    expect(pendings).toBeGreaterThan(0); // the fake sends pending ones too: svc must leave them out
    expect(statement.operations_count).toBe(booked.length);

    const exported = await json<{ operations: Record<string, unknown>[] }>(
      await w.t.request("GET", `/api/v1/integration/statements/${id}/export?format=json`, { token: w.token }),
    );
    expect(exported.operations.map(({ operation_id, doc_type, currency, ...rest }) => rest)).toEqual(
      booked.map(expectedJson),
    );
    // Exact kopecks: the sum of the file is the sum of the bank's integers, no float drift.
    const sum = (dir: string) =>
      booked.filter((tx) => tx.direction === dir).reduce((s, tx) => s + tx.amount, 0);
    const exportedSum = (dir: string) =>
      exported.operations
        .filter((o) => o.direction === dir)
        .reduce((s, o) => s + Math.round((o.amount as number) * 100), 0);
    expect(exportedSum("credit")).toBe(sum("credit"));
    expect(exportedSum("debit")).toBe(sum("debit"));

    const csv = await (
      await w.t.request("GET", `/api/v1/integration/statements/${id}/export?format=csv`, { token: w.token })
    ).text();
    expect(parseCsv(csv, { columns: true })).toHaveLength(booked.length);
    const onec = iconv.decode(
      Buffer.from(
        await (
          await w.t.request("GET", `/api/v1/integration/statements/${id}/export?format=1c`, {
            token: w.token,
          })
        ).arrayBuffer(),
      ),
      "win1251",
    );
    expect(onec.match(/^СекцияДокумент=/gm)).toHaveLength(booked.length);
    expect(onec).toContain(`РасчСчет=${account.number}`);
    // Tax payments carry their budget fields into the 1C file (fields 101, 104–110).
    const taxed = booked.filter((tx) => tx.taxFields?.kbk);
    expect(taxed.length).toBeGreaterThan(0);
    for (const tx of taxed) expect(onec).toContain(`ПоказательКБК=${tx.taxFields!.kbk}\r\n`);
    expect(onec.match(/^СтатусСоставителя=/gm)?.length).toBe(booked.filter((tx) => tx.taxFields).length);

    // Every call went to the production base with the customer's JWT.
    const api = w.fake.requests.filter((r) => r.base !== "auth");
    expect(api.length).toBeGreaterThanOrEqual(3);
    expect(new Set(api.map((r) => `${r.base} ${r.bearer}`))).toEqual(new Set([`uapi jwt-${account.number}`]));
    // The same period again gives the same operation ids (the bank's transaction ids).
    const again = await w.settle(await order(w, account.id));
    expect(again.status).toBe("ready");
    const ids = (sid: string) =>
      w.t.db
        .query<{ id: string }, [string]>(
          "SELECT operation_id AS id FROM statement_operations WHERE statement_id = ? ORDER BY seq",
        )
        .all(sid)
        .map((r) => r.id);
    expect(ids(again.statement_id as string)).toEqual(ids(id));
  });

  test("a statement the bank ends in Error is failed; one that does not add up is refused with the figures", async () => {
    const w = await setup();
    const broken = await w.account();
    w.fake.statementError(broken.bankId);
    const failed = await w.settle(await order(w, broken.id));
    expect(failed.status).toBe("failed");
    expect((failed.error as { code: string }).code).toBe("bank_error");

    const wrong = await w.account();
    w.fake.breakBalances(wrong.bankId);
    const refused = await w.settle(await order(w, wrong.id));
    expect(refused.status).toBe("failed");
    const error = refused.error as { code: string; message: string };
    expect(error.code).toBe("statement_totals_mismatch");
    expect(error.message).toMatch(/остаток на конец/);
    // Nothing of it was stored.
    const stored = w.t.db
      .query<{ n: number }, [string]>("SELECT count(*) AS n FROM statement_operations WHERE statement_id = ?")
      .get(refused.statement_id as string);
    expect(stored?.n).toBe(0);
  });

  test("429 with Retry-After and 5xx are retried later, not failed; the wait the bank asked for is kept", async () => {
    const w = await setup();
    const account = await w.account();
    w.fake.fail({
      method: "POST",
      pathIncludes: "/statements",
      status: 429,
      headers: { "Retry-After": "120" },
    });
    const id = await order(w, account.id);
    await w.t.services.poller.idle();
    const before = w.t.clock.now().getTime();
    let row = w.t.services.statementRepo.findById(id)!;
    expect(row.status).toBe("processing");
    expect(row.bank_state).toBe("pending");
    expect(row.next_poll_at_ms).toBeGreaterThanOrEqual(before + 120_000);
    // Not asked again before the bank's time.
    await w.t.services.poller.tick();
    await w.t.services.poller.idle();
    expect(w.fake.requests.filter((r) => r.method === "POST" && r.path.includes("/statements"))).toHaveLength(
      1,
    );

    w.fake.fail({ method: "GET", pathIncludes: "/statements/", status: 503 });
    const statement = await w.settle(id);
    expect(statement.status).toBe("ready");
    row = w.t.services.statementRepo.findById(id)!;
    expect(row.status).toBe("ready");
  });

  test("a timeout is retried: the bank that does not answer in time is asked again", async () => {
    const w = await setup({ env: {} });
    const account = await w.account();
    // The adapter waits 30 s by default; the test app's adapter is the production one, so this
    // checks the path through a delayed answer that still arrives (the timeout itself is unit-tested).
    w.fake.delay(50, { method: "POST", pathIncludes: "/statements" });
    const statement = await w.settle(await order(w, account.id));
    expect(statement.status).toBe("ready");
  });

  test("a 4xx refusal fails the statement with the bank's code in details.bank_code", async () => {
    const w = await setup();
    const account = await w.account();
    w.fake.fail({
      method: "POST",
      pathIncludes: "/statements",
      status: 400,
      body: {
        code: "400",
        id: "bank-error-id-7f3a",
        message: "Validation error",
        Errors: [
          { errorCode: "Period.Invalid", message: "Неверный период", url: "https://enter.tochka.com/doc" },
        ],
      },
    });
    const statement = await w.settle(await order(w, account.id));
    expect(statement.status).toBe("failed");
    expect(statement.error).toEqual({
      code: "bank_error",
      message: "Банк отказал: Неверный период",
      details: { bank_code: "Period.Invalid" },
    });
    // The bank's error id is in the log (for its support); the customer's JWT is nowhere.
    const logs = w.t.logs.join("\n");
    expect(logs).toContain("bank-error-id-7f3a");
    expect(logs).not.toContain(`jwt-${account.number}`);
  });

  test("401/403: the login needs renewal (shown to the operator), the statement fails, nothing retries", async () => {
    const w = await setup();
    const account = await w.account();
    w.fake.revokeJwt(`jwt-${account.number}`);
    const statement = await w.settle(await order(w, account.id));
    expect(statement.status).toBe("failed");
    expect((statement.error as { message: string }).message).toMatch(/Обновите доступ/);
    const accounts = await json<{ bank_accounts: Record<string, unknown>[] }>(
      await w.t.admin("GET", "/bank-accounts"),
    );
    const view = accounts.bank_accounts.find((a) => a.bank_account_id === account.id)!;
    expect(view.credentials_status).toBe("renewal_needed");
    expect(view.credentials_message).toMatch(/Обновите доступ к Точке/);
    expect(JSON.stringify(accounts)).not.toContain(`jwt-${account.number}`);
    const calls = w.fake.requests.length;
    await w.t.services.poller.tick();
    await w.t.services.poller.idle();
    expect(w.fake.requests.length).toBe(calls);
  });

  test("a statement of 20,000 transactions in pages: every page followed, every operation stored", async () => {
    const w = await setup({ pageSize: 3000 });
    const account = await w.account({ transactions: 20_000 });
    const statement = await w.settle(await order(w, account.id));
    expect(statement.status).toBe("ready");
    expect(statement.operations_count).toBe(bookedOf(w, account.bankId).length);
    const pages = w.fake.requests.filter((r) => r.method === "GET" && r.query.page !== undefined);
    expect(pages.length).toBeGreaterThanOrEqual(6);
  }, 30_000); // storing 20,000 operations takes seconds on PostgreSQL
});

describe("the bank's sandbox and test tokens", () => {
  test("a sandbox account is called on the sandbox base with its fixed bearer; a svc_test_ token reaches it", async () => {
    const w = await setup();
    const live = await w.account();
    const sandbox = await w.account({ environment: "sandbox" });
    const created = w.t.fixtures.token(w.companyId, {
      mode: "test",
      accounts: [{ bank_account_id: sandbox.id, allow_read_statements: true }],
    });
    const testToken = created.token;
    // The admin side refuses a test token an allow outside the sandbox (decisions §19); one
    // stored before it did is refused on use.
    w.t.services.tokens.update(
      created.api_token_id,
      {},
      [live.id, sandbox.id].map((id) => ({
        bankAccountId: id,
        allowReadStatements: true,
        allowSendPayments: false,
      })),
    );
    const orderWith = (token: string, accountId: string) =>
      w.t.request("POST", "/api/v1/integration/statements", {
        token,
        body: {
          bank_account_id: accountId,
          date_from: "2026-10-01",
          date_to: "2026-10-31",
          external_id: crypto.randomUUID(),
        },
      });
    expect((await orderWith(testToken, live.id)).status).toBe(403);
    const ordered = await orderWith(testToken, sandbox.id);
    expect(ordered.status).toBe(201);
    const statement = await w.settle((await json<{ statement_id: string }>(ordered)).statement_id, testToken);
    expect(statement.status).toBe("ready");
    await w.settle(await order(w, live.id));

    for (const r of w.fake.requests.filter((r) => r.base !== "auth")) {
      if (r.base === "sandbox") expect(r.bearer).toBe("sandbox.jwt.token");
      else expect(r.bearer).toBe(`jwt-${live.number}`);
    }
    expect(w.fake.requests.some((r) => r.base === "sandbox")).toBe(true);
    expect(w.fake.requests.some((r) => r.base === "uapi")).toBe(true);
  });

  test("logins are checked when the account is added; they appear in no answer", async () => {
    const w = await setup();
    const add = (body: Record<string, unknown>) =>
      w.t.admin("POST", "/bank-accounts", {
        company_id: w.companyId,
        bank: "tochka",
        account_number: "40702810700000000001",
        bik: "044525104",
        ...body,
      });
    for (const body of [
      {},
      { credentials: { kind: "jwt" } },
      { credentials: { kind: "jwt", token: "sandbox.jwt.token" } },
      { credentials: { kind: "oauth", client_id: "app" } },
      { environment: "sandbox", credentials: { kind: "jwt", token: "real.jwt" } },
      { environment: "staging", credentials: { kind: "jwt", token: "real.jwt" } },
    ]) {
      const res = await add(body);
      expect(res.status).toBe(400);
      const error = (await json<{ error: { code: string } }>(res)).error;
      expect(error.code === "validation_error" || error.code === "invalid request body").toBe(true);
    }
    const sandboxBank = await w.t.admin("POST", "/bank-accounts", {
      company_id: w.companyId,
      bank: "sandbox",
      account_number: "40702810700000000001",
      bik: "044525104",
      environment: "sandbox",
    });
    expect(sandboxBank.status).toBe(400);
  });
});

describe("balances from Tochka", () => {
  test("the closing available balance with its time feeds the balance cache", async () => {
    const w = await setup();
    const account = await w.account({ openingBalance: 1_000_000_01 });
    const res = await w.t.admin("POST", `/bank-accounts/${account.id}/balance/refresh`);
    expect(res.status).toBe(200);
    const view = await json<{ balance: number; as_of: string }>(res);
    const expected = w.fake.closingBalanceOf(account.bankId);
    expect(Math.round(view.balance * 100)).toBe(expected);
    // It is what the agents' get_balance reads from now on.
    expect(w.t.services.statementRepo.balance(account.id)?.balance).toBe(expected);
  });

  test("a refused balance call is 500 bank_error with the bank's message, never a stack", async () => {
    const w = await setup();
    const account = await w.account();
    w.fake.fail({ pathIncludes: "/balances", status: 404 });
    const res = await w.t.admin("POST", `/bank-accounts/${account.id}/balance/refresh`);
    expect(res.status).toBe(500);
    const body = await json<{ error: { code: string; message: string } }>(res);
    expect(body.error.code).toBe("bank_error");
    expect(JSON.stringify(body)).not.toContain("at ");
  });
});
