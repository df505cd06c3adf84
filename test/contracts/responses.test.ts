// lanes: sqlite postgres
// Real responses against the schemas each route documents (routeDoc from the features' model.ts):
// every body is checked with TypeBox for the status it came with, and must hold no field the
// schema lacks. Errors are checked against the one envelope schema.
import { describe, expect, test } from "bun:test";
import type { TSchema } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { withAccountKey } from "../../src/formats/validators";
import { BASE, json, makeTestApp, type TestApp } from "../helpers/app";
import { paymentFile, upload } from "../payments/support";

type Documented = { responses?: Record<string, { content?: Record<string, { schema: TSchema }> }> };

/** The schema the route declares for this status (JSON body), from the app's own routes. */
function declaredSchema(t: TestApp, method: string, path: string, status: number): TSchema {
  const route = t.app.routes.find((r) => r.method === method && r.path === path);
  if (!route) throw new Error(`no route ${method} ${path}`);
  const detail = (route.hooks as { detail?: Documented }).detail;
  const schema = detail?.responses?.[String(status)]?.content?.["application/json"]?.schema;
  if (!schema) throw new Error(`${method} ${path}: no JSON schema documented for ${status}`);
  return schema;
}

/** Checks the body against the declared schema and returns it. */
async function conforms<T = Record<string, unknown>>(
  t: TestApp,
  res: Response,
  method: string,
  path: string,
  status: number,
): Promise<T> {
  const body = await json<Record<string, unknown>>(res);
  expect({ status: res.status, body }).toEqual({ status, body });
  const schema = declaredSchema(t, method, path, status);
  const errors = [...Value.Errors(schema, body)].map((e) => `${e.path}: ${e.message}`);
  expect({ route: `${method} ${path} ${status}`, errors }).toEqual({
    route: `${method} ${path} ${status}`,
    errors: [],
  });
  // No field outside the schema (TypeBox objects admit extra properties unless told otherwise).
  expect(Value.Clean(schema, structuredClone(body))).toEqual(body);
  return body as T;
}

const STATEMENTS = "/api/v1/integration/statements";
const IMPORTS = "/api/v1/integration/payments/imports";

describe("integration statements", () => {
  test("order, repeat, poll, list and the errors answer as documented", async () => {
    const t = makeTestApp();
    const w = t.fixtures.world();
    const order = {
      bank_account_id: w.account.bank_account_id,
      external_id: "c1",
      date_from: "2026-11-01",
      date_to: "2026-11-02",
    };
    const created = await conforms<{ statement_id: string }>(
      t,
      await t.request("POST", STATEMENTS, { token: w.token, body: order }),
      "POST",
      STATEMENTS,
      201,
    );
    await conforms(
      t,
      await t.request("POST", STATEMENTS, { token: w.token, body: order }),
      "POST",
      STATEMENTS,
      200,
    );
    const one = `${STATEMENTS}/:statement_id`;
    await conforms(
      t,
      await t.request("GET", `${STATEMENTS}/${created.statement_id}`, { token: w.token }),
      "GET",
      one,
      200,
    );
    await t.services.poller.idle();
    await t.services.poller.tick();
    await t.services.poller.idle();
    const ready = await conforms<{ status: string }>(
      t,
      await t.request("GET", `${STATEMENTS}/${created.statement_id}`, { token: w.token }),
      "GET",
      one,
      200,
    );
    expect(ready.status).toBe("ready");
    await conforms(
      t,
      await t.request("GET", `${STATEMENTS}?limit=1`, { token: w.token }),
      "GET",
      STATEMENTS,
      200,
    );
    await conforms(t, await t.request("GET", STATEMENTS, {}), "GET", STATEMENTS, 401);
    await conforms(
      t,
      await t.request("GET", `${STATEMENTS}/00000000-0000-4000-8000-000000000000`, { token: w.token }),
      "GET",
      one,
      404,
    );
    await conforms(
      t,
      await t.request("POST", STATEMENTS, {
        token: w.token,
        body: { ...order, external_id: "c2", date_to: "2027-01-01" },
      }),
      "POST",
      STATEMENTS,
      400,
    );
    const exported = await t.request("GET", `${STATEMENTS}/${created.statement_id}/export?format=csv`, {
      token: w.token,
    });
    expect(exported.status).toBe(200);
    await exported.arrayBuffer();
  });
});

describe("payment imports", () => {
  test("upload, read, submit an import and an item, and the errors answer as documented", async () => {
    const t = makeTestApp();
    const w = t.fixtures.world({ send: true });
    const accountId = w.account.bank_account_id;
    const accountNumber = t.services.accounts.findById(accountId)!.accountNumber;
    const file = paymentFile(accountNumber, [{ number: "201" }, { number: "202" }]);
    const imp = await conforms<{ import_id: string; items: { item_id: string }[] }>(
      t,
      await upload(t, w.token, accountId, file),
      "POST",
      IMPORTS,
      201,
    );
    const one = `${IMPORTS}/:import_id`;
    await conforms(
      t,
      await t.request("GET", `${IMPORTS}/${imp.import_id}`, { token: w.token }),
      "GET",
      one,
      200,
    );
    await conforms(
      t,
      await t.request("POST", `${IMPORTS}/${imp.import_id}/items/${imp.items[0]!.item_id}/submit`, {
        token: w.token,
        body: { external_id: "i1" },
      }),
      "POST",
      `${one}/items/:item_id/submit`,
      200,
    );
    await conforms(
      t,
      await t.request("POST", `${IMPORTS}/${imp.import_id}/submit`, {
        token: w.token,
        body: { external_id: "s1" },
      }),
      "POST",
      `${one}/submit`,
      200,
    );
    await conforms(
      t,
      await t.request("POST", `${IMPORTS}/${imp.import_id}/submit`, {
        token: w.token,
        body: { external_id: " " },
      }),
      "POST",
      `${one}/submit`,
      400,
    );
    await conforms(t, await upload(t, w.token, accountId, null), "POST", IMPORTS, 400);
  });
});

describe("admin API", () => {
  test("every route answers as documented", async () => {
    const t = makeTestApp();
    const A = "/admin/api";
    const company = await conforms<{ company_id: string }>(
      t,
      await t.admin("POST", "/companies", { name: "ООО Контракт", inn: "7719617469" }),
      "POST",
      `${A}/companies`,
      201,
    );
    await conforms(t, await t.admin("GET", "/companies"), "GET", `${A}/companies`, 200);
    const account = await conforms<{ bank_account_id: string; account_number_masked: string }>(
      t,
      await t.admin("POST", "/bank-accounts", {
        company_id: company.company_id,
        bank: "sandbox",
        account_number: withAccountKey("40702810900000000001", "044525225"),
        bik: "044525225",
      }),
      "POST",
      `${A}/bank-accounts`,
      201,
    );
    await conforms(t, await t.admin("GET", "/bank-accounts"), "GET", `${A}/bank-accounts`, 200);
    const token = await conforms<{ api_token_id: string }>(
      t,
      await t.admin("POST", "/tokens", {
        company_id: company.company_id,
        name: "c",
        purpose: "integration",
        scope_read_statements: true,
        accounts: [{ bank_account_id: account.bank_account_id, allow_read_statements: true }],
      }),
      "POST",
      `${A}/tokens`,
      201,
    );
    await conforms(t, await t.admin("GET", "/tokens"), "GET", `${A}/tokens`, 200);
    await conforms(
      t,
      await t.admin("PATCH", `/tokens/${token.api_token_id}`, { name: "d" }),
      "PATCH",
      `${A}/tokens/:id`,
      200,
    );
    await conforms(
      t,
      await t.admin("POST", `/tokens/${token.api_token_id}/revoke`),
      "POST",
      `${A}/tokens/:id/revoke`,
      200,
    );
    await conforms(t, await t.admin("GET", "/audit-log?limit=5"), "GET", `${A}/audit-log`, 200);
    const balance = `${A}/bank-accounts/:id/balance/refresh`;
    await conforms(
      t,
      await t.admin("POST", `/bank-accounts/${account.bank_account_id}/balance/refresh`),
      "POST",
      balance,
      200,
    );
    await conforms(
      t,
      await t.admin("POST", "/bank-accounts/00000000-0000-4000-8000-000000000000/balance/refresh"),
      "POST",
      balance,
      404,
    );
    await conforms(
      t,
      await t.admin("POST", "/statements", {
        bank_account_id: account.bank_account_id,
        date_from: "2026-11-01",
        date_to: "2026-11-01",
      }),
      "POST",
      `${A}/statements`,
      201,
    );
    await conforms(t, await t.admin("GET", "/statements"), "GET", `${A}/statements`, 200);
    await conforms(t, await t.admin("GET", "/sandbox/requests"), "GET", `${A}/sandbox/requests`, 200);
    await conforms(
      t,
      await t.admin("POST", "/companies", { name: "", inn: "1" }),
      "POST",
      `${A}/companies`,
      400,
    );
    const unauthorized = await t.app.handle(new Request(`${BASE}${A}/companies`));
    await conforms(t, unauthorized, "GET", `${A}/companies`, 401);
  });
});

describe("the OpenAPI document", () => {
  test("every REST route of the features documents its success body with a schema", async () => {
    const t = makeTestApp();
    const doc = await json<{
      paths: Record<
        string,
        Record<string, { responses: Record<string, { content?: Record<string, { schema?: object }> }> }>
      >;
    }>(await t.request("GET", "/docs/json"));
    const missing: string[] = [];
    for (const route of t.app.routes) {
      if (!/^\/(api\/v1\/integration|admin\/api)\//.test(route.path)) continue;
      const path = route.path.replace(/:(\w+)/g, "{$1}");
      const responses = doc.paths[path]?.[route.method.toLowerCase()]?.responses ?? {};
      const success = Object.entries(responses).filter(([status]) => status.startsWith("2"));
      const described =
        success.length > 0 && success.every(([, r]) => Object.values(r.content ?? {}).some((c) => c.schema));
      const errors = Object.entries(responses).filter(([status]) => !status.startsWith("2"));
      if (!described || errors.length === 0) missing.push(`${route.method} ${path}`);
    }
    expect(missing).toEqual([]);
  });
});
