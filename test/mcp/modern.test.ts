// lanes: sqlite postgres
// The 2026-07-28 revision on the agent endpoint, at the protocol level: no session, `_meta` and
// routing headers checked in the revision's order with its codes and HTTP statuses, server/discover,
// results with resultType, server info and caching hints; session requests stay as they were.
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { makeTestApp, type TestApp } from "../helpers/app";
import { tempDir } from "../helpers/server";
import { initSession, post, type RpcResponse, readyStatement, rpc, TOOL_NAMES } from "./helpers";

const V = "2026-07-28";
const META = {
  "io.modelcontextprotocol/protocolVersion": V,
  "io.modelcontextprotocol/clientCapabilities": {},
  "io.modelcontextprotocol/clientInfo": { name: "test", version: "1" },
};
const SERVER_INFO = "io.modelcontextprotocol/serverInfo";

function setup() {
  const t = makeTestApp();
  const w = t.fixtures.world({ purpose: "mcp" });
  return { t, w };
}

let nextId = 1000;
/** A request as a 2026-07-28 client sends it: `_meta` and the headers that mirror the body. */
async function modern(
  t: TestApp,
  token: string,
  method: string,
  params: Record<string, unknown> = {},
  opts: { headers?: Record<string, string | null>; meta?: Record<string, unknown> | null } = {},
): Promise<{ status: number; body: RpcResponse; res: Response }> {
  const headers: Record<string, string> = { "mcp-protocol-version": V, "mcp-method": method };
  if (method === "tools/call") headers["mcp-name"] = String(params.name);
  for (const [k, v] of Object.entries(opts.headers ?? {})) {
    if (v === null) delete headers[k];
    else headers[k] = v;
  }
  const meta = opts.meta === undefined ? META : opts.meta;
  const res = await post(
    t,
    token,
    { jsonrpc: "2.0", id: nextId++, method, params: meta === null ? params : { ...params, _meta: meta } },
    headers,
  );
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as RpcResponse) : ({} as RpcResponse), res };
}

describe("stateless requests (2026-07-28)", () => {
  test("server/discover: versions, capabilities, instructions, caching hints, server info; no session minted", async () => {
    const { t, w } = setup();
    const { status, body, res } = await modern(t, w.token, "server/discover");
    expect(status).toBe(200);
    expect(res.headers.get("mcp-session-id")).toBeNull();
    expect(body.result).toMatchObject({
      resultType: "complete",
      supportedVersions: ["2026-07-28", "2025-11-25"],
      capabilities: { tools: {} },
      ttlMs: 300_000,
      cacheScope: "private",
      _meta: { [SERVER_INFO]: { name: "svc" } },
    });
    expect(typeof body.result?.instructions).toBe("string");
  });

  test("tools/list and tools/call need no session; results carry resultType and server info beside the notice", async () => {
    const { t, w } = setup();
    const list = await modern(t, w.token, "tools/list");
    expect(list.status).toBe(200);
    const tools = list.body.result?.tools as { name: string; outputSchema: { type: string } }[];
    expect(tools.map((x) => x.name)).toEqual([...TOOL_NAMES]);
    for (const tool of tools) expect(tool.outputSchema.type).toBe("object");
    expect(list.body.result).toMatchObject({ resultType: "complete", ttlMs: 300_000, cacheScope: "private" });

    const call = await modern(t, w.token, "tools/call", { name: "list_bank_accounts", arguments: {} });
    expect(call.status).toBe(200);
    const result = call.body.result as Record<string, unknown> & { _meta: Record<string, unknown> };
    expect(result.resultType).toBe("complete");
    expect(result.isError).toBe(false);
    expect(result._meta.notice).toBeString();
    expect(result._meta[SERVER_INFO]).toMatchObject({ name: "svc" });
    expect(result).not.toHaveProperty("ttlMs");
    // The same compact text as the 2025 revision: one line per account, its id among them.
    const accounts = (result.structuredContent as { bank_accounts: { bank_account_id: string }[] })
      .bank_accounts;
    const text = (result.content as { text: string }[])[0]!.text;
    expect(text.split("\n").filter((l) => l.includes(accounts[0]!.bank_account_id))).toHaveLength(1);
  });

  test("missing _meta fields: -32602 with HTTP 400; a forgotten _meta with the modern header too", async () => {
    const { t, w } = setup();
    for (const meta of [
      null,
      { "io.modelcontextprotocol/clientCapabilities": {} },
      { "io.modelcontextprotocol/protocolVersion": V },
    ]) {
      const r = await modern(t, w.token, "server/discover", {}, { meta });
      expect({ status: r.status, code: r.body.error?.code }).toEqual({ status: 400, code: -32602 });
      expect(r.body.id).toBeNumber();
    }
    // clientInfo is optional.
    const ok = await modern(
      t,
      w.token,
      "tools/list",
      {},
      { meta: { ...META, "io.modelcontextprotocol/clientInfo": undefined } },
    );
    expect(ok.status).toBe(200);
  });

  test("routing headers that disagree with the body: -32020 (before the version is looked at)", async () => {
    const { t, w } = setup();
    const cases: [string, Record<string, unknown>, Record<string, string | null>][] = [
      ["tools/list", {}, { "mcp-method": "tools/call" }],
      ["tools/list", {}, { "mcp-method": null }],
      ["tools/list", {}, { "mcp-protocol-version": "2025-11-25" }],
      ["tools/call", { name: "get_balance", arguments: {} }, { "mcp-name": "list_companies" }],
      ["tools/call", { name: "get_balance", arguments: {} }, { "mcp-name": null }],
    ];
    for (const [method, params, headers] of cases) {
      const r = await modern(t, w.token, method, params, { headers });
      expect({ method, headers, status: r.status, code: r.body.error?.code }).toEqual({
        method,
        headers,
        status: 400,
        code: -32020,
      });
    }
    // A Base64-wrapped Mcp-Name is decoded before comparing.
    const wrapped = `=?base64?${Buffer.from("list_companies").toString("base64")}?=`;
    const ok = await modern(
      t,
      w.token,
      "tools/call",
      { name: "list_companies", arguments: {} },
      { headers: { "mcp-name": wrapped } },
    );
    expect(ok.status).toBe(200);
    // The same body version as the header, but not one svc speaks: -32022 with the supported list.
    const bad = await modern(
      t,
      w.token,
      "tools/list",
      {},
      {
        headers: { "mcp-protocol-version": "2099-01-01" },
        meta: { ...META, "io.modelcontextprotocol/protocolVersion": "2099-01-01" },
      },
    );
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({
      code: -32022,
      data: { supported: ["2026-07-28", "2025-11-25"], requested: "2099-01-01" },
    });
  });

  test("unknown and removed methods: 404 -32601 with the request's id; never the REST envelope", async () => {
    const { t, w } = setup();
    for (const method of [
      "initialize",
      "ping",
      "logging/setLevel",
      "resources/subscribe",
      "prompts/list",
      "unknown/method",
    ]) {
      const r = await modern(t, w.token, method);
      expect({ method, status: r.status, code: r.body.error?.code, id: typeof r.body.id }).toEqual({
        method,
        status: 404,
        code: -32601,
        id: "number",
      });
      expect(r.body).not.toHaveProperty("error.details");
    }
    const unknownTool = await modern(t, w.token, "tools/call", { name: "pay_invoice", arguments: {} });
    expect(unknownTool.status).toBe(200);
    expect(unknownTool.body.error?.code).toBe(-32602);
  });

  test("bad JSON with the modern header: -32700 with HTTP 400; a notification: 202", async () => {
    const { t, w } = setup();
    const res = await t.request("POST", "/api/v1/mcp", {
      token: w.token,
      body: "{nope",
      headers: { "mcp-protocol-version": V, "mcp-method": "tools/list" },
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as RpcResponse).error?.code).toBe(-32700);
    const note = await post(
      t,
      w.token,
      { jsonrpc: "2.0", method: "notifications/cancelled", params: { _meta: META } },
      { "mcp-protocol-version": V, "mcp-method": "notifications/cancelled" },
    );
    expect(note.status).toBe(202);
  });

  test("token checks, Origin and rate limits come first, as for sessions; every call is audited with its revision", async () => {
    const { t, w } = setup();
    const anonymous = await t.request("POST", "/api/v1/mcp", {
      body: { jsonrpc: "2.0", id: 1, method: "tools/list", params: { _meta: META } },
      headers: { "mcp-protocol-version": V, "mcp-method": "tools/list" },
    });
    expect(anonymous.status).toBe(401);
    const foreign = await modern(
      t,
      w.token,
      "tools/list",
      {},
      { headers: { origin: "https://evil.example" } },
    );
    expect(foreign.status).toBe(403);
    await modern(t, w.token, "tools/call", { name: "list_companies", arguments: {} });
    await t.services.agentAudit.flush();
    const rows = t.db
      .query<{ action: string; mcp_session_id: string | null; protocol_revision: string | null }, []>(
        "SELECT action, mcp_session_id, protocol_revision FROM audit_log WHERE action LIKE 'mcp.%' ORDER BY id",
      )
      .all();
    expect(rows.at(-1)).toEqual({ action: "mcp.list_companies", mcp_session_id: null, protocol_revision: V });
  });
});

describe("what covers both revisions", () => {
  test("the 16 KB body limit (413) and the token's rate limit (429) apply to stateless requests too", async () => {
    const t = makeTestApp();
    const w = t.fixtures.world({ purpose: "mcp" });
    const big = await modern(t, w.token, "tools/call", {
      name: "list_companies",
      arguments: { pad: "x".repeat(17_000) },
    });
    expect(big.status).toBe(413);
    const company = t.fixtures.company("ООО Лимит", "7707083893");
    const limited = t.fixtures.token(company.company_id, { purpose: "mcp", rate_limit_per_minute: 2 });
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) statuses.push((await modern(t, limited.token, "tools/list")).status);
    expect(statuses).toEqual([200, 200, 429]);
  });

  test("a paging cursor is good on another process of the same database, and only for its token and account", async () => {
    const dbPath = join(tempDir(), "svc.db");
    const a = makeTestApp({}, "2026-11-20T09:00:00Z", { dbPath });
    const w = a.fixtures.world({ purpose: "mcp", ops_per_day: 20 });
    const b = makeTestApp({}, "2026-11-20T09:00:00Z", { dbPath });
    const args = {
      bank_account_id: w.account.bank_account_id,
      date_from: "2026-10-01",
      date_to: "2026-10-31",
      limit: 5,
    };
    await readyStatement(a, w.account.bank_account_id, "2026-10-01", "2026-10-31");
    const first = await modern(a, w.token, "tools/call", { name: "search_operations", arguments: args });
    const cursor = (first.body.result!.structuredContent as { next_cursor: string }).next_cursor;
    expect(cursor).toBeString();
    const next = await modern(b, w.token, "tools/call", {
      name: "search_operations",
      arguments: { ...args, cursor },
    });
    expect((next.body.result as { isError: boolean }).isError).toBe(false);
    // Another token of the same company, allowed on the same account, cannot use it.
    const other = a.fixtures.token(w.company.company_id, {
      purpose: "mcp",
      accounts: [{ bank_account_id: w.account.bank_account_id, allow_read_statements: true }],
    });
    const foreign = await modern(a, other.token, "tools/call", {
      name: "search_operations",
      arguments: { ...args, cursor },
    });
    expect((foreign.body.result as { isError: boolean }).isError).toBe(true);
    expect(JSON.stringify(foreign.body.result)).toContain("validation_error");
  });
});

describe("sessions keep working beside it (2025-11-25)", () => {
  test("initialize, then tools/list with the session, as before; audit says 2025-11-25", async () => {
    const { t, w } = setup();
    const session = await initSession(t, w.token, "2025-11-25");
    const list = await rpc(t, w.token, session, "tools/list", undefined, {
      "mcp-protocol-version": "2025-11-25",
    });
    expect(list.result).not.toHaveProperty("resultType");
    expect(list.result).not.toHaveProperty("ttlMs");
    const noSession = await post(t, w.token, { jsonrpc: "2.0", id: 5, method: "tools/list" });
    expect(((await noSession.json()) as RpcResponse).error?.code).toBe(-32600);
    await t.services.agentAudit.flush();
    const last = t.db
      .query<{ protocol_revision: string | null }, []>(
        "SELECT protocol_revision FROM audit_log WHERE action = 'mcp.tools_list' ORDER BY id DESC LIMIT 1",
      )
      .get();
    expect(last?.protocol_revision).toBe("2025-11-25");
  });
});
