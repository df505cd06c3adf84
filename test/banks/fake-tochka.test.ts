// lanes: sqlite
import { afterEach, describe, expect, test } from "bun:test";
import {
  type FakeTochka,
  type FakeTochkaOptions,
  type FakeTransaction,
  generateTransactions,
  SANDBOX_TOKEN,
  startFakeTochka,
} from "../support/fake-tochka";

const ACCOUNT = "40702810440000012345/044525104";
const OTHER = "40702810840000054321/044525104";
const JWT = "eyJhbGciOiJSUzI1NiJ9.test.jwt";
const STATEMENTS = "/open-banking/v1.0/statements";

interface Body {
  Data: Record<string, unknown>;
  Links: { self: string; next?: string };
  Meta: { totalPages: number };
}

interface StatementJson {
  statementId: string;
  status: string;
  startDateBalance?: number;
  endDateBalance?: number;
  Transaction?: { status: string; creditDebitIndicator: string; Amount: { amount: number } }[];
}

let fake: FakeTochka | null = null;

afterEach(async () => {
  await fake?.stop();
  fake = null;
});

function start(options: FakeTochkaOptions = {}): FakeTochka {
  fake = startFakeTochka(options);
  fake.addJwt(JWT);
  return fake;
}

function tx(
  date: string,
  direction: "credit" | "debit",
  amount: number,
  status: "booked" | "pending" = "booked",
) {
  const [sample] = generateTransactions(1, { accountId: ACCOUNT, seed: amount });
  return { ...(sample as FakeTransaction), transactionId: undefined, date, direction, amount, status };
}

async function api(
  base: string,
  path: string,
  init: { method?: string; body?: unknown; token?: string | null } = {},
): Promise<{ status: number; json: Body; text: string; headers: Headers }> {
  const headers: Record<string, string> = {};
  const token = init.token === undefined ? JWT : init.token;
  if (token !== null) headers["authorization"] = `Bearer ${token}`;
  if (init.body !== undefined) headers["content-type"] = "application/json";
  const res = await fetch(`${base}${path}`, {
    method: init.method ?? (init.body === undefined ? "GET" : "POST"),
    headers,
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
  });
  const text = await res.text();
  return {
    status: res.status,
    json: (text === "" ? {} : JSON.parse(text)) as Body,
    text,
    headers: res.headers,
  };
}

async function initStatement(
  f: FakeTochka,
  accountId: string,
  from: string,
  to: string,
  base = f.apiUrl,
  token?: string,
) {
  const body = { Data: { Statement: { accountId, startDateTime: from, endDateTime: to } } };
  const res = await api(base, STATEMENTS, { body, ...(token === undefined ? {} : { token }) });
  expect(res.status).toBe(200);
  return (res.json.Data["Statement"] as StatementJson).statementId;
}

function statementOf(res: { json: Body }): StatementJson {
  return (res.json.Data["Statement"] as StatementJson[])[0] as StatementJson;
}

function kopecks(rubles: number): number {
  return Math.round(rubles * 100);
}

async function form(url: string, fields: Record<string, string>) {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(fields),
  });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

describe("accounts and balances", () => {
  test("lists the accounts and computes balances from booked operations only", async () => {
    const f = start();
    f.addAccount({
      accountId: ACCOUNT,
      openingBalance: 100_000,
      transactions: [
        tx("2026-01-10", "credit", 10),
        tx("2026-01-11", "credit", 20),
        tx("2026-01-12", "debit", 5_000),
        tx("2026-01-13", "credit", 999_999, "pending"),
      ],
    });
    const accounts = await api(f.apiUrl, "/open-banking/v1.0/accounts");
    expect(accounts.status).toBe(200);
    expect(accounts.json.Data["Account"]).toMatchObject([
      { accountId: ACCOUNT, status: "Enabled", accountDetails: [{ identification: ACCOUNT.slice(0, 20) }] },
    ]);
    expect(accounts.json.Links.self).toBe(`${f.apiUrl}/open-banking/v1.0/accounts`);

    const balances = await api(f.apiUrl, `/open-banking/v1.0/accounts/${ACCOUNT}/balances`);
    expect(balances.json.Data["Balance"]).toMatchObject([
      { type: "OpeningAvailable", creditDebitIndicator: "Credit", Amount: { amount: 1000, currency: "RUB" } },
      {
        type: "ClosingAvailable",
        creditDebitIndicator: "Credit",
        Amount: { amount: 950.3, currency: "RUB" },
      },
    ]);
    expect(f.violations).toEqual([]);
  });

  test("an unknown account is 404 with the document's error shape", async () => {
    const f = start();
    const res = await api(f.apiUrl, `/open-banking/v1.0/accounts/${OTHER}/balances`);
    expect(res.status).toBe(404);
    expect(res.json).toMatchObject({ code: "404", Errors: [{ errorCode: "NotFound" }] });
    expect(f.violations).toEqual([]);
  });
});

describe("statements", () => {
  test("go Created → Processing → Ready, with pending operations listed but not counted", async () => {
    const f = start();
    f.addAccount({
      accountId: ACCOUNT,
      openingBalance: 50_000,
      transactions: [
        tx("2025-12-31", "credit", 1_000),
        tx("2026-01-05", "credit", 10),
        tx("2026-01-06", "credit", 20),
        tx("2026-01-07", "debit", 123_456_789),
        tx("2026-01-08", "credit", 700, "pending"),
        tx("2026-02-01", "credit", 5),
      ],
    });
    const id = await initStatement(f, ACCOUNT, "2026-01-01", "2026-01-31");
    const path = `/open-banking/v1.0/accounts/${ACCOUNT}/statements/${id}`;
    expect(statementOf(await api(f.apiUrl, path)).status).toBe("Created");
    expect(statementOf(await api(f.apiUrl, path)).status).toBe("Processing");
    const ready = await api(f.apiUrl, path);
    const statement = statementOf(ready);
    expect(statement.status).toBe("Ready");
    expect(statement.startDateBalance).toBe(510);
    expect(statement.endDateBalance).toBe(-1234057.59);
    expect(statement.Transaction?.map((t) => [t.status, t.Amount.amount])).toEqual([
      ["Booked", 0.1],
      ["Booked", 0.2],
      ["Booked", 1234567.89],
      ["Pending", 7],
    ]);
    // The amounts travel as short decimals, not as float noise.
    expect(ready.text).toContain('"amount":0.1,');
    expect(ready.text).toContain('"amount":1234567.89,');
    expect(ready.json.Meta.totalPages).toBe(1);
    expect(ready.json.Links.next).toBeUndefined();
    expect(f.violations).toEqual([]);
  });

  test("statementError ends in Error; breakBalances puts endDateBalance 0.01 off", async () => {
    const f = start({ pollsBeforeReady: 0 });
    f.addAccount({ accountId: ACCOUNT, openingBalance: 0, transactions: [tx("2026-01-05", "credit", 100)] });
    f.addAccount({ accountId: OTHER, openingBalance: 0, transactions: [tx("2026-01-05", "credit", 100)] });
    f.statementError(ACCOUNT);
    f.breakBalances(OTHER);
    const failing = await initStatement(f, ACCOUNT, "2026-01-01", "2026-01-31");
    const broken = await initStatement(f, OTHER, "2026-01-01", "2026-01-31");
    const error = statementOf(
      await api(f.apiUrl, `/open-banking/v1.0/accounts/${ACCOUNT}/statements/${failing}`),
    );
    expect(error.status).toBe("Error");
    expect(error.Transaction).toBeUndefined();
    const off = statementOf(await api(f.apiUrl, `/open-banking/v1.0/accounts/${OTHER}/statements/${broken}`));
    expect([off.startDateBalance, off.endDateBalance]).toEqual([0, 1.01]);
    expect(f.violations).toEqual([]);
  });

  test("20,000 operations come in pages linked by absolute Links.next", async () => {
    const f = start({ pageSize: 6_000, pollsBeforeReady: 0 });
    const transactions = generateTransactions(20_000, {
      accountId: ACCOUNT,
      from: "2026-01-01",
      to: "2026-03-31",
    });
    expect(
      generateTransactions(20_000, { accountId: ACCOUNT, from: "2026-01-01", to: "2026-03-31" }),
    ).toEqual(transactions);
    f.addAccount({ accountId: ACCOUNT, openingBalance: 1_000_000_000, transactions });
    const id = await initStatement(f, ACCOUNT, "2026-01-01", "2026-03-31");

    let url: string | undefined = `${f.apiUrl}/open-banking/v1.0/accounts/${ACCOUNT}/statements/${id}`;
    const pages: { statement: StatementJson; totalPages: number }[] = [];
    while (url !== undefined) {
      const res = await api(url, "");
      expect(res.status).toBe(200);
      expect(res.json.Links.self).toBe(url);
      pages.push({ statement: statementOf(res), totalPages: res.json.Meta.totalPages });
      url = res.json.Links.next;
      if (url !== undefined)
        expect(url.startsWith(`${f.apiUrl}/open-banking/v1.0/accounts/${ACCOUNT}/`)).toBe(true);
    }
    expect(pages.map((p) => [p.totalPages, p.statement.Transaction?.length])).toEqual([
      [4, 6000],
      [4, 6000],
      [4, 6000],
      [4, 2000],
    ]);

    const all = pages.flatMap((p) => p.statement.Transaction ?? []);
    const pending = all.filter((t) => t.status === "Pending").length;
    expect(pending).toBeGreaterThan(0);
    expect(all.map((t) => t.Amount.amount)).toContain(0.1);
    expect(all.map((t) => t.Amount.amount)).toContain(0.2);
    expect(all.map((t) => t.Amount.amount)).toContain(1234567.89);
    let net = 0;
    for (const t of all) {
      if (t.status !== "Booked") continue;
      net += t.creditDebitIndicator === "Credit" ? kopecks(t.Amount.amount) : -kopecks(t.Amount.amount);
    }
    const first = pages[0]?.statement as StatementJson;
    expect(kopecks(first.startDateBalance as number) + net).toBe(kopecks(first.endDateBalance as number));
    expect(f.violations).toEqual([]);
  });
});

describe("bearers", () => {
  test("the sandbox takes only sandbox.jwt.token, production refuses it", async () => {
    const f = start({ pollsBeforeReady: 0 });
    f.addAccount({ accountId: ACCOUNT, openingBalance: 0, environment: "sandbox" });
    f.addAccount({ accountId: OTHER, openingBalance: 0, environment: "production" });

    const sandbox = await api(f.sandboxUrl, "/open-banking/v1.0/accounts", { token: SANDBOX_TOKEN });
    expect((sandbox.json.Data["Account"] as { accountId: string }[]).map((a) => a.accountId)).toEqual([
      ACCOUNT,
    ]);
    expect((await api(f.sandboxUrl, "/open-banking/v1.0/accounts", { token: JWT })).status).toBe(403);
    expect((await api(f.sandboxUrl, "/open-banking/v1.0/accounts", { token: null })).status).toBe(403);

    const production = await api(f.apiUrl, "/open-banking/v1.0/accounts");
    expect((production.json.Data["Account"] as { accountId: string }[]).map((a) => a.accountId)).toEqual([
      OTHER,
    ]);
    const refused = await api(f.apiUrl, "/open-banking/v1.0/accounts", { token: SANDBOX_TOKEN });
    expect(refused.status).toBe(401);
    expect(refused.json).toMatchObject({ code: "401", Errors: [{ errorCode: "Unauthorized" }] });
    expect((await api(f.apiUrl, "/open-banking/v1.0/accounts", { token: "nobody" })).status).toBe(401);

    // A statement made in the sandbox is not visible from production.
    const id = await initStatement(f, ACCOUNT, "2026-01-01", "2026-01-31", f.sandboxUrl, SANDBOX_TOKEN);
    expect((await api(f.apiUrl, `/open-banking/v1.0/accounts/${ACCOUNT}/statements/${id}`)).status).toBe(404);
    expect(f.requests.map((r) => [r.base, r.bearer, r.status])).toContainEqual([
      "sandbox",
      SANDBOX_TOKEN,
      200,
    ]);
    expect(f.violations).toEqual([]);
  });

  test("a JWT past its end is 401, a deleted one 403, one without the permission 403", async () => {
    const f = start();
    f.addAccount({ accountId: ACCOUNT, openingBalance: 0 });
    f.addJwt("old", { expiresAt: Date.now() - 1_000 });
    f.addJwt("narrow", { permissions: ["ReadAccountsBasic", "ReadAccountsDetail"] });
    expect((await api(f.apiUrl, "/open-banking/v1.0/accounts", { token: "old" })).status).toBe(401);
    expect((await api(f.apiUrl, "/open-banking/v1.0/accounts", { token: "narrow" })).status).toBe(200);
    expect(
      (await api(f.apiUrl, `/open-banking/v1.0/accounts/${ACCOUNT}/balances`, { token: "narrow" })).status,
    ).toBe(403);
    f.revokeJwt(JWT);
    expect((await api(f.apiUrl, "/open-banking/v1.0/accounts")).status).toBe(403);
    expect(f.violations).toEqual([]);
  });
});

describe("OAuth 2.0 hybrid flow", () => {
  const REDIRECT = "http://localhost:8000/callback";

  async function consentAndCode(f: FakeTochka) {
    const client = await form(`${f.authUrl}/connect/token`, {
      client_id: "svc-app",
      client_secret: "s3cret",
      grant_type: "client_credentials",
      scope: "accounts balances customers statements sbp payments",
    });
    expect(client.status).toBe(200);
    expect(client.json["token_type"]).toBe("bearer");
    expect(typeof client.json["expires_in"]).toBe("number");
    const consent = await api(f.apiUrl, "/consent/v1.0/consents", {
      token: client.json["access_token"] as string,
      body: {
        Data: { permissions: ["ReadAccountsBasic", "ReadAccountsDetail", "ReadBalances", "ReadStatements"] },
      },
    });
    expect(consent.status).toBe(200);
    const [entry] = consent.json.Data["Consent"] as { consentId: string; status: string }[];
    expect(entry?.status).toBe("AwaitingAuthorisation");
    const authorize = new URL(`${f.authUrl}/connect/authorize`);
    for (const [k, v] of Object.entries({
      client_id: "svc-app",
      response_type: "code",
      state: "st-1",
      redirect_uri: REDIRECT,
      scope: "accounts balances statements",
      consent_id: entry?.consentId ?? "",
    })) {
      authorize.searchParams.set(k, v);
    }
    const redirect = await fetch(authorize, { redirect: "manual" });
    expect(redirect.status).toBe(302);
    return new URL(redirect.headers.get("location") ?? "");
  }

  function exchange(f: FakeTochka, code: string) {
    return form(`${f.authUrl}/connect/token`, {
      client_id: "svc-app",
      client_secret: "s3cret",
      grant_type: "authorization_code",
      scope: "accounts balances statements",
      code,
      redirect_uri: REDIRECT,
    });
  }

  test("consent, approval, code exchange, refresh with rotation", async () => {
    const f = start();
    f.addOAuthClient("svc-app", "s3cret");
    f.addAccount({ accountId: ACCOUNT, openingBalance: 0 });
    const back = await consentAndCode(f);
    expect(back.searchParams.get("state")).toBe("st-1");
    const code = back.searchParams.get("code") ?? "";

    const pair = await exchange(f, code);
    expect(pair.status).toBe(200);
    expect(pair.json).toMatchObject({ token_type: "bearer", expires_in: 86400, state: "st-1" });
    expect(typeof pair.json["user_id"]).toBe("string");
    expect((await exchange(f, code)).json).toEqual({ error: "invalid_grant" });

    const access = pair.json["access_token"] as string;
    expect(
      (await api(f.apiUrl, `/open-banking/v1.0/accounts/${ACCOUNT}/balances`, { token: access })).status,
    ).toBe(200);
    // The consent did not include payments.
    const payment = await api(f.apiUrl, "/payment/v1.0/status/openapi-x", { token: access });
    expect(payment.status).toBe(403);

    const refresh = (token: string) =>
      form(`${f.authUrl}/connect/token`, {
        client_id: "svc-app",
        client_secret: "s3cret",
        grant_type: "refresh_token",
        refresh_token: token,
      });
    const second = await refresh(pair.json["refresh_token"] as string);
    expect(second.status).toBe(200);
    expect(second.json["state"]).toBeNull();
    expect(second.json["refresh_token"]).not.toBe(pair.json["refresh_token"]);
    expect(second.json["user_id"]).toBe(pair.json["user_id"] as string);
    const reused = await refresh(pair.json["refresh_token"] as string);
    expect(reused).toEqual({ status: 400, json: { error: "invalid_grant" } });
    expect((await refresh(second.json["refresh_token"] as string)).status).toBe(200);
    expect([f.refreshCount, f.tokenRequests]).toEqual([3, 6]);

    f.expireAccessTokens();
    expect((await api(f.apiUrl, "/open-banking/v1.0/accounts", { token: access })).status).toBe(401);
    expect(f.violations).toEqual([]);
  });

  test("access tokens expire after accessTtlSeconds", async () => {
    let now = Date.parse("2026-01-10T10:00:00Z");
    const f = start({ accessTtlSeconds: 1, now: () => now });
    f.addOAuthClient("svc-app", "s3cret");
    const code = (await consentAndCode(f)).searchParams.get("code") ?? "";
    const pair = await exchange(f, code);
    expect(pair.json["expires_in"]).toBe(1);
    const token = pair.json["access_token"] as string;
    expect((await api(f.apiUrl, "/open-banking/v1.0/accounts", { token })).status).toBe(200);
    now += 1_000;
    expect((await api(f.apiUrl, "/open-banking/v1.0/accounts", { token })).status).toBe(401);
    expect(f.violations).toEqual([]);
  });

  test("a customer who refuses is sent back with error=access_denied", async () => {
    const f = start();
    f.addOAuthClient("svc-app", "s3cret");
    f.setAuthorizationOutcome("deny");
    const back = await consentAndCode(f);
    expect(back.searchParams.get("error")).toBe("access_denied");
    expect(back.searchParams.get("code")).toBeNull();
    expect(back.searchParams.get("state")).toBe("st-1");
  });

  test("token requests not shaped as on the OAuth page are violations", async () => {
    const f = start();
    f.addOAuthClient("svc-app", "s3cret");
    const json = await fetch(`${f.authUrl}/connect/token`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ grant_type: "client_credentials" }),
    });
    expect(json.status).toBe(400);
    const noScope = await form(`${f.authUrl}/connect/token`, {
      client_id: "svc-app",
      client_secret: "s3cret",
      grant_type: "client_credentials",
    });
    expect(noScope.json).toEqual({ error: "invalid_request" });
    expect(f.violations).toHaveLength(2);
    expect(f.violations[1]).toContain("client_credentials without scope");
  });
});

describe("payments", () => {
  test("for-sign gives a signing link; the status follows setPaymentStatus", async () => {
    const f = start();
    f.addAccount({ accountId: ACCOUNT, openingBalance: 0 });
    const body = {
      Data: {
        accountCode: ACCOUNT.slice(0, 20),
        bankCode: ACCOUNT.slice(21),
        counterpartyBankBic: "044525225",
        counterpartyAccountNumber: "40702810938000012345",
        counterpartyINN: "7707083893",
        counterpartyName: "ООО «Ромашка»",
        paymentAmount: 1234567.89,
        paymentDate: "2026-11-20",
        paymentPurpose: "Оплата по счету № 5. НДС не облагается",
      },
    };
    const created = await api(f.apiUrl, "/payment/v1.0/for-sign", { body });
    expect(created.status).toBe(200);
    const { requestId, redirectURL } = created.json.Data as { requestId: string; redirectURL: string };
    expect(redirectURL).toBe(`${f.url}/sign/${requestId}`);
    expect((await fetch(redirectURL)).status).toBe(200);
    expect(f.payments).toMatchObject([{ requestId, document: body.Data, status: "Created" }]);

    const status = () => api(f.apiUrl, `/payment/v1.0/status/${requestId}`);
    expect((await status()).json.Data).toMatchObject({ requestId, status: "Created" });
    f.setPaymentStatus(requestId, "Paid");
    expect((await status()).json.Data).toMatchObject({ requestId, status: "Paid" });
    expect(f.violations).toEqual([]);
  });
});

describe("faults and violations", () => {
  test("fail() answers the next matching requests, then the fake recovers", async () => {
    const f = start();
    f.addAccount({ accountId: ACCOUNT, openingBalance: 0 });
    f.fail({ pathIncludes: "/balances", status: 429, headers: { "Retry-After": "1" } });
    f.fail({ method: "GET", pathIncludes: "/accounts", status: 503, times: 2 });
    f.fail({ method: "POST", status: 500 });

    const throttled = await api(f.apiUrl, `/open-banking/v1.0/accounts/${ACCOUNT}/balances`);
    expect([throttled.status, throttled.headers.get("retry-after")]).toEqual([429, "1"]);
    expect(throttled.json).toMatchObject({ code: "429", Errors: [{ errorCode: "TooManyRequests" }] });
    expect((await api(f.apiUrl, "/open-banking/v1.0/accounts")).status).toBe(503);
    expect((await api(f.apiUrl, "/open-banking/v1.0/accounts")).status).toBe(503);
    expect((await api(f.apiUrl, "/open-banking/v1.0/accounts")).status).toBe(200);
    const body = {
      Data: { Statement: { accountId: ACCOUNT, startDateTime: "2026-01-01", endDateTime: "2026-01-02" } },
    };
    expect((await api(f.apiUrl, STATEMENTS, { body })).status).toBe(500);
    expect((await api(f.apiUrl, STATEMENTS, { body })).status).toBe(200);
    expect(f.violations).toEqual([]);
  });

  test("a fault body off the document's shape is a violation", async () => {
    const f = start();
    f.fail({ status: 500, body: { error: "boom" } });
    f.fail({ status: 418 });
    await api(f.apiUrl, "/open-banking/v1.0/accounts");
    await api(f.apiUrl, "/open-banking/v1.0/accounts");
    expect(f.violations.some((v) => v.includes("must have required property 'code'"))).toBe(true);
    expect(f.violations.some((v) => v.includes("status 418 is not declared"))).toBe(true);
  });

  test("delay() holds the next matching answer, long enough for a client timeout", async () => {
    const f = start();
    f.addAccount({ accountId: ACCOUNT, openingBalance: 0 });
    f.delay(60_000, { pathIncludes: "/balances" });
    const held = fetch(`${f.apiUrl}/open-banking/v1.0/accounts/${ACCOUNT}/balances`, {
      headers: { authorization: `Bearer ${JWT}` },
      signal: AbortSignal.timeout(100),
    });
    await expect(held).rejects.toThrow();
    expect((await api(f.apiUrl, `/open-banking/v1.0/accounts/${ACCOUNT}/balances`)).status).toBe(200);
  });

  test("invalid requests are answered 400 and recorded as violations", async () => {
    const f = start();
    f.addAccount({ accountId: ACCOUNT, openingBalance: 0 });
    const res = await api(f.apiUrl, STATEMENTS, {
      body: { Data: { Statement: { accountId: ACCOUNT, startDateTime: "2026-01-01" } } },
    });
    expect(res.status).toBe(400);
    expect(res.json).toMatchObject({ code: "400", message: "Bad Request" });
    const unknown = await api(f.apiUrl, "/v1.0/consents", { body: { Data: { permissions: [] } } });
    expect(unknown.status).toBe(404);
    expect(f.violations).toEqual([
      "uapi: request POST /open-banking/v1.0/statements: body: /Data/Statement must have required property 'endDateTime'",
      "uapi: request POST /v1.0/consents: POST /v1.0/consents: no such path in the document",
    ]);
    expect(f.requests.map((r) => [r.base, r.method, r.path, r.status])).toEqual([
      ["uapi", "POST", STATEMENTS, 400],
      ["uapi", "POST", "/v1.0/consents", 404],
    ]);
  });
});
