// lanes: sqlite postgres
// The authentication and access matrix (test/helpers/auth-matrix.ts) against every token route:
// the statement routes, the payment routes, both uploads, the agent endpoint (POST and DELETE) and
// the relay's REST paths. Each failure kind with its status, code, envelope and X-Request-Id, in the
// specification's order, each later check with every earlier one passing.
import { describe, expect, test } from "bun:test";
import { json, makeTestApp, type TestApp } from "../helpers/app";
import { type MatrixContext, type MatrixRoute, runAuthMatrix } from "../helpers/auth-matrix";
import { initSession, MCP } from "../mcp/helpers";
import {
  bodyOf,
  expectNoBankSecrets,
  paymentFile,
  recordResponses,
  seenBodies,
  upload,
} from "../payments/support";
import { bankFile } from "../statements/import-support";

const STATEMENTS = "/api/v1/integration/statements";
const PAYMENTS = "/api/v1/integration/payments/imports";
const TOOLS = `${MCP}/tools`;
const NO_SUCH_ID = "00000000-0000-4000-8000-000000000000";

let seq = 0;
const nextId = (prefix: string) => {
  seq += 1;
  return `${prefix}-${seq}`;
};

const statementBody = (accountId: string, externalId = "m") => ({
  bank_account_id: accountId,
  external_id: externalId,
  date_from: "2026-11-01",
  date_to: "2026-11-02",
});

/** A statement ordered by the token under test. */
async function ownStatement(t: TestApp, c: MatrixContext, token: string) {
  const res = await t.request("POST", STATEMENTS, {
    token,
    body: statementBody(c.accountId, nextId("prep")),
  });
  expect(res.status).toBe(201);
  return { resourceId: (await json(res)).statement_id as string };
}

/** A payment import uploaded by the token under test. */
async function ownImport(t: TestApp, c: MatrixContext, token: string) {
  const res = await upload(t, token, c.accountId, paymentFile(c.accountNumber));
  expect(res.status).toBe(201);
  const body = await bodyOf<{ import_id: string; items: { item_id: string }[] }>(res);
  return { resourceId: body.import_id, itemId: body.items[0]!.item_id };
}

function form(fields: Record<string, string | Uint8Array | undefined>): FormData {
  const f = new FormData();
  for (const [key, value] of Object.entries(fields)) {
    if (typeof value === "string") f.append(key, value);
    else if (value) f.append(key, new Blob([value as Uint8Array<ArrayBuffer>]), `${key}.txt`);
  }
  return f;
}

const statementRoutes: MatrixRoute[] = [
  {
    name: "POST /statements",
    purpose: "integration",
    scope: "read_statements",
    accountScoped: true,
    request: (c) => ({ method: "POST", path: STATEMENTS, body: statementBody(c.accountId) }),
    ownRefusal: {
      request: (c) => ({
        method: "POST",
        path: STATEMENTS,
        body: { ...statementBody(c.accountId), date_to: "x" },
      }),
      status: 400,
      code: "validation_error",
    },
    ok: [200, 201],
  },
  {
    name: "POST /statements/import (multipart)",
    purpose: "integration",
    scope: "read_statements",
    // A file account holds real bank data: only live tokens reach it.
    bank: "file",
    mode: "live",
    accountScoped: true,
    request: (c) => ({
      method: "POST",
      path: `${STATEMENTS}/import`,
      body: form({
        bank_account_id: c.accountId,
        external_id: "imp",
        file: bankFile(c.accountNumber, "2026-11-01", "2026-11-02").bytes,
      }),
    }),
    ownRefusal: {
      request: (c) => ({
        method: "POST",
        path: `${STATEMENTS}/import`,
        body: form({ bank_account_id: c.accountId, external_id: "imp" }),
      }),
      status: 400,
      code: "validation_error",
    },
    ok: [200, 201],
  },
  {
    name: "GET /statements?bank_account_id=",
    purpose: "integration",
    scope: "read_statements",
    accountScoped: true,
    request: (c) => ({ method: "GET", path: `${STATEMENTS}?bank_account_id=${c.accountId}` }),
    ownRefusal: {
      request: (c) => ({ method: "GET", path: `${STATEMENTS}?bank_account_id=${c.accountId}&limit=0` }),
      status: 400,
      code: "validation_error",
    },
    ok: [200],
  },
  {
    name: "GET /statements/{id}",
    purpose: "integration",
    scope: "read_statements",
    accountScoped: true,
    prepare: ownStatement,
    request: (c) => ({ method: "GET", path: `${STATEMENTS}/${c.resourceId ?? NO_SUCH_ID}` }),
    ownRefusal: {
      request: () => ({ method: "GET", path: `${STATEMENTS}/not-a-uuid` }),
      status: 400,
      code: "invalid request body",
    },
    ok: [200],
  },
  {
    name: "GET /statements/{id}/export",
    purpose: "integration",
    scope: "read_statements",
    accountScoped: true,
    prepare: ownStatement,
    request: (c) => ({
      method: "GET",
      path: `${STATEMENTS}/${c.resourceId ?? NO_SUCH_ID}/export?format=json`,
    }),
    ownRefusal: {
      request: (c) => ({
        method: "GET",
        path: `${STATEMENTS}/${c.resourceId ?? NO_SUCH_ID}/export?format=xml`,
      }),
      status: 400,
      code: "validation_error",
    },
    // The statement is still being fetched: past the checks, the export is not ready yet.
    ok: [409],
  },
];

const paymentRoutes: MatrixRoute[] = [
  {
    name: "POST /payments/imports (multipart)",
    purpose: "integration",
    scope: "send_payments",
    accountScoped: true,
    request: (c) => ({
      method: "POST",
      path: PAYMENTS,
      body: form({ bank_account_id: c.accountId, file: paymentFile(c.accountNumber) }),
    }),
    ownRefusal: {
      request: (c) => ({ method: "POST", path: PAYMENTS, body: form({ bank_account_id: c.accountId }) }),
      status: 400,
      code: "validation_error",
    },
    ok: [201],
  },
  {
    name: "GET /payments/imports/{id}",
    purpose: "integration",
    scope: "send_payments",
    accountScoped: true,
    prepare: ownImport,
    request: (c) => ({ method: "GET", path: `${PAYMENTS}/${c.resourceId}` }),
    ownRefusal: {
      request: () => ({ method: "GET", path: `${PAYMENTS}/not-a-uuid` }),
      status: 400,
      code: "invalid request body",
    },
    ok: [200],
  },
  {
    name: "POST /payments/imports/{id}/submit",
    purpose: "integration",
    scope: "send_payments",
    accountScoped: true,
    prepare: ownImport,
    request: (c) => ({
      method: "POST",
      path: `${PAYMENTS}/${c.resourceId}/submit`,
      body: { external_id: nextId("submit") },
    }),
    ownRefusal: {
      request: (c) => ({ method: "POST", path: `${PAYMENTS}/${c.resourceId}/submit`, body: {} }),
      status: 400,
      code: "validation_error",
    },
    ok: [200],
  },
  {
    name: "POST /payments/imports/{id}/items/{item_id}/submit",
    purpose: "integration",
    scope: "send_payments",
    accountScoped: true,
    prepare: ownImport,
    request: (c) => ({
      method: "POST",
      path: `${PAYMENTS}/${c.resourceId}/items/${c.itemId}/submit`,
      body: { external_id: nextId("item") },
    }),
    ownRefusal: {
      request: (c) => ({
        method: "POST",
        path: `${PAYMENTS}/${c.resourceId}/items/${c.itemId}/submit`,
        body: {},
      }),
      status: 400,
      code: "validation_error",
    },
    ok: [200],
  },
];

const INITIALIZE = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "matrix", version: "1" } },
};

const agentRoutes: MatrixRoute[] = [
  {
    name: "POST /api/v1/mcp (JSON-RPC)",
    purpose: "mcp",
    scope: "read_statements",
    accountScoped: false,
    originChecked: true,
    request: () => ({ method: "POST", path: MCP, body: INITIALIZE }),
    ownRefusal: {
      request: () => ({
        method: "POST",
        path: MCP,
        body: INITIALIZE,
        headers: { "mcp-protocol-version": "1999-01-01" },
      }),
      status: 400,
      code: "validation_error",
    },
    ok: [200],
  },
  {
    name: "DELETE /api/v1/mcp",
    purpose: "mcp",
    scope: "read_statements",
    accountScoped: false,
    originChecked: true,
    prepare: async (t, _c, token) => ({ resourceId: await initSession(t, token) }),
    request: (c) => ({
      method: "DELETE",
      path: MCP,
      headers: { "mcp-session-id": c.resourceId ?? crypto.randomUUID() },
    }),
    ownRefusal: { request: () => ({ method: "DELETE", path: MCP }), status: 400, code: "validation_error" },
    ok: [204],
  },
  {
    name: "GET /api/v1/mcp/tools (relay)",
    purpose: "mcp",
    scope: "read_statements",
    accountScoped: false,
    request: () => ({ method: "GET", path: TOOLS, headers: { "x-mcp-session-id": crypto.randomUUID() } }),
    ownRefusal: { request: () => ({ method: "GET", path: TOOLS }), status: 400, code: "validation_error" },
    ok: [200],
  },
  {
    name: "POST /api/v1/mcp/tools/{name}/call (relay)",
    purpose: "mcp",
    scope: "read_statements",
    accountScoped: false,
    request: () => ({
      method: "POST",
      path: `${TOOLS}/list_companies/call`,
      body: { arguments: {} },
      headers: { "x-mcp-session-id": crypto.randomUUID() },
    }),
    ownRefusal: {
      request: () => ({ method: "POST", path: `${TOOLS}/list_companies/call`, body: { arguments: {} } }),
      status: 400,
      code: "validation_error",
    },
    ok: [200],
  },
];

describe.each(statementRoutes)("statements: $name", (route) => {
  test("every check, in order, with envelope and X-Request-Id", async () => {
    await runAuthMatrix(makeTestApp(), route);
  });
});

describe.each(paymentRoutes)("payments: $name", (route) => {
  test("every check, in order, with envelope and X-Request-Id", async () => {
    const t = makeTestApp();
    recordResponses(t);
    await runAuthMatrix(t, route);
  });
});

describe.each(agentRoutes)("agents: $name", (route) => {
  test("every check, in order, with envelope and X-Request-Id", async () => {
    await runAuthMatrix(makeTestApp(), route);
  });
});

test("no payment response of this file carries a bank reference or signing URL", () => {
  expect(seenBodies.length).toBeGreaterThan(40);
  for (const text of seenBodies) expectNoBankSecrets(text);
});
