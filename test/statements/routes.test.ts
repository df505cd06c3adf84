// lanes: sqlite postgres
import { describe, expect, test } from "bun:test";
import { json, makeTestApp, type TestApp } from "../helpers/app";
import { expectError } from "../helpers/envelope";

const PATH = "/api/v1/integration/statements";

function order(t: TestApp, token: string, body: unknown) {
  return t.request("POST", PATH, { token, body });
}

async function ready(t: TestApp) {
  await t.services.poller.idle();
  await t.services.poller.tick();
  await t.services.poller.idle();
}

describe("POST /api/v1/integration/statements", () => {
  test("orders a statement (201), repeats idempotently (200), trims external_id", async () => {
    const t = makeTestApp();
    const w = t.fixtures.world();
    const body = {
      bank_account_id: w.account.bank_account_id,
      external_id: "  order-1  ",
      date_from: "2026-11-01",
      date_to: "2026-11-19",
    };
    const first = await order(t, w.token, body);
    expect(first.status).toBe(201);
    const created = await json(first);
    expect(created).toMatchObject({
      status: "processing",
      bank_account_id: w.account.bank_account_id,
      external_id: "order-1",
      date_from: "2026-11-01",
      date_to: "2026-11-19",
      source: "integration",
      created_at: "2026-11-20T09:00:00.000Z",
    });
    expect(created).not.toHaveProperty("fetched_at");
    expect(created).not.toHaveProperty("operations_count");
    expect(JSON.stringify(created)).not.toMatch(/\d{20}/);

    const again = await order(t, w.token, { ...body, external_id: "order-1" });
    expect(again.status).toBe(200);
    expect((await json(again)).statement_id).toBe(created.statement_id);

    await ready(t);
    const polled = await json(await t.request("GET", `${PATH}/${created.statement_id}`, { token: w.token }));
    expect(polled.status).toBe("ready");
    expect(typeof polled.operations_count).toBe("number");
    expect(polled.fetched_at).toBe("2026-11-20T09:00:00.000Z");
    // Only one bank request for the two calls.
    const requests = t.services.sandboxLog
      .list(w.account.bank_account_id)
      .filter((r) => r.kind === "statement_request");
    expect(requests).toHaveLength(1);
  });

  test("same external_id with another period or account is 409 conflict", async () => {
    const t = makeTestApp();
    const w = t.fixtures.world();
    const base = {
      bank_account_id: w.account.bank_account_id,
      external_id: "x",
      date_from: "2026-11-01",
      date_to: "2026-11-10",
    };
    expect((await order(t, w.token, base)).status).toBe(201);
    await expectError(await order(t, w.token, { ...base, date_to: "2026-11-11" }), 409, "conflict");
    await expectError(await order(t, w.token, { ...base, date_from: "2026-11-02" }), 409, "conflict");
    const second = t.fixtures.account(w.company.company_id);
    t.services.admin.tokens.patch(w.tokenId, {
      accounts: [
        { bank_account_id: w.account.bank_account_id, allow_read_statements: true },
        { bank_account_id: second.bank_account_id, allow_read_statements: true },
      ],
    });
    await expectError(
      await order(t, w.token, { ...base, bank_account_id: second.bank_account_id }),
      409,
      "conflict",
    );
  });

  test("external_id is unique per token, not globally", async () => {
    const t = makeTestApp();
    const w = t.fixtures.world();
    const other = t.fixtures.token(w.company.company_id, {
      accounts: [{ bank_account_id: w.account.bank_account_id, allow_read_statements: true }],
    });
    const body = {
      bank_account_id: w.account.bank_account_id,
      external_id: "shared",
      date_from: "2026-11-01",
      date_to: "2026-11-02",
    };
    const a = await json(await order(t, w.token, body));
    const res = await order(t, other.token, body);
    expect(res.status).toBe(201);
    expect((await json(res)).statement_id).not.toBe(a.statement_id);
  });

  test("validation errors name the field", async () => {
    const t = makeTestApp();
    const w = t.fixtures.world();
    const ok = {
      bank_account_id: w.account.bank_account_id,
      external_id: "v",
      date_from: "2026-11-01",
      date_to: "2026-11-10",
    };
    const cases: [Record<string, unknown>, string][] = [
      [{ ...ok, date_from: "2026-13-01" }, "date_from"],
      [{ ...ok, date_from: "01.11.2026" }, "date_from"],
      [{ ...ok, date_to: "2026-02-30" }, "date_to"],
      [{ ...ok, date_from: "2026-11-11", date_to: "2026-11-10" }, "date_from"],
      [{ ...ok, date_to: "2026-11-21" }, "date_to"], // tomorrow in Europe/Moscow
      [{ ...ok, date_from: "2026-10-01", date_to: "2026-11-01" }, "date_to"], // 32 days
      [{ ...ok, external_id: "   " }, "external_id"],
      [{ ...ok, external_id: "e".repeat(257) }, "external_id"],
      [{ ...ok, external_id: undefined }, "external_id"],
      [{ ...ok, date_to: 20261110 }, "date_to"],
    ];
    for (const [body, field] of cases) {
      const details = await expectError(await order(t, w.token, body), 400, "validation_error");
      expect(details.field).toBe(field);
    }
    // 31 days inclusive and 256 characters are fine.
    expect((await order(t, w.token, { ...ok, date_from: "2026-10-01", date_to: "2026-10-31" })).status).toBe(
      201,
    );
    expect((await order(t, w.token, { ...ok, external_id: "e".repeat(256) })).status).toBe(201);
  });

  test("invalid JSON and malformed UUIDs are 'invalid request body', before field validation", async () => {
    const t = makeTestApp();
    const w = t.fixtures.world();
    for (const body of ["{not json", '{"bank_account_id": "1"', "[1,2", "null"]) {
      const res = await order(t, w.token, body);
      const err = (await res.clone().json()) as { error: { message: string } };
      expect(err.error.message).toBe("invalid request body");
      await expectError(res, 400, "invalid request body");
    }
    // Bad UUID together with other bad fields: the UUID wins.
    await expectError(
      await order(t, w.token, {
        bank_account_id: "not-a-uuid",
        external_id: "",
        date_from: "x",
        date_to: "y",
      }),
      400,
      "invalid request body",
    );
    await expectError(
      await t.request("GET", `${PATH}/not-a-uuid`, { token: w.token }),
      400,
      "invalid request body",
    );
    await expectError(
      await t.request("GET", `${PATH}/1234/export?format=json`, { token: w.token }),
      400,
      "invalid request body",
    );
  });

  test("an unknown account is 404; a bank without statements is 501 and leaves nothing behind", async () => {
    const t = makeTestApp();
    const w = t.fixtures.world({ bank: "sandbox_no_statements" });
    const body = {
      bank_account_id: w.account.bank_account_id,
      external_id: "n",
      date_from: "2026-11-01",
      date_to: "2026-11-02",
    };
    await expectError(await order(t, w.token, body), 501, "bank_not_supported");
    await expectError(await order(t, w.token, body), 501, "bank_not_supported");
    const count = t.db.query("SELECT count(*) AS n FROM statements").get() as {
      n: number;
    };
    expect(count.n).toBe(0);
    expect(t.services.sandboxLog.list(w.account.bank_account_id)).toHaveLength(0);
    await expectError(
      await order(t, w.token, { ...body, bank_account_id: "7f1b7c4e-0000-4000-8000-000000000000" }),
      404,
      "not_found",
    );
  });

  test("a bank error ends the statement as failed with error, and export says not_ready", async () => {
    const t = makeTestApp();
    const w = t.fixtures.world({ bank: "sandbox_failing" });
    const created = await json(
      await order(t, w.token, {
        bank_account_id: w.account.bank_account_id,
        external_id: "f",
        date_from: "2026-11-01",
        date_to: "2026-11-02",
      }),
    );
    await ready(t);
    const polled = await json(await t.request("GET", `${PATH}/${created.statement_id}`, { token: w.token }));
    expect(polled.status).toBe("failed");
    expect(polled.error).toMatchObject({ code: "bank_error" });
    expect(polled).not.toHaveProperty("operations_count");
    const res = await t.request("GET", `${PATH}/${created.statement_id}/export?format=json`, {
      token: w.token,
    });
    const body = (await res.clone().json()) as { error: { message: string } };
    const details = await expectError(res, 409, "not_ready");
    // The spec's code, said plainly: it failed and will never be ready (clients stop on details.status).
    expect(details).toMatchObject({ status: "failed", error: { code: "bank_error" } });
    expect(body.error.message).toContain("не будет готова");
    expect(body.error.message).not.toContain("ещё не готова");
  });
});

describe("GET statements", () => {
  test("another token's statement is 404; processing export is 409 not_ready", async () => {
    const t = makeTestApp();
    const w = t.fixtures.world();
    const sibling = t.fixtures.token(w.company.company_id, {
      accounts: [{ bank_account_id: w.account.bank_account_id, allow_read_statements: true }],
    });
    const created = await json(
      await order(t, w.token, {
        bank_account_id: w.account.bank_account_id,
        external_id: "o",
        date_from: "2026-11-01",
        date_to: "2026-11-02",
      }),
    );
    await expectError(
      await t.request("GET", `${PATH}/${created.statement_id}`, { token: sibling.token }),
      404,
      "not_found",
    );
    await expectError(
      await t.request("GET", `${PATH}/00000000-0000-4000-8000-000000000000`, { token: w.token }),
      404,
      "not_found",
    );
    // Stop the background dispatch from completing it: the poller has not ticked yet.
    await t.services.poller.idle();
    await expectError(
      await t.request("GET", `${PATH}/${created.statement_id}/export?format=csv`, { token: w.token }),
      409,
      "not_ready",
    );
  });

  test("list shows the token's statements newest first with cursor paging and filters", async () => {
    const t = makeTestApp();
    const w = t.fixtures.world();
    const ids: string[] = [];
    for (let i = 1; i <= 5; i++) {
      t.clock.advance(1000);
      const res = await order(t, w.token, {
        bank_account_id: w.account.bank_account_id,
        external_id: `l${i}`,
        date_from: `2026-11-0${i}`,
        date_to: `2026-11-0${i}`,
      });
      ids.push((await json(res)).statement_id as string);
    }
    t.services.statements.orderFromUi(w.account.bank_account_id, "2026-11-01", "2026-11-01");
    const page1 = await json<{ statements: { statement_id: string }[]; next_cursor: string }>(
      await t.request("GET", `${PATH}?limit=2`, { token: w.token }),
    );
    expect(page1.statements.map((s) => s.statement_id)).toEqual([ids[4]!, ids[3]!]);
    const page2 = await json<{ statements: { statement_id: string }[]; next_cursor: string | null }>(
      await t.request("GET", `${PATH}?limit=2&cursor=${page1.next_cursor}`, { token: w.token }),
    );
    expect(page2.statements.map((s) => s.statement_id)).toEqual([ids[2]!, ids[1]!]);
    const page3 = await json<{ statements: unknown[]; next_cursor: string | null }>(
      await t.request("GET", `${PATH}?limit=2&cursor=${page2.next_cursor}`, { token: w.token }),
    );
    expect(page3.statements).toHaveLength(1);
    expect(page3.next_cursor).toBeNull();
    await expectError(await t.request("GET", `${PATH}?limit=0`, { token: w.token }), 400, "validation_error");
    await expectError(
      await t.request("GET", `${PATH}?cursor=garbage`, { token: w.token }),
      400,
      "validation_error",
    );
    await expectError(
      await t.request("GET", `${PATH}?status=done`, { token: w.token }),
      400,
      "validation_error",
    );
    await expectError(
      await t.request("GET", `${PATH}?bank_account_id=nope`, { token: w.token }),
      400,
      "validation_error",
    );
    await ready(t);
    const readyList = await json<{ statements: { status: string }[] }>(
      await t.request("GET", `${PATH}?status=ready&bank_account_id=${w.account.bank_account_id}`, {
        token: w.token,
      }),
    );
    expect(readyList.statements).toHaveLength(5);
  });
});

// The authentication matrix of these routes: test/http/auth-matrix.test.ts.
describe("token modes", () => {
  const statementBody = (accountId: string, externalId = "m") => ({
    bank_account_id: accountId,
    external_id: externalId,
    date_from: "2026-11-01",
    date_to: "2026-11-02",
  });
  test("a svc_test_ token reaches sandbox banks only", async () => {
    const t = makeTestApp();
    const company = t.fixtures.company();
    const account = t.fixtures.account(company.company_id, "sandbox");
    const testToken = t.fixtures.token(company.company_id, {
      mode: "test",
      accounts: [{ bank_account_id: account.bank_account_id, allow_read_statements: true }],
    });
    // As if the account were on a real bank (no such adapter is registered here): an allow the
    // admin side refuses now (decisions §19), as one stored before it did.
    t.db.query("UPDATE bank_accounts SET bank = 'realbank' WHERE id = ?").run(account.bank_account_id);
    t.services.externalChanges.invalidate(); // changed behind the repositories
    const details = await expectError(
      await order(t, testToken.token, statementBody(account.bank_account_id)),
      403,
      "forbidden_account",
    );
    expect(details).toEqual({ reason: "test_token" });
  });
});
