// lanes: sqlite postgres
// Leak scan: a sentinel inside a bank account's credentials and every raw token of the run (and
// its SHA-256) must appear in no response body or header and no log line, after a tour of every
// route and every tool. The one exception is the creation response that returns a raw token.
import { beforeAll, describe, expect, test } from "bun:test";
import { createHash, randomBytes } from "node:crypto";
import { ADMIN_TOKEN, BASE, makeTestApp, storeDump, type TestApp } from "../helpers/app";
import { paymentFile } from "../payments/support";
import { IMPORTS, MCP, SLOW, STATEMENTS } from "./support";

const SENTINEL = `SENTINEL${randomBytes(12).toString("hex")}`;
const CREDENTIALS = {
  login: "fault-user",
  password: SENTINEL,
  certificate: { pem: `-----BEGIN ${SENTINEL}-----`, pin: SENTINEL },
  hosts: [`${SENTINEL}.bank.example`],
};

interface Seen {
  method: string;
  path: string;
  status: number;
  headers: string;
  body: string;
}

let t: TestApp;
const seen: Seen[] = [];
const rawTokens: string[] = [];
/** Responses allowed to hold one raw token: its own creation. */
const creationResponses = new Map<Seen, string>();

function sha256(value: string): string {
  return createHash("sha256").update(value).digest("hex");
}

beforeAll(() => {
  t = makeTestApp();
  // Record every response the app gives (bytes as latin1 too, for the cp1251 export).
  const handle = t.app.handle.bind(t.app);
  (t.app as { handle: (r: Request) => Promise<Response> }).handle = async (request: Request) => {
    const res = await handle(request);
    const bytes = Buffer.from(await res.clone().arrayBuffer());
    seen.push({
      method: request.method,
      path: new URL(request.url).pathname + new URL(request.url).search,
      status: res.status,
      headers: [...res.headers.entries()].map(([k, v]) => `${k}: ${v}`).join("\n"),
      body: `${bytes.toString("utf8")}\n${bytes.toString("latin1")}`,
    });
    return res;
  };
});

async function ok<T = Record<string, unknown>>(res: Response, status = 200): Promise<T> {
  const text = await res.text();
  expect(res.status, `${res.status} ${text.slice(0, 300)}`).toBe(status);
  return (text ? JSON.parse(text) : {}) as T;
}

const adminHeaders = { authorization: `Bearer ${ADMIN_TOKEN}` };
const admin = (method: string, path: string, body?: unknown) =>
  t.request(method, `/admin/api${path}`, { body, headers: adminHeaders });

async function createToken(body: Record<string, unknown>): Promise<{ token: string; api_token_id: string }> {
  const view = await ok<{ token: string; api_token_id: string }>(await admin("POST", "/tokens", body), 201);
  rawTokens.push(view.token);
  creationResponses.set(seen[seen.length - 1]!, view.token);
  return view;
}

function mcp(token: string, session: string | null, message: Record<string, unknown>) {
  const headers: Record<string, string> = {};
  if (session) headers["mcp-session-id"] = session;
  return t.request("POST", MCP, { token, body: { jsonrpc: "2.0", ...message }, headers });
}

describe("leak scan", () => {
  test(
    "a tour of every route and tool leaks no credential, raw token or token hash",
    async () => {
      // --- admin: the world, with credentials on the account
      const company = await ok<{ company_id: string }>(
        await admin("POST", "/companies", { name: "ООО Утечка", inn: "7719617469", kpp: "771901001" }),
        201,
      );
      const account = await ok<{ bank_account_id: string }>(
        await admin("POST", "/bank-accounts", {
          company_id: company.company_id,
          bank: "sandbox",
          account_number: "40702810938000000001",
          bik: "044525225",
          alias: "main",
          credentials: CREDENTIALS,
          sandbox: { ops_per_day: 4 },
        }),
        201,
      );
      const accountId = account.bank_account_id;
      const grant = { bank_account_id: accountId, allow_read_statements: true };
      const integration = await createToken({
        company_id: company.company_id,
        name: "1C",
        purpose: "integration",
        mode: "test",
        scope_read_statements: true,
        scope_send_payments: true,
        accounts: [{ ...grant, allow_send_payments: true }],
        rate_limit_per_minute: 10_000,
      });
      const agent = await createToken({
        company_id: company.company_id,
        name: "agent",
        purpose: "mcp",
        mode: "test",
        scope_read_statements: true,
        accounts: [grant],
      });
      const spare = await createToken({
        company_id: company.company_id,
        name: "spare",
        purpose: "integration",
      });
      // One made outside the API (the CLI's path) is a raw token of the run too.
      rawTokens.push(t.fixtures.token(company.company_id, { accounts: [grant] }).token);

      await ok(await admin("GET", "/companies"));
      await ok(await admin("GET", "/bank-accounts"));
      await ok(await admin("GET", `/bank-accounts?company_id=${company.company_id}`));
      await ok(await admin("GET", "/tokens"));
      await ok(await admin("GET", `/tokens?company_id=${company.company_id}`));
      await ok(
        await admin("PATCH", `/tokens/${spare.api_token_id}`, { name: "spare-2", rate_limit_per_minute: 5 }),
      );
      await ok(await admin("POST", `/tokens/${spare.api_token_id}/revoke`));
      await ok(await admin("POST", `/bank-accounts/${accountId}/balance/refresh`));
      const uiOrder = await ok<{ statement_id: string }>(
        await admin("POST", "/statements", {
          bank_account_id: accountId,
          date_from: "2026-11-01",
          date_to: "2026-11-03",
        }),
        201,
      );
      expect(uiOrder.statement_id).toBeTruthy();

      // --- REST statements: order, repeat, poll, list, every export
      const order = {
        bank_account_id: accountId,
        external_id: "leak-1",
        date_from: "2026-11-10",
        date_to: "2026-11-20",
      };
      const token = integration.token;
      const created = await ok<{ statement_id: string }>(
        await t.request("POST", STATEMENTS, { token, body: order }),
        201,
      );
      await ok(await t.request("POST", STATEMENTS, { token, body: order }));
      await t.request("GET", `${STATEMENTS}/${created.statement_id}/export?format=csv`, { token });
      await t.services.poller.idle();
      await t.services.poller.tick();
      await t.services.poller.idle();
      await ok(await t.request("GET", `${STATEMENTS}/${created.statement_id}`, { token }));
      await ok(
        await t.request("GET", `${STATEMENTS}?bank_account_id=${accountId}&status=ready&limit=5`, { token }),
      );
      for (const query of [
        "format=1c",
        "format=1c&version=1.02",
        "format=1c&version=1.03",
        "format=csv",
        "format=json",
      ]) {
        const res = await t.request("GET", `${STATEMENTS}/${created.statement_id}/export?${query}`, {
          token,
        });
        expect(res.status).toBe(200);
        await res.arrayBuffer();
      }

      // --- payments: upload, read, submit all, submit one
      const file = paymentFile("40702810938000000001", [{ number: "1" }, { number: "2" }]);
      const upload = async () => {
        const form = new FormData();
        form.append("bank_account_id", accountId);
        form.append("file", new Blob([file as Uint8Array<ArrayBuffer>]), "p.txt");
        return ok<{ import_id: string; items: { item_id: string }[] }>(
          await t.app.handle(
            new Request(`${BASE}${IMPORTS}`, {
              method: "POST",
              headers: { authorization: `Bearer ${token}` },
              body: form,
            }),
          ),
          201,
        );
      };
      const first = await upload();
      await ok(await t.request("GET", `${IMPORTS}/${first.import_id}`, { token }));
      await ok(
        await t.request("POST", `${IMPORTS}/${first.import_id}/submit`, {
          token,
          body: { external_id: "pay-1" },
        }),
      );
      await ok(
        await t.request("POST", `${IMPORTS}/${first.import_id}/submit`, {
          token,
          body: { external_id: "pay-1" },
        }),
      );
      const second = await upload();
      await ok(
        await t.request("POST", `${IMPORTS}/${second.import_id}/items/${second.items[0]!.item_id}/submit`, {
          token,
          body: { external_id: "pay-item-1" },
        }),
      );

      // --- agent endpoint: every method and every tool
      const init = await mcp(agent.token, null, {
        id: 1,
        method: "initialize",
        params: {
          protocolVersion: "2025-06-18",
          capabilities: {},
          clientInfo: { name: "leak", version: "1" },
        },
      });
      const session = init.headers.get("mcp-session-id")!;
      await ok(init);
      expect((await mcp(agent.token, session, { method: "notifications/initialized" })).status).toBe(202);
      await ok(await mcp(agent.token, session, { id: 2, method: "tools/list" }));
      await ok(await mcp(agent.token, session, { id: 3, method: "ping" }));
      const calls: [string, Record<string, unknown>][] = [
        ["list_companies", {}],
        ["list_bank_accounts", {}],
        ["get_balance", { bank_account_id: accountId }],
        ["list_statements", { bank_account_id: accountId, limit: 100 }],
        ["get_statement", { statement_id: created.statement_id }],
        ["search_operations", { bank_account_id: accountId, date_from: "2026-11-01", date_to: "2026-11-20" }],
        [
          "search_operations",
          { bank_account_id: accountId, date_from: "2026-11-01", date_to: "2026-11-20", query: "оплата" },
        ],
        ["send_payment", { bank_account_id: accountId }],
      ];
      for (const [i, [name, args]] of calls.entries()) {
        const body = await ok<{ result?: { isError: boolean }; error?: unknown }>(
          await mcp(agent.token, session, {
            id: 10 + i,
            method: "tools/call",
            params: { name, arguments: args },
          }),
        );
        if (name !== "send_payment") expect(body.result?.isError, name).toBe(false);
      }
      // The relay's REST paths (the stdio transport).
      const relay = { token: agent.token, headers: { "x-mcp-session-id": crypto.randomUUID() } };
      await t.request("GET", `${MCP}/tools`, relay);
      await t.request("POST", `${MCP}/tools/list_bank_accounts/call`, { ...relay, body: {} });
      await t.request("POST", `${MCP}/tools/get_balance/call`, {
        ...relay,
        body: { bank_account_id: accountId },
      });
      expect(
        (await t.request("DELETE", MCP, { token: agent.token, headers: { "mcp-session-id": session } }))
          .status,
      ).toBe(204);

      // --- refused requests: a revoked token, the wrong purpose, a token-shaped unknown value, a bad admin token
      expect((await t.request("GET", STATEMENTS, { token: spare.token })).status).toBe(401);
      expect((await t.request("GET", STATEMENTS, { token: agent.token })).status).toBe(403);
      expect((await mcp(integration.token, null, { id: 1, method: "ping" })).status).toBe(403);
      const unknown = `svc_test_${"A".repeat(40)}`;
      rawTokens.push(unknown);
      expect((await t.request("GET", STATEMENTS, { token: unknown })).status).toBe(401);
      const badAdmin = `${ADMIN_TOKEN}x`;
      expect(
        (await t.request("GET", "/admin/api/companies", { headers: { authorization: `Bearer ${badAdmin}` } }))
          .status,
      ).toBe(401);

      // --- everything else
      await ok(await admin("GET", "/audit-log?limit=500"));
      await ok(await admin("GET", `/audit-log?api_token_id=${agent.api_token_id}`));
      await ok(await admin("GET", "/statements?limit=500"));
      await ok(await admin("GET", `/sandbox/requests?bank_account_id=${accountId}`));
      await ok(await t.request("GET", "/docs/json"));
      await t.request("GET", "/docs");
      await ok(await t.request("GET", "/healthz"));
      await t.request("GET", "/no/such/route");
    },
    SLOW,
  );

  // A separate test, so that whatever the tour saw is scanned even when the tour stopped midway.
  test("no sentinel, raw token or token hash in any response (but its own creation) or log line", () => {
    expect(seen.length).toBeGreaterThan(50);
    expect(rawTokens.length).toBeGreaterThanOrEqual(5);
    const secrets = [
      { what: "credentials sentinel", value: SENTINEL },
      { what: "admin token", value: ADMIN_TOKEN },
      ...rawTokens.flatMap((raw) => [
        { what: `raw token ${raw.slice(0, 13)}`, value: raw },
        { what: `token body ${raw.slice(0, 13)}`, value: raw.slice(9) },
        { what: `sha256 of ${raw.slice(0, 13)}`, value: sha256(raw) },
        { what: `SHA256 of ${raw.slice(0, 13)}`, value: sha256(raw).toUpperCase() },
        {
          what: `base64 sha256 of ${raw.slice(0, 13)}`,
          value: createHash("sha256").update(raw).digest("base64"),
        },
      ]),
    ];
    const leaks: string[] = [];
    for (const response of seen) {
      const own = creationResponses.get(response);
      for (const { what, value } of secrets) {
        // The creation response returns its raw token once, and only that one.
        if (own !== undefined && (value === own || value === own.slice(9))) continue;
        if (response.body.includes(value) || response.headers.includes(value)) {
          leaks.push(`${what} in ${response.method} ${response.path} (${response.status})`);
        }
      }
    }
    for (const line of t.logs) {
      for (const { what, value } of secrets) {
        if (line.includes(value)) leaks.push(`${what} in log line ${line.slice(0, 200)}`);
      }
    }
    // At rest: credentials are sealed and tokens stored as hashes, so neither is in the database.
    const dump = storeDump(t);
    for (const { what, value } of secrets.filter(
      (s) => !s.what.includes("sha256") && !s.what.includes("SHA256"),
    )) {
      if (dump.includes(value)) leaks.push(`${what} in the database file`);
    }
    expect(leaks).toEqual([]);
    // The scan did see the creation responses with their tokens (the exception is real).
    expect(creationResponses.size).toBe(3);
    for (const [response, raw] of creationResponses) expect(response.body).toContain(raw);
  });
});
