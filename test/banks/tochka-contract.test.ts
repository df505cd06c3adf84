// lanes: sqlite
import { describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import {
  GATEWAY_STATUSES,
  matchOperation,
  validateRequest,
  validateResponse,
} from "../support/tochka-contract";

const ACCOUNT = "40702810440000012345/044525104";
const BALANCES = `/open-banking/v1.0/accounts/${ACCOUNT}/balances`;
const STATEMENT = `/open-banking/v1.0/accounts/${ACCOUNT}/statements/100000001`;
const SELF = { self: "https://enter.tochka.com/uapi/open-banking/v1.0/statements" };

const PAYMENT = {
  Data: {
    accountCode: "40702810440000012345",
    bankCode: "044525104",
    counterpartyBankBic: "044525225",
    counterpartyAccountNumber: "40702810938000012345",
    counterpartyINN: "7707083893",
    counterpartyKPP: "773601001",
    counterpartyName: "ООО «Ромашка»",
    counterpartyBankCorrAccount: "30101810400000000225",
    paymentAmount: 12345.67,
    paymentDate: "2026-11-20",
    paymentNumber: 118,
    paymentPurpose: "Оплата по счету № 5 от 18.11.2026. НДС не облагается",
  },
};

const TRANSACTION = {
  transactionId: "t-1",
  creditDebitIndicator: "Credit",
  status: "Booked",
  documentNumber: "118",
  transactionTypeCode: "Платежное поручение",
  documentProcessDate: "2026-01-15",
  description: "Оплата по счету № 5",
  Amount: { amount: 1234567.89, amountNat: 1234567.89, currency: "RUB" },
  DebtorParty: { name: "ООО «Ромашка»", inn: "7707083893", kpp: "773601001" },
  DebtorAccount: { schemeName: "RU.CBR.PAN", identification: "40702810938000012345" },
  DebtorAgent: {
    schemeName: "RU.CBR.BIK",
    identification: "044525225",
    accountIdentification: "30101810400000000225",
    name: "ПАО СБЕРБАНК",
  },
};

function readyStatement(transaction: Record<string, unknown> = TRANSACTION) {
  return {
    Data: {
      Statement: [
        {
          accountId: ACCOUNT,
          statementId: "100000001",
          status: "Ready",
          startDateTime: "2026-01-01",
          endDateTime: "2026-01-31",
          creationDateTime: "2026-02-01T10:00:00.000Z",
          startDateBalance: 0.1,
          endDateBalance: 1234568,
          Transaction: [transaction],
        },
      ],
    },
    Links: { ...SELF, next: `${SELF.self}?page=2` },
    Meta: { totalPages: 2 },
  };
}

const ERROR = {
  code: "401",
  id: "0b8e5f0e-5c43-4a39-9f6b-9c0f1f2b7a11",
  message: "Unauthorized",
  Errors: [
    { errorCode: "Unauthorized", message: "unknown token", url: "https://enter.tochka.com/doc/v2/redoc" },
  ],
};

describe("path templates", () => {
  test("an accountId with its slash matches both account templates", () => {
    const balances = matchOperation("GET", BALANCES);
    const statement = matchOperation("GET", STATEMENT);
    expect(balances).toMatchObject({
      template: "/open-banking/v1.0/accounts/{accountId}/balances",
      params: { accountId: ACCOUNT },
      permissions: ["ReadBalances"],
    });
    expect(statement).toMatchObject({
      template: "/open-banking/v1.0/accounts/{accountId}/statements/{statementId}",
      params: { accountId: ACCOUNT, statementId: "100000001" },
    });
  });

  test("an escaped slash in accountId is one parameter too", () => {
    const escaped = STATEMENT.replace(ACCOUNT, ACCOUNT.replace("/", "%2F"));
    expect(matchOperation("GET", escaped)).toMatchObject({ params: { accountId: ACCOUNT } });
  });

  test("unknown paths and methods are named", () => {
    expect(validateRequest({ method: "GET", path: "/open-banking/v1.0/accountz" })).toEqual([
      "request GET /open-banking/v1.0/accountz: GET /open-banking/v1.0/accountz: no such path in the document",
    ]);
    // The OAuth page's example URL for consents is not the document's path.
    expect(validateRequest({ method: "POST", path: "/v1.0/consents", body: {} })[0]).toContain(
      "no such path",
    );
    expect(validateRequest({ method: "DELETE", path: "/open-banking/v1.0/accounts" })[0]).toContain(
      "DELETE is not declared",
    );
    expect(validateRequest({ method: "GET", path: `${STATEMENT}/extra` })[0]).toContain("no such path");
  });
});

describe("requests", () => {
  test("correct requests pass", () => {
    expect(validateRequest({ method: "GET", path: "/open-banking/v1.0/accounts" })).toEqual([]);
    expect(validateRequest({ method: "GET", path: BALANCES })).toEqual([]);
    expect(
      validateRequest({
        method: "POST",
        path: "/open-banking/v1.0/statements",
        body: {
          Data: { Statement: { accountId: ACCOUNT, startDateTime: "2026-01-01", endDateTime: "2026-01-31" } },
        },
      }),
    ).toEqual([]);
    expect(validateRequest({ method: "POST", path: "/payment/v1.0/for-sign", body: PAYMENT })).toEqual([]);
    expect(
      validateRequest({
        method: "POST",
        path: "/consent/v1.0/consents",
        body: {
          Data: {
            permissions: ["ReadAccountsBasic", "ReadStatements"],
            expirationDateTime: "2030-10-03T00:00:00+00:00",
          },
        },
      }),
    ).toEqual([]);
  });

  test("a missing required field is caught", () => {
    const { paymentPurpose: _, ...withoutPurpose } = PAYMENT.Data;
    expect(
      validateRequest({ method: "POST", path: "/payment/v1.0/for-sign", body: { Data: withoutPurpose } }),
    ).toEqual([
      "request POST /payment/v1.0/for-sign: body: /Data must have required property 'paymentPurpose'",
    ]);
  });

  test("an amount sent as a string is caught", () => {
    const body = { Data: { ...PAYMENT.Data, paymentAmount: "12345.67" } };
    expect(validateRequest({ method: "POST", path: "/payment/v1.0/for-sign", body })).toEqual([
      "request POST /payment/v1.0/for-sign: body: /Data/paymentAmount must be number",
    ]);
  });

  test("a wrong enum value, date format or length is caught", () => {
    const consent = { Data: { permissions: ["ReadEverything"] } };
    expect(validateRequest({ method: "POST", path: "/consent/v1.0/consents", body: consent })[0]).toContain(
      "/Data/permissions/0 must be equal to one of the allowed values",
    );
    const statement = {
      Data: { Statement: { accountId: ACCOUNT, startDateTime: "01.01.2026", endDateTime: "2026-01-31" } },
    };
    expect(
      validateRequest({ method: "POST", path: "/open-banking/v1.0/statements", body: statement }),
    ).toEqual([
      'request POST /open-banking/v1.0/statements: body: /Data/Statement/startDateTime must match format "date"',
    ]);
    const shortBik = { Data: { ...PAYMENT.Data, counterpartyBankBic: "44525225" } };
    expect(validateRequest({ method: "POST", path: "/payment/v1.0/for-sign", body: shortBik })[0]).toContain(
      "/Data/counterpartyBankBic must NOT have fewer than 9 characters",
    );
  });

  test("a misspelt optional field in what svc sends is caught", () => {
    const body = { Data: { ...PAYMENT.Data, counterpartyInn: "7707083893" } };
    expect(validateRequest({ method: "POST", path: "/payment/v1.0/for-sign", body })[0]).toContain(
      '"counterpartyInn" is not in the document',
    );
  });

  test("a missing body, or a body where none is taken, is caught", () => {
    expect(validateRequest({ method: "POST", path: "/open-banking/v1.0/statements" })[0]).toContain(
      "request body is required",
    );
    expect(validateRequest({ method: "GET", path: BALANCES, body: {} })[0]).toContain(
      "takes no request body",
    );
  });
});

describe("answers", () => {
  test("correct answers pass, extra Links members included", () => {
    expect(validateResponse({ method: "GET", path: STATEMENT, status: 200, body: readyStatement() })).toEqual(
      [],
    );
    expect(
      validateResponse({
        method: "POST",
        path: "/consent/v1.0/consents",
        status: 200,
        body: {
          Data: {
            Consent: [{ consentId: "c-1", status: "AwaitingAuthorisation", permissions: ["ReadStatements"] }],
          },
          Links: SELF,
          Meta: { totalPages: 1 },
        },
      }),
    ).toEqual([]);
    expect(
      validateResponse({ method: "GET", path: BALANCES, status: 500, body: { ...ERROR, code: "500" } }),
    ).toEqual([]);
  });

  test("the consent answer of the OAuth page's example is not what the document declares", () => {
    const asOnThePage = {
      Data: { status: "AwaitingAuthorisation", permissions: ["ReadStatements"], consentId: "c-1" },
      Links: SELF,
      Meta: { totalPages: 1 },
    };
    expect(
      validateResponse({ method: "POST", path: "/consent/v1.0/consents", status: 200, body: asOnThePage }),
    ).toContain("answer 200 to POST /consent/v1.0/consents: /Data must have required property 'Consent'");
  });

  test("a wrong enum value is caught", () => {
    const body = readyStatement({ ...TRANSACTION, creditDebitIndicator: "credit" });
    expect(validateResponse({ method: "GET", path: STATEMENT, status: 200, body })).toEqual([
      `answer 200 to GET ${STATEMENT}: /Data/Statement/0/Transaction/0/creditDebitIndicator must be equal to one of the allowed values (Credit, Debit)`,
    ]);
  });

  test("an amount as a string is caught", () => {
    const body = readyStatement({ ...TRANSACTION, Amount: { amount: "1234567.89", currency: "RUB" } });
    expect(validateResponse({ method: "GET", path: STATEMENT, status: 200, body })).toEqual([
      `answer 200 to GET ${STATEMENT}: /Data/Statement/0/Transaction/0/Amount/amount must be number`,
    ]);
  });

  test("missing Links.self, Meta or a relative self link are caught", () => {
    const { Links: _, ...noLinks } = readyStatement();
    expect(validateResponse({ method: "GET", path: STATEMENT, status: 200, body: noLinks })).toEqual([
      `answer 200 to GET ${STATEMENT}: (root) must have required property 'Links'`,
    ]);
    const relative = { ...readyStatement(), Links: { self: "/uapi/x" } };
    expect(validateResponse({ method: "GET", path: STATEMENT, status: 200, body: relative })[0]).toContain(
      '/Links/self must match format "uri"',
    );
  });

  test("an undeclared status is a problem unless the caller accepts gateway statuses", () => {
    expect(validateResponse({ method: "GET", path: BALANCES, status: 401, body: ERROR })).toEqual([
      `answer 401 to GET ${BALANCES}: status 401 is not declared for GET /open-banking/v1.0/accounts/{accountId}/balances (declared: 200, 400, 403, 404, 424, 500)`,
    ]);
    expect(
      validateResponse(
        { method: "GET", path: BALANCES, status: 201, body: {} },
        { gatewayStatuses: GATEWAY_STATUSES },
      )[0],
    ).toContain("status 201 is not declared");
    expect(
      validateResponse(
        { method: "GET", path: BALANCES, status: 401, body: ERROR },
        { gatewayStatuses: GATEWAY_STATUSES },
      ),
    ).toEqual([]);
    expect(
      validateResponse(
        { method: "GET", path: BALANCES, status: 429, body: { error: "slow down" } },
        { gatewayStatuses: GATEWAY_STATUSES },
      ),
    ).toContain(`answer 429 to GET ${BALANCES}: (root) must have required property 'code'`);
  });

  test("an error body without Errors is caught", () => {
    const { Errors: _, ...noErrors } = ERROR;
    expect(validateResponse({ method: "GET", path: BALANCES, status: 403, body: noErrors })).toEqual([
      `answer 403 to GET ${BALANCES}: (root) must have required property 'Errors'`,
    ]);
  });
});

describe("the fixture", () => {
  const source = resolve(import.meta.dir, "../../../shared/banks/tochka/openapi.json");

  test.skipIf(!existsSync(source))("is what the script cuts from the bank's document", () => {
    const dir = mkdtempSync(join(tmpdir(), "tochka-fixture-"));
    try {
      const out = join(dir, "openapi.json");
      const run = Bun.spawnSync([process.execPath, "scripts/tochka-fixture.ts", source, out], {
        cwd: resolve(import.meta.dir, "../.."),
        stdout: "pipe",
        stderr: "pipe",
      });
      expect(run.stderr.toString()).toBe("");
      expect(readFileSync(out, "utf8")).toBe(
        readFileSync(resolve(import.meta.dir, "../fixtures/tochka-openapi.json"), "utf8"),
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
