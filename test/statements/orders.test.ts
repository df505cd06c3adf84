// lanes: sqlite postgres
import { describe, expect, test } from "bun:test";
import { json, makeTestApp, type TestApp } from "../helpers/app";
import { expectError } from "../helpers/envelope";

const PATH = "/api/v1/integration/statements";

async function settle(t: TestApp) {
  await t.services.poller.idle();
  await t.services.poller.tick();
  await t.services.poller.idle();
}

describe("ordering", () => {
  test("50 concurrent identical orders make one statement, one 201 and one bank request", async () => {
    const t = makeTestApp();
    const w = t.fixtures.world();
    t.services.admin.tokens.patch(w.tokenId, { rate_limit_per_minute: 1000 });
    const body = {
      bank_account_id: w.account.bank_account_id,
      external_id: "burst",
      date_from: "2026-11-01",
      date_to: "2026-11-15",
    };
    const responses = await Promise.all(
      Array.from({ length: 50 }, () => t.request("POST", PATH, { token: w.token, body })),
    );
    const statuses = responses.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    expect(statuses.filter((s) => s === 200)).toHaveLength(49);
    const ids = new Set(await Promise.all(responses.map(async (r) => (await json(r)).statement_id)));
    expect(ids.size).toBe(1);
    await settle(t);
    const count = t.db.query("SELECT count(*) AS n FROM statements").get() as {
      n: number;
    };
    expect(count.n).toBe(1);
    const bankRequests = t.services.sandboxLog
      .list(w.account.bank_account_id)
      .filter((r) => r.kind === "statement_request");
    expect(bankRequests).toHaveLength(1);
  });

  test("one failing statement does not stop the others", async () => {
    const t = makeTestApp();
    const company = t.fixtures.company();
    const good = t.fixtures.account(company.company_id, "sandbox");
    const bad = t.fixtures.account(company.company_id, "sandbox_failing");
    const token = t.fixtures.token(company.company_id, {
      accounts: [
        { bank_account_id: good.bank_account_id, allow_read_statements: true },
        { bank_account_id: bad.bank_account_id, allow_read_statements: true },
      ],
    }).token;
    const ids: string[] = [];
    for (const [i, account] of [bad, good, bad, good].entries()) {
      const res = await t.request("POST", PATH, {
        token,
        body: {
          bank_account_id: account.bank_account_id,
          external_id: `mix-${i}`,
          date_from: "2026-11-01",
          date_to: "2026-11-02",
        },
      });
      ids.push((await json(res)).statement_id as string);
    }
    await settle(t);
    const statuses = ids.map((id) => t.services.statementRepo.findById(id)!.status);
    expect(statuses).toEqual(["failed", "ready", "failed", "ready"]);
  });

  test("an order stored but never sent to the bank is sent by the poller (outbox)", async () => {
    const t = makeTestApp();
    const w = t.fixtures.world();
    // Simulate a crash between the acknowledgement and the bank request: no dispatch.
    t.services.statements.onOrder(() => {});
    const created = await json(
      await t.request("POST", PATH, {
        token: w.token,
        body: {
          bank_account_id: w.account.bank_account_id,
          external_id: "outbox",
          date_from: "2026-11-01",
          date_to: "2026-11-02",
        },
      }),
    );
    expect(t.services.statementRepo.findById(created.statement_id as string)!.bank_state).toBe("pending");
    expect(t.services.sandboxLog.list(w.account.bank_account_id)).toHaveLength(0);
    await settle(t);
    await settle(t);
    expect(t.services.statementRepo.findById(created.statement_id as string)!.status).toBe("ready");
    expect(
      t.services.sandboxLog.list(w.account.bank_account_id).filter((r) => r.kind === "statement_request"),
    ).toHaveLength(1);
  });
});

describe("balances", () => {
  test("admin refresh asks the bank; stale after SVC_BALANCE_STALE_SECONDS; no cached value is null and stale", async () => {
    const t = makeTestApp({ SVC_BALANCE_STALE_SECONDS: "60" });
    const w = t.fixtures.world();
    const account = t.services.accounts.findById(w.account.bank_account_id)!;
    expect(t.services.statements.balance(account)).toEqual({
      bank_account_id: account.id,
      balance: null,
      currency: "RUB",
      as_of: null,
      stale: true,
    });
    const res = await t.admin("POST", `/bank-accounts/${account.id}/balance/refresh`);
    expect(res.status).toBe(200);
    const view = await json(res);
    expect(view).toMatchObject({
      bank_account_id: account.id,
      currency: "RUB",
      stale: false,
      as_of: "2026-11-20T09:00:00.000Z",
    });
    expect(typeof view.balance).toBe("number");
    expect(t.services.sandboxLog.list(account.id).map((r) => r.kind)).toEqual(["balance"]);
    t.clock.advance(61_000);
    expect(t.services.statements.balance(account).stale).toBe(true);
    // Reading never calls the bank.
    expect(t.services.sandboxLog.list(account.id)).toHaveLength(1);
    await expectError(
      await t.admin("POST", "/bank-accounts/00000000-0000-4000-8000-000000000000/balance/refresh"),
      404,
      "not_found",
    );
  });

  test("a ready statement ending today updates the cached balance to its closing balance", async () => {
    const t = makeTestApp();
    const w = t.fixtures.world();
    const res = await t.request("POST", PATH, {
      token: w.token,
      body: {
        bank_account_id: w.account.bank_account_id,
        external_id: "today",
        date_from: "2026-11-10",
        date_to: "2026-11-20",
      },
    });
    const id = (await json(res)).statement_id as string;
    await settle(t);
    const row = t.services.statementRepo.findById(id)!;
    const account = t.services.accounts.findById(w.account.bank_account_id)!;
    expect(t.services.statements.balance(account).balance).toBe(row.closing_balance! / 100);
    // And the bank's own balance for today agrees with the statement.
    const refreshed = await t.services.statements.refreshBalance(account);
    expect(refreshed.balance).toBe(row.closing_balance! / 100);
  });
});

describe("admin statements (via UI)", () => {
  test("ordering through the admin API gives source ui; listing shows every source", async () => {
    const t = makeTestApp();
    const w = t.fixtures.world();
    const res = await t.admin("POST", "/statements", {
      bank_account_id: w.account.bank_account_id,
      date_from: "2026-11-01",
      date_to: "2026-11-03",
    });
    expect(res.status).toBe(201);
    const ui = await json(res);
    expect(ui).toMatchObject({ source: "ui", external_id: null, status: "processing" });
    await t.request("POST", PATH, {
      token: w.token,
      body: {
        bank_account_id: w.account.bank_account_id,
        external_id: "int",
        date_from: "2026-11-01",
        date_to: "2026-11-03",
      },
    });
    await settle(t);
    const list = await json<{ statements: { source: string; status: string }[] }>(
      await t.admin("GET", `/statements?bank_account_id=${w.account.bank_account_id}`),
    );
    expect(list.statements.map((s) => s.source).sort()).toEqual(["integration", "ui"]);
    expect(list.statements.every((s) => s.status === "ready")).toBe(true);
    await expectError(
      await t.admin("POST", "/statements", {
        bank_account_id: w.account.bank_account_id,
        date_from: "2026-11-05",
        date_to: "2026-11-01",
      }),
      400,
      "validation_error",
    );
    const log = await json<{ requests: { kind: string }[] }>(
      await t.admin("GET", `/sandbox/requests?bank_account_id=${w.account.bank_account_id}`),
    );
    expect(log.requests.filter((r) => r.kind === "statement_request")).toHaveLength(2);
    const audit = await json<{ entries: { action: string }[] }>(
      await t.admin("GET", "/audit-log?action=admin.statement.order"),
    );
    expect(audit.entries).toHaveLength(1);
  });
});
