// lanes: sqlite postgres
// The relay's REST paths: same tools, same access rules, same audit (transport "stdio").
import { describe, expect, test } from "bun:test";
import { makeTestApp, type TestApp } from "../helpers/app";
import { expectError } from "../helpers/envelope";
import { initSession, MCP, readyStatement, rpc, type ToolResultBody } from "./helpers";

const TOOLS = `${MCP}/tools`;

function relay(
  t: TestApp,
  token: string | undefined,
  method: "GET" | "POST",
  path: string,
  opts: { session?: string | null; body?: unknown } = {},
): Promise<Response> {
  const headers: Record<string, string> = {};
  const session = opts.session === undefined ? crypto.randomUUID() : opts.session;
  if (session !== null) headers["x-mcp-session-id"] = session;
  return t.request(method, path, { token, headers, body: opts.body });
}

describe("relay REST paths", () => {
  test("GET /mcp/tools equals tools/list", async () => {
    const t = makeTestApp();
    const w = t.fixtures.world({ purpose: "mcp" });
    const res = await relay(t, w.token, "GET", TOOLS);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { tools: { name: string; annotations: { readOnlyHint: boolean } }[] };
    expect(body.tools).toHaveLength(6);
    for (const tool of body.tools) expect(tool.annotations.readOnlyHint).toBe(true);
    const session = await initSession(t, w.token);
    const viaRpc = await rpc(t, w.token, session, "tools/list");
    expect(body).toEqual(viaRpc.result as never);
  });

  test("POST /mcp/tools/{name}/call answers the tool result as tools/call", async () => {
    const t = makeTestApp();
    const w = t.fixtures.world({ purpose: "mcp" });
    const accountId = w.account.bank_account_id;
    await readyStatement(t, accountId, "2026-11-01", "2026-11-10");

    const companies = await relay(t, w.token, "POST", `${TOOLS}/list_companies/call`, { body: {} });
    expect(companies.status).toBe(200);
    const c = (await companies.json()) as ToolResultBody;
    expect(c.isError).toBe(false);
    expect((c.structuredContent.companies as unknown[]).length).toBe(1);
    expect(c._meta.notice).toBeTruthy();

    const balance = await relay(t, w.token, "POST", `${TOOLS}/get_balance/call`, {
      body: { arguments: { bank_account_id: accountId } },
    });
    expect(balance.status).toBe(200);
    const b = (await balance.json()) as ToolResultBody;
    expect(b.isError).toBe(false);
    const session = await initSession(t, w.token);
    const viaRpc = await rpc(t, w.token, session, "tools/call", {
      name: "get_balance",
      arguments: { bank_account_id: accountId },
    });
    expect(b).toEqual(viaRpc.result as never);

    // Tool-level errors are results with isError, as in tools/call.
    const bad = await relay(t, w.token, "POST", `${TOOLS}/get_balance/call`, { body: { arguments: {} } });
    expect(bad.status).toBe(200);
    const e = (await bad.json()) as ToolResultBody;
    expect(e.isError).toBe(true);
    expect((e.structuredContent.error as { code: string }).code).toBe("validation_error");

    // No body at all is an empty arguments object.
    const noBody = await relay(t, w.token, "POST", `${TOOLS}/list_bank_accounts/call`);
    expect(noBody.status).toBe(200);
    expect(((await noBody.json()) as ToolResultBody).isError).toBe(false);
  });

  test("unknown tool is 404 not_found", async () => {
    const t = makeTestApp();
    const w = t.fixtures.world({ purpose: "mcp" });
    await expectError(
      await relay(t, w.token, "POST", `${TOOLS}/send_payment/call`, { body: { arguments: { amount: 1 } } }),
      404,
      "not_found",
    );
  });

  test("X-MCP-Session-Id is required and must be a UUIDv4", async () => {
    const t = makeTestApp();
    const w = t.fixtures.world({ purpose: "mcp" });
    for (const session of [null, "", "not-a-uuid", "00000000-0000-1000-8000-000000000000"]) {
      const d1 = await expectError(
        await relay(t, w.token, "GET", TOOLS, { session }),
        400,
        "validation_error",
      );
      expect(d1.field).toBe("X-MCP-Session-Id");
      await expectError(
        await relay(t, w.token, "POST", `${TOOLS}/list_companies/call`, { session, body: {} }),
        400,
        "validation_error",
      );
    }
  });

  test("bad body: arguments not an object is 400 validation_error", async () => {
    const t = makeTestApp();
    const w = t.fixtures.world({ purpose: "mcp" });
    await expectError(
      await relay(t, w.token, "POST", `${TOOLS}/list_companies/call`, { body: { arguments: [1] } }),
      400,
      "validation_error",
    );
  });

  test("401s and 403 forbidden_purpose", async () => {
    const t = makeTestApp();
    const integration = t.fixtures.world({ purpose: "integration" });
    const call = `${TOOLS}/list_companies/call`;
    await expectError(await relay(t, undefined, "GET", TOOLS), 401, "invalid_token_format");
    await expectError(await relay(t, "nope", "POST", call, { body: {} }), 401, "invalid_token_format");
    await expectError(await relay(t, `svc_test_${"x".repeat(40)}`, "GET", TOOLS), 401, "invalid_token");
    await expectError(await relay(t, integration.token, "GET", TOOLS), 403, "forbidden_purpose");
    await expectError(
      await relay(t, integration.token, "POST", call, { body: {} }),
      403,
      "forbidden_purpose",
    );
    // Token checks come before the session header check.
    await expectError(
      await relay(t, undefined, "GET", TOOLS, { session: null }),
      401,
      "invalid_token_format",
    );
  });

  test("access policy: another company's account is a tool-level forbidden error", async () => {
    const t = makeTestApp();
    const w = t.fixtures.world({ purpose: "mcp" });
    const other = t.fixtures.account(t.fixtures.company("ООО Другая", "7707083893").company_id);
    const res = await relay(t, w.token, "POST", `${TOOLS}/get_balance/call`, {
      body: { arguments: { bank_account_id: other.bank_account_id } },
    });
    expect(res.status).toBe(200);
    const r = (await res.json()) as ToolResultBody;
    expect(r.isError).toBe(true);
    expect(["forbidden_company", "forbidden_account", "not_found"]).toContain(
      (r.structuredContent.error as { code: string }).code,
    );
  });

  test("audit entries carry transport stdio and the X-MCP-Session-Id", async () => {
    const t = makeTestApp();
    const w = t.fixtures.world({ purpose: "mcp" });
    const session = crypto.randomUUID();
    await relay(t, w.token, "GET", TOOLS, { session });
    await relay(t, w.token, "POST", `${TOOLS}/list_companies/call`, { session, body: {} });
    await relay(t, w.token, "POST", `${TOOLS}/get_balance/call`, {
      session,
      body: { arguments: { bank_account_id: w.account.bank_account_id } },
    });
    await relay(t, w.token, "POST", `${TOOLS}/get_balance/call`, { session, body: { arguments: {} } });
    await relay(t, w.token, "POST", `${TOOLS}/send_payment/call`, {
      session,
      body: { arguments: { amount: 1 } },
    });

    const entries = t.services.audit
      .query({ limit: 100, apiTokenId: w.tokenId })
      .filter((e) => e.action.startsWith("mcp."))
      .reverse();
    expect(entries.map((e) => [e.action, e.tool, e.outcome])).toEqual([
      ["mcp.tools_list", null, "ok"],
      ["mcp.list_companies", "list_companies", "ok"],
      ["mcp.get_balance", "get_balance", "ok"],
      ["mcp.get_balance", "get_balance", "validation_error"],
      ["mcp.tools_call", "send_payment", "not_found"],
    ]);
    for (const e of entries) {
      expect(e.transport).toBe("stdio");
      expect(e.mcp_session_id).toBe(session);
      expect(e.api_token_id).toBe(w.tokenId);
      expect(e.actor).toBe("token");
      expect(e.ip).toBe("127.0.0.1");
      expect(e.request_id).toBeTruthy();
    }
    expect(entries[2]?.arguments).toEqual({ bank_account_id: w.account.bank_account_id });
  });

  test("rate limit applies as on the HTTP transport", async () => {
    const t = makeTestApp();
    const company = t.fixtures.company();
    const token = t.fixtures.token(company.company_id, { purpose: "mcp", rate_limit_per_minute: 2 });
    expect((await relay(t, token.token, "GET", TOOLS)).status).toBe(200);
    expect((await relay(t, token.token, "GET", TOOLS)).status).toBe(200);
    await expectError(await relay(t, token.token, "GET", TOOLS), 429, "rate_limited");
  });
});
