// lanes: sqlite
// The Tochka adapter on its own (no svc around it), for what the HTTP-level tests cannot reach
// cheaply: a bank that does not answer in time, Retry-After as a date, amounts that are not
// kopecks, pages that never arrive, and the guard between the sandbox bearer and real logins.
import { afterEach, expect, test } from "bun:test";
import { type BankAccountRef, BankError, type ConnectionStore } from "../../src/banks/adapter";
import { createTochkaAdapter } from "../../src/banks/tochka/adapter";
import { ManualClock } from "../../src/core/clock";
import { createLogger } from "../../src/core/logger";
import { startFakeTochka } from "../support/fake-tochka";

const fake = startFakeTochka({ pollsBeforeReady: 0 });
afterEach(() => {
  expect(fake.violations).toEqual([]);
});

const NUMBER = "40702810100000000017";
const BIK = "044525104";
fake.addJwt("adapter-jwt");

const store: ConnectionStore = {
  read: () => ({ kind: "jwt", token: "adapter-jwt" }),
  renew: () => Promise.reject(new Error("a JWT is not renewed")),
  refused: () => {},
};

function adapter(timeoutMs = 30_000) {
  return createTochkaAdapter({
    settings: { apiUrl: fake.apiUrl, sandboxUrl: fake.sandboxUrl, authUrl: fake.authUrl, timeoutMs },
    connections: store,
    clock: new ManualClock("2026-11-20T09:00:00Z"),
    logger: createLogger("error", () => {}),
  });
}

function ref(over: Partial<BankAccountRef> = {}): BankAccountRef {
  return {
    bank_account_id: "a1",
    bank: "tochka",
    account_number: NUMBER,
    bik: BIK,
    currency: "RUB",
    sandbox: null,
    environment: "production",
    connection_id: "c1",
    credentials: null,
    ...over,
  };
}

const period = { date_from: "2026-10-01", date_to: "2026-10-31" };

test("a bank that does not answer in time: a retryable error, nothing failed for good", async () => {
  fake.addAccount({ accountId: `${NUMBER}/${BIK}`, openingBalance: 0 });
  fake.delay(2_000, { method: "POST", pathIncludes: "/statements" });
  const error = await adapter(100)
    .requestStatement(ref(), period, "ref")
    .catch((e: unknown) => e);
  expect(error).toBeInstanceOf(BankError);
  expect((error as BankError).retryable).toBe(true);
  expect((error as BankError).message).toBe("Банк не ответил вовремя");
});

test("Retry-After as an HTTP date is honoured (capped at 10 minutes)", async () => {
  const at = new Date(Date.now() + 90_000).toUTCString();
  fake.fail({ method: "GET", pathIncludes: "/balances", status: 429, headers: { "Retry-After": at } });
  const error = (await adapter()
    .getBalance(ref())
    .catch((e: unknown) => e)) as BankError;
  expect(error.code).toBe("rate_limited");
  expect(error.retryAfterMs).toBeGreaterThan(80_000);
  expect(error.retryAfterMs).toBeLessThanOrEqual(90_000);
  fake.fail({ method: "GET", pathIncludes: "/balances", status: 503, headers: { "Retry-After": "86400" } });
  const capped = (await adapter()
    .getBalance(ref())
    .catch((e: unknown) => e)) as BankError;
  expect(capped.retryAfterMs).toBe(600_000);
});

test("a statement page that never arrives fails the statement (statement_incomplete), nothing half stored", async () => {
  const number = "40702810400000000028";
  fake.addAccount({ accountId: `${number}/${BIK}`, openingBalance: 0 });
  const a = adapter();
  const { bank_request_id } = await a.requestStatement(ref({ account_number: number }), period, "x");
  // The bank says there are two pages but gives no way to the second.
  const statementPath = `/open-banking/v1.0/accounts/${number}/${BIK}/statements/${bank_request_id}`;
  fake.fail({
    method: "GET",
    pathIncludes: statementPath,
    status: 200,
    body: {
      Data: {
        Statement: [
          {
            accountId: `${number}/${BIK}`,
            statementId: bank_request_id,
            status: "Ready",
            startDateTime: "2026-10-01",
            endDateTime: "2026-10-31",
            creationDateTime: "2026-11-20T09:00:00Z",
            startDateBalance: 0,
            endDateBalance: 0,
            Transaction: [],
          },
        ],
      },
      Links: { self: `${fake.apiUrl}${statementPath}` },
      Meta: { totalPages: 2 },
    },
  });
  const result = await a.pollStatement(ref({ account_number: number }), bank_request_id, period);
  expect(result).toEqual({
    status: "failed",
    error: {
      code: "statement_incomplete",
      message: "Банк отдал 1 из 2 страниц выписки; выписка не сохранена",
    },
  });
});

test("an amount that is not whole kopecks fails the statement rather than being rounded", async () => {
  const number = "40702810700000000039";
  fake.addAccount({ accountId: `${number}/${BIK}`, openingBalance: 0 });
  const a = adapter();
  const { bank_request_id } = await a.requestStatement(ref({ account_number: number }), period, "x");
  const statementPath = `/open-banking/v1.0/accounts/${number}/${BIK}/statements/${bank_request_id}`;
  fake.fail({
    method: "GET",
    pathIncludes: statementPath,
    status: 200,
    body: {
      Data: {
        Statement: [
          {
            accountId: `${number}/${BIK}`,
            statementId: bank_request_id,
            status: "Ready",
            startDateTime: "2026-10-01",
            endDateTime: "2026-10-31",
            creationDateTime: "2026-11-20T09:00:00Z",
            startDateBalance: 0,
            endDateBalance: 10.01,
            Transaction: [
              {
                transactionId: "t1",
                creditDebitIndicator: "Credit",
                status: "Booked",
                documentNumber: "1",
                documentProcessDate: "2026-10-02",
                Amount: { amount: 10.005, currency: "RUB" },
              },
            ],
          },
        ],
      },
      Links: { self: `${fake.apiUrl}${statementPath}` },
      Meta: { totalPages: 1 },
    },
  });
  const result = await a.pollStatement(ref({ account_number: number }), bank_request_id, period);
  expect(result.status).toBe("failed");
  expect(result.status === "failed" && result.error.message).toContain("не выражается в копейках: 10.005");
  const misstated = await a.requestStatement(ref({ account_number: number }), period, "y");
  fake.fail({
    method: "GET",
    pathIncludes: `statements/${misstated.bank_request_id}`,
    status: 200,
    body: {
      Data: {
        Statement: [
          {
            accountId: `${number}/${BIK}`,
            statementId: misstated.bank_request_id,
            status: "Ready",
            startDateTime: "2026-10-01",
            endDateTime: "2026-10-31",
            creationDateTime: "2026-11-20T09:00:00Z",
            startDateBalance: 0.001,
            endDateBalance: 0,
            Transaction: [],
          },
        ],
      },
      Links: { self: `${fake.apiUrl}${statementPath}` },
      Meta: { totalPages: 1 },
    },
  });
  const balance = await a.pollStatement(ref({ account_number: number }), misstated.bank_request_id, period);
  expect(balance.status === "failed" && balance.error.message).toBe(
    "Остаток на начало периода не выражается в копейках: 0.001",
  );
});

test("the sandbox bearer never goes to the bank's real API, nor a real login to the sandbox", async () => {
  const a = adapter();
  await expect(
    a.http.api("production", "sandbox.jwt.token", "GET", "/open-banking/v1.0/accounts"),
  ).rejects.toThrow("Среда счёта не совпадает");
  await expect(a.http.api("sandbox", "adapter-jwt", "GET", "/open-banking/v1.0/accounts")).rejects.toThrow(
    "Среда счёта не совпадает",
  );
  // An address outside the bank's API (a next-page link pointing elsewhere) is refused too.
  await expect(a.http.api("production", "adapter-jwt", "GET", "https://evil.example/x")).rejects.toThrow(
    "вне своего API",
  );
});
