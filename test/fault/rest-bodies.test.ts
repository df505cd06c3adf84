// lanes: sqlite postgres
// Hostile bodies on every JSON POST/PATCH route of the integration and admin APIs: whatever a
// client sends, the answer is never a 5xx, always the error envelope (or a normal success), always
// with X-Request-Id, and no body can pollute Object.prototype.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import fc from "fast-check";
import { ADMIN_TOKEN, makeTestApp, type TestApp } from "../helpers/app";
import { paymentFile, upload } from "../payments/support";
import { type FieldModel, hostileBody, jsonContentType, oddString, validDate } from "./arbitraries";
import {
  expectCleanRest,
  expectPrototypesClean,
  IMPORTS,
  nextMinute,
  rawRequest,
  runs,
  SLOW,
  STATEMENTS,
  seed,
  seedWorld,
} from "./support";

const RUNS = 200;

let t: TestApp;
let world: ReturnType<typeof seedWorld>;
let importId: string;
let itemId: string;
let patchTokenId: string;

beforeAll(async () => {
  t = makeTestApp();
  world = seedWorld(t);
  const number = t.services.accounts.findById(world.account.bank_account_id)!.accountNumber;
  const res = await upload(
    t,
    world.integration.token,
    world.account.bank_account_id,
    paymentFile(number, [{ number: "1" }, { number: "2" }, { number: "3" }]),
  );
  expect(res.status).toBe(201);
  const view = (await res.json()) as { import_id: string; items: { item_id: string }[] };
  importId = view.import_id;
  itemId = view.items[0]!.item_id;
  // PATCH fuzzing changes this token, never the ones the suite calls with.
  patchTokenId = t.fixtures.token(world.company.company_id, { accounts: [] }).api_token_id;
});

afterAll(() => expectPrototypesClean());

const uuidOrOdd = (real: () => string) =>
  fc.oneof(
    fc.constant(null).map(() => real()),
    fc.uuid(),
    oddString,
  );

interface Route {
  name: string;
  method: "POST" | "PATCH";
  path: () => string;
  auth: () => string;
  model: () => FieldModel;
}

const integrationAuth = () => `Bearer ${world.integration.token}`;
const adminAuth = () => `Bearer ${ADMIN_TOKEN}`;

const routes: Route[] = [
  {
    name: "POST /api/v1/integration/statements",
    method: "POST",
    path: () => STATEMENTS,
    auth: integrationAuth,
    model: () => ({
      bank_account_id: uuidOrOdd(() => world.account.bank_account_id),
      external_id: oddString,
      date_from: validDate,
      date_to: validDate,
    }),
  },
  {
    name: "POST …/imports/{id}/submit",
    method: "POST",
    path: () => `${IMPORTS}/${importId}/submit`,
    auth: integrationAuth,
    model: () => ({ external_id: oddString }),
  },
  {
    name: "POST …/imports/{id}/items/{id}/submit",
    method: "POST",
    path: () => `${IMPORTS}/${importId}/items/${itemId}/submit`,
    auth: integrationAuth,
    model: () => ({ external_id: oddString }),
  },
  {
    name: "POST /admin/api/companies",
    method: "POST",
    path: () => "/admin/api/companies",
    auth: adminAuth,
    model: () => ({
      name: oddString,
      inn: fc.constantFrom("7719617469", "7707083893", "500100732259", "0000000000"),
      kpp: fc.oneof(fc.constant("771901001"), fc.constant(null)),
    }),
  },
  {
    name: "POST /admin/api/bank-accounts",
    method: "POST",
    path: () => "/admin/api/bank-accounts",
    auth: adminAuth,
    model: () => ({
      company_id: uuidOrOdd(() => world.company.company_id),
      bank: fc.constantFrom("sandbox", "sandbox_failing", "sandbox_no_statements", "sber"),
      account_number: fc.stringMatching(/^\d{20}$/),
      bik: fc.constantFrom("044525225", "04452522", "0445252250"),
      currency: fc.constantFrom("RUB", "USD", "rub"),
      alias: fc.stringMatching(/^[A-Za-z0-9_-]{1,40}$/),
      credentials: fc.dictionary(oddString, fc.jsonValue({ maxDepth: 3 }), { maxKeys: 4 }),
      sandbox: fc.record(
        {
          ops_per_day: fc.oneof(fc.integer({ min: 1, max: 5 }), fc.integer()),
          opening_balance: fc.oneof(fc.constant(100.5), fc.double()),
        },
        { requiredKeys: [] },
      ),
    }),
  },
  {
    name: "POST /admin/api/tokens",
    method: "POST",
    path: () => "/admin/api/tokens",
    auth: adminAuth,
    model: () => tokenModel(true),
  },
  {
    name: "PATCH /admin/api/tokens/{id}",
    method: "PATCH",
    path: () => `/admin/api/tokens/${patchTokenId}`,
    auth: adminAuth,
    model: () => tokenModel(false),
  },
  {
    name: "POST /admin/api/statements",
    method: "POST",
    path: () => "/admin/api/statements",
    auth: adminAuth,
    model: () => ({
      bank_account_id: uuidOrOdd(() => world.account.bank_account_id),
      date_from: validDate,
      date_to: validDate,
    }),
  },
];

function tokenModel(create: boolean): FieldModel {
  const grant = fc.record(
    {
      bank_account_id: uuidOrOdd(() => world.account.bank_account_id),
      allow_read_statements: fc.boolean(),
      allow_send_payments: fc.boolean(),
    },
    { requiredKeys: [] },
  );
  const model: FieldModel = {
    name: oddString,
    scope_read_statements: fc.boolean(),
    scope_send_payments: fc.boolean(),
    accounts: fc.array(grant, { maxLength: 3 }),
    allowed_ips: fc.array(fc.oneof(fc.ipV4(), fc.ipV6(), fc.constantFrom("10.0.0.0/8", "::1/128")), {
      maxLength: 3,
    }),
    rate_limit_per_minute: fc.oneof(fc.integer({ min: 1, max: 10_000 }), fc.constant(null)),
    expires_at: fc.oneof(fc.constant("2030-01-01T00:00:00Z"), fc.constant(null)),
  };
  if (create) {
    model.company_id = uuidOrOdd(() => world.company.company_id);
    model.purpose = fc.constantFrom("integration", "mcp");
    model.mode = fc.constantFrom("live", "test");
  } else {
    model.scopes = fc.record(
      { read_statements: fc.boolean(), send_payments: fc.boolean() },
      { requiredKeys: [] },
    );
  }
  return model;
}

describe("hostile JSON bodies", () => {
  for (const [i, route] of routes.entries()) {
    test(
      `${route.name}: never 5xx, always the envelope`,
      async () => {
        nextMinute(t);
        const seen = new Map<number, number>();
        await fc.assert(
          fc.asyncProperty(hostileBody(route.model()), jsonContentType, async (body, contentType) => {
            const headers: Record<string, string> = { authorization: route.auth() };
            if (contentType !== null) headers["content-type"] = contentType;
            const res = await rawRequest(t, route.method, route.path(), body.data, headers);
            const { status } = await expectCleanRest(res, `${route.name} [${body.kind}]`);
            seen.set(status, (seen.get(status) ?? 0) + 1);
            expectPrototypesClean();
          }),
          { numRuns: runs(RUNS), seed: seed(1000 + i) },
        );
        // The generators reach past the JSON parser into field validation.
        expect([...seen.keys()].some((s) => s === 400)).toBe(true);
      },
      SLOW,
    );
  }

  test(
    "malformed ids in the path are 400 invalid request body, on every route with an id",
    async () => {
      nextMinute(t);
      const paths = [
        (id: string) => `${IMPORTS}/${id}/submit`,
        (id: string) => `${IMPORTS}/${importId}/items/${id}/submit`,
        (id: string) => `${IMPORTS}/${id}/items/${itemId}/submit`,
      ];
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom(...paths.keys()),
          // Dot segments ("." and "..") are resolved by the URL parser before routing: left out.
          fc
            .stringMatching(/^[A-Za-z0-9_.~-]{1,60}$/)
            .filter((s) => !/^[0-9a-f-]{36}$/i.test(s) && !/^\.+$/.test(s)),
          async (which, id) => {
            const res = await t.request("POST", paths[which]!(id), {
              token: world.integration.token,
              body: { external_id: "x" },
            });
            const { status, json } = await expectCleanRest(res, `path id ${id}`);
            if (status !== 404) {
              expect(status).toBe(400);
              expect((json as { error: { code: string } }).error.code).toBe("invalid request body");
            }
          },
        ),
        { numRuns: runs(100), seed: seed(1100) },
      );
      const patch = await t.admin("PATCH", "/tokens/not-a-uuid", { name: "x" });
      expect((await expectCleanRest(patch)).status).toBe(400);
    },
    SLOW,
  );

  test(
    "bodies over 1 MB are 413 payload_too_large, with or without Content-Length",
    async () => {
      nextMinute(t);
      const big = JSON.stringify({ external_id: "x".repeat(1024 * 1024) });
      for (const route of routes) {
        const res = await rawRequest(t, route.method, route.path(), big, {
          authorization: route.auth(),
          "content-type": "application/json",
        });
        const { status } = await expectCleanRest(res, route.name);
        expect(status).toBe(413);
        // A streamed body carries no Content-Length: the limit holds while reading.
        const stream = new Blob([big]).stream();
        const streamed = await t.app.handle(
          new Request(`http://localhost${route.path()}`, {
            method: route.method,
            headers: { authorization: route.auth(), "content-type": "application/json" },
            body: stream,
            duplex: "half",
          } as RequestInit),
        );
        expect((await expectCleanRest(streamed, `${route.name} streamed`)).status).toBe(413);
      }
    },
    SLOW,
  );
});
