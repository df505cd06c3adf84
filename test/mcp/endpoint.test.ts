// lanes: sqlite postgres
// The agent endpoint at the protocol level: every JSON-RPC error code and every HTTP status.
import { describe, expect, test } from "bun:test";
import { makeTestApp } from "../helpers/app";
import { expectError } from "../helpers/envelope";
import { callTool, initSession, MCP, post, rpc, TOOL_NAMES } from "./helpers";

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

function setup(env: Record<string, string> = {}) {
  const t = makeTestApp(env);
  const w = t.fixtures.world({ purpose: "mcp" });
  return { t, w };
}

async function rpcBody(res: Response) {
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toContain("application/json");
  return (await res.json()) as {
    id: unknown;
    result?: Record<string, unknown>;
    error?: { code: number; message: string };
  };
}

describe("initialize", () => {
  test("creates a UUIDv4 session, returns it in Mcp-Session-Id, and the result shape of decisions §7", async () => {
    const { t, w } = setup();
    const res = await post(t, w.token, {
      jsonrpc: "2.0",
      id: "init-1",
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "x", version: "1" } },
    });
    const body = await rpcBody(res);
    expect(res.headers.get("mcp-session-id")).toMatch(UUID_V4);
    expect(res.headers.get("x-request-id")).toBeTruthy();
    expect(res.headers.get("x-ratelimit-limit")).toBe("300");
    expect(body.id).toBe("init-1");
    expect(body.result).toMatchObject({
      protocolVersion: "2025-06-18",
      capabilities: { tools: { listChanged: false } },
      serverInfo: { name: "svc" },
    });
    expect(typeof body.result?.instructions).toBe("string");
  });

  test("each initialize creates a new session", async () => {
    const { t, w } = setup();
    expect(await initSession(t, w.token)).not.toBe(await initSession(t, w.token));
  });

  test.each([
    ["2025-11-25", "2025-11-25"],
    ["2025-06-18", "2025-06-18"],
    ["2025-03-26", "2025-03-26"],
    ["2024-11-05", "2025-11-25"],
    ["1999-01-01", "2025-11-25"],
  ])("requested %s is answered with %s", async (requested, answered) => {
    const { t, w } = setup();
    const body = await rpcBody(
      await post(t, w.token, {
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: requested },
      }),
    );
    expect(body.result?.protocolVersion).toBe(answered);
  });

  test("without params the newest version is answered", async () => {
    const { t, w } = setup();
    const body = await rpcBody(await post(t, w.token, { jsonrpc: "2.0", id: 1, method: "initialize" }));
    expect(body.result?.protocolVersion).toBe("2025-11-25");
  });
});

describe("JSON-RPC errors (HTTP 200)", () => {
  test("-32700 for a body that is not JSON, with or without a session", async () => {
    const { t, w } = setup();
    const session = await initSession(t, w.token);
    const variants: Record<string, string>[] = [{}, { "mcp-session-id": session }];
    for (const headers of variants) {
      const body = await rpcBody(await post(t, w.token, '{"jsonrpc": "2.0", "id": 1, "method": ', headers));
      expect(body.id).toBeNull();
      expect(body.error?.code).toBe(-32700);
    }
  });

  test("-32600 for a missing or wrong jsonrpc member, a bad id or method, and a batch", async () => {
    const { t, w } = setup();
    const session = await initSession(t, w.token);
    const cases: unknown[] = [
      { id: 1, method: "ping" },
      { jsonrpc: "1.0", id: 1, method: "ping" },
      { jsonrpc: 2, id: 1, method: "ping" },
      { jsonrpc: "2.0", id: { x: 1 }, method: "ping" },
      { jsonrpc: "2.0", id: 1 },
      { jsonrpc: "2.0", id: 1, method: 42 },
      [{ jsonrpc: "2.0", id: 1, method: "ping" }],
      [],
      '"ping"', // a JSON string (the helper sends strings as raw body text)
      "42",
    ];
    for (const message of cases) {
      const body = await rpcBody(await post(t, w.token, message, { "mcp-session-id": session }));
      expect({ message, code: body.error?.code }).toEqual({ message, code: -32600 });
    }
  });

  test("-32700 for an empty body", async () => {
    const { t, w } = setup();
    const res = await t.app.handle(
      new Request(`http://localhost${MCP}`, {
        method: "POST",
        headers: { authorization: `Bearer ${w.token}`, "content-type": "application/json" },
      }),
    );
    expect((await rpcBody(res)).error?.code).toBe(-32700);
  });

  test("-32600 keeps the request id when it is usable", async () => {
    const { t, w } = setup();
    const body = await rpcBody(await post(t, w.token, { jsonrpc: "1.0", id: 7, method: "ping" }));
    expect(body).toMatchObject({ id: 7, error: { code: -32600 } });
  });

  test("-32600 without Mcp-Session-Id on anything but initialize", async () => {
    const { t, w } = setup();
    for (const method of ["ping", "tools/list", "tools/call", "unknown/method"]) {
      const body = await rpc(
        t,
        w.token,
        null,
        method,
        method === "tools/call" ? { name: "list_companies" } : undefined,
      );
      expect(body.error?.code).toBe(-32600);
      expect(body.error?.message).toMatch(/Mcp-Session-Id/);
    }
  });

  test("-32600 for an unknown or malformed session id", async () => {
    const { t, w } = setup();
    for (const session of [crypto.randomUUID(), "not-a-uuid"]) {
      const body = await rpc(t, w.token, session, "ping");
      expect(body.error?.code).toBe(-32600);
      expect(body.error?.message).toMatch(/not found/);
    }
  });

  test("-32600 for another token's session", async () => {
    const { t, w } = setup();
    const other = t.fixtures.token(w.company.company_id, {
      purpose: "mcp",
      accounts: [{ bank_account_id: w.account.bank_account_id, allow_read_statements: true }],
    });
    const session = await initSession(t, other.token);
    const body = await rpc(t, w.token, session, "tools/list");
    expect(body.error?.code).toBe(-32600);
    expect(body.result).toBeUndefined();
  });

  test("-32601 for unknown methods", async () => {
    const { t, w } = setup();
    const session = await initSession(t, w.token);
    for (const method of ["resources/list", "prompts/list", "tools/delete", "logging/setLevel"]) {
      const body = await rpc(t, w.token, session, method, {});
      expect({ method, code: body.error?.code }).toEqual({ method, code: -32601 });
    }
  });

  test("-32601 for unknown tool names, write-sounding ones included", async () => {
    const { t, w } = setup();
    const session = await initSession(t, w.token);
    for (const name of [
      "send_payment",
      "order_statement",
      "refresh_balance",
      "delete_statement",
      "LIST_COMPANIES",
    ]) {
      const body = await rpc(t, w.token, session, "tools/call", { name, arguments: {} });
      expect({ name, code: body.error?.code }).toEqual({ name, code: -32601 });
      expect(body.result).toBeUndefined();
    }
  });

  test("-32602 for a malformed tools/call params object", async () => {
    const { t, w } = setup();
    const session = await initSession(t, w.token);
    const cases: unknown[] = [
      undefined,
      {},
      { arguments: {} },
      { name: 42 },
      { name: "" },
      { name: "list_companies", arguments: [] },
      { name: "list_companies", arguments: "x" },
      { name: "list_companies", arguments: 1 },
      ["list_companies"],
    ];
    for (const params of cases) {
      const body = await rpc(t, w.token, session, "tools/call", params);
      expect({ params, code: body.error?.code }).toEqual({ params, code: -32602 });
    }
  });

  test("bad tool arguments are a tool-level validation_error, not -32602", async () => {
    const { t, w } = setup();
    const session = await initSession(t, w.token);
    for (const args of [{ extra: 1 }, { bank_account_id: "nope" }]) {
      const r = await callTool(t, w.token, session, args.extra ? "list_companies" : "get_balance", args);
      expect(r.isError).toBe(true);
      expect(r.structuredContent).toMatchObject({ error: { code: "validation_error" } });
      expect(r._meta.notice).toBeTruthy();
    }
  });
});

describe("requests that succeed", () => {
  test("a notification gets 202 with an empty body", async () => {
    const { t, w } = setup();
    const session = await initSession(t, w.token);
    for (const method of ["notifications/initialized", "notifications/cancelled", "notifications/whatever"]) {
      const res = await post(t, w.token, { jsonrpc: "2.0", method }, { "mcp-session-id": session });
      expect(res.status).toBe(202);
      expect(await res.text()).toBe("");
      expect(res.headers.get("x-request-id")).toBeTruthy();
    }
  });

  test("ping answers {}", async () => {
    const { t, w } = setup();
    const session = await initSession(t, w.token);
    expect((await rpc(t, w.token, session, "ping")).result).toEqual({});
  });

  test("tools/list gives the six tools", async () => {
    const { t, w } = setup();
    const session = await initSession(t, w.token);
    const tools = (await rpc(t, w.token, session, "tools/list")).result?.tools as { name: string }[];
    expect(tools.map((x) => x.name).sort()).toEqual([...TOOL_NAMES].sort());
  });

  test("a supported MCP-Protocol-Version header passes", async () => {
    const { t, w } = setup();
    const session = await initSession(t, w.token);
    for (const v of ["2025-11-25", "2025-06-18", "2025-03-26"]) {
      const body = await rpc(t, w.token, session, "ping", undefined, { "mcp-protocol-version": v });
      expect(body.result).toEqual({});
    }
  });
});

describe("HTTP statuses", () => {
  test("401 invalid_token_format without Authorization or with a wrong prefix", async () => {
    const { t } = setup();
    await expectError(
      await t.request("POST", MCP, { body: { jsonrpc: "2.0", id: 1, method: "ping" } }),
      401,
      "invalid_token_format",
    );
    await expectError(
      await post(t, "abc_live_123", { jsonrpc: "2.0", id: 1, method: "ping" }),
      401,
      "invalid_token_format",
    );
    await expectError(await t.request("DELETE", MCP, {}), 401, "invalid_token_format");
  });

  test("401 invalid_token for an unknown or revoked token", async () => {
    const { t, w } = setup();
    const unknown = `svc_test_${"A".repeat(40)}`;
    await expectError(
      await post(t, unknown, { jsonrpc: "2.0", id: 1, method: "initialize" }),
      401,
      "invalid_token",
    );
    t.services.admin.tokens.revoke(w.tokenId);
    await expectError(
      await post(t, w.token, { jsonrpc: "2.0", id: 1, method: "initialize" }),
      401,
      "invalid_token",
    );
  });

  test("403 forbidden_purpose for an integration token, on POST and DELETE", async () => {
    const { t } = setup();
    const integration = t.fixtures.world({ purpose: "integration" });
    await expectError(
      await post(t, integration.token, { jsonrpc: "2.0", id: 1, method: "initialize" }),
      403,
      "forbidden_purpose",
    );
    await expectError(
      await t.request("DELETE", MCP, {
        token: integration.token,
        headers: { "mcp-session-id": crypto.randomUUID() },
      }),
      403,
      "forbidden_purpose",
    );
  });

  test("403 forbidden_scope without scope_read_statements", async () => {
    const { t, w } = setup();
    const noScope = t.fixtures.token(w.company.company_id, { purpose: "mcp", read: false });
    await expectError(
      await post(t, noScope.token, { jsonrpc: "2.0", id: 1, method: "initialize" }),
      403,
      "forbidden_scope",
    );
  });

  test("403 forbidden_ip outside the token's allowed_ips", async () => {
    const { t, w } = setup();
    const pinned = t.fixtures.token(w.company.company_id, { purpose: "mcp", allowed_ips: ["10.0.0.0/8"] });
    await expectError(
      await post(t, pinned.token, { jsonrpc: "2.0", id: 1, method: "initialize" }),
      403,
      "forbidden_ip",
    );
    t.clientIp.value = "10.1.2.3";
    expect((await post(t, pinned.token, { jsonrpc: "2.0", id: 1, method: "initialize" })).status).toBe(200);
  });

  test("403 forbidden_origin: empty MCP_ALLOWED_ORIGINS means localhost only; no Origin passes", async () => {
    const { t, w } = setup();
    const init = { jsonrpc: "2.0", id: 1, method: "initialize" };
    for (const origin of ["https://evil.example", "http://localhost.evil.example", "null", "file://x", ""]) {
      await expectError(await post(t, w.token, init, { origin }), 403, "forbidden_origin");
    }
    for (const origin of [
      "http://localhost",
      "https://localhost:3000",
      "http://127.0.0.1:8080",
      "http://[::1]:9",
    ]) {
      expect((await post(t, w.token, init, { origin })).status).toBe(200);
    }
    expect((await post(t, w.token, init)).status).toBe(200);
    await expectError(
      await t.request("DELETE", MCP, {
        token: w.token,
        headers: { origin: "https://evil.example", "mcp-session-id": crypto.randomUUID() },
      }),
      403,
      "forbidden_origin",
    );
  });

  test("403 forbidden_origin against a configured MCP_ALLOWED_ORIGINS", async () => {
    const { t, w } = setup({ MCP_ALLOWED_ORIGINS: "https://agent.example.com,http://10.0.0.5:8080" });
    const init = { jsonrpc: "2.0", id: 1, method: "initialize" };
    expect((await post(t, w.token, init, { origin: "https://agent.example.com" })).status).toBe(200);
    expect((await post(t, w.token, init, { origin: "http://10.0.0.5:8080" })).status).toBe(200);
    await expectError(
      await post(t, w.token, init, { origin: "http://agent.example.com" }),
      403,
      "forbidden_origin",
    );
    await expectError(
      await post(t, w.token, init, { origin: "http://localhost:3000" }),
      403,
      "forbidden_origin",
    );
  });

  test("Origin is checked after the token and IP, before purpose", async () => {
    const { t } = setup();
    const integration = t.fixtures.world({ purpose: "integration" });
    const init = { jsonrpc: "2.0", id: 1, method: "initialize" };
    const evil = { origin: "https://evil.example" };
    await expectError(
      await t.request("POST", MCP, { body: init, headers: evil }),
      401,
      "invalid_token_format",
    );
    await expectError(await post(t, `svc_test_${"B".repeat(40)}`, init, evil), 401, "invalid_token");
    await expectError(await post(t, integration.token, init, evil), 403, "forbidden_origin");
  });

  test("405 for GET (and other methods) with Allow: POST, DELETE", async () => {
    const { t, w } = setup();
    for (const method of ["GET", "PUT", "PATCH"]) {
      const res = await t.request(method, MCP, { token: w.token });
      expect(res.headers.get("allow")).toBe("POST, DELETE");
      await expectError(res, 405, "method_not_allowed");
    }
  });

  test("413 for a body over 16 KB, before anything else", async () => {
    const { t, w } = setup();
    const big = { jsonrpc: "2.0", id: 1, method: "initialize", params: { pad: "x".repeat(17 * 1024) } };
    await expectError(await post(t, w.token, big), 413, "payload_too_large");
    // Just under the limit is fine.
    const fits = { jsonrpc: "2.0", id: 1, method: "initialize", params: { pad: "x".repeat(15 * 1024) } };
    expect((await post(t, w.token, fits)).status).toBe(200);
  });

  test("429 with the rate-limit headers once the token's limit is used up", async () => {
    const { t, w } = setup();
    const limited = t.fixtures.token(w.company.company_id, { purpose: "mcp", rate_limit_per_minute: 3 });
    const session = await initSession(t, limited.token);
    expect((await rpc(t, limited.token, session, "ping")).result).toEqual({});
    expect((await rpc(t, limited.token, session, "ping")).result).toEqual({});
    const res = await post(
      t,
      limited.token,
      { jsonrpc: "2.0", id: 9, method: "ping" },
      { "mcp-session-id": session },
    );
    expect(res.headers.get("retry-after")).toBeTruthy();
    expect(res.headers.get("x-ratelimit-limit")).toBe("3");
    expect(res.headers.get("x-ratelimit-remaining")).toBe("0");
    expect(res.headers.get("x-ratelimit-reset")).toBeTruthy();
    const details = await expectError(res, 429, "rate_limited");
    expect(details.retry_after_seconds).toBeGreaterThan(0);
    // The next window lets it through again.
    t.clock.advance(60_000);
    expect((await rpc(t, limited.token, session, "ping")).result).toEqual({});
  });

  test("the default limit of an mcp token is 300 per minute", async () => {
    const { t, w } = setup();
    const res = await post(t, w.token, { jsonrpc: "2.0", id: 1, method: "initialize" });
    expect(res.headers.get("x-ratelimit-limit")).toBe("300");
  });

  test("400 validation_error for an unsupported MCP-Protocol-Version header", async () => {
    const { t, w } = setup();
    const session = await initSession(t, w.token);
    for (const v of ["2024-11-05", "garbage", ""]) {
      const details = await expectError(
        await post(
          t,
          w.token,
          { jsonrpc: "2.0", id: 1, method: "ping" },
          { "mcp-session-id": session, "mcp-protocol-version": v },
        ),
        400,
        "validation_error",
      );
      expect(details.field).toBe("MCP-Protocol-Version");
    }
    await expectError(
      await post(
        t,
        w.token,
        { jsonrpc: "2.0", id: 1, method: "initialize" },
        { "mcp-protocol-version": "2024-11-05" },
      ),
      400,
      "validation_error",
    );
  });

  test("DELETE: 204, idempotent, 400 without Mcp-Session-Id", async () => {
    const { t, w } = setup();
    const session = await initSession(t, w.token);
    for (let i = 0; i < 2; i++) {
      const res = await t.request("DELETE", MCP, { token: w.token, headers: { "mcp-session-id": session } });
      expect(res.status).toBe(204);
      expect(await res.text()).toBe("");
    }
    expect(
      (await t.request("DELETE", MCP, { token: w.token, headers: { "mcp-session-id": crypto.randomUUID() } }))
        .status,
    ).toBe(204);
    expect(
      (await t.request("DELETE", MCP, { token: w.token, headers: { "mcp-session-id": "junk" } })).status,
    ).toBe(204);
    await expectError(await t.request("DELETE", MCP, { token: w.token }), 400, "validation_error");
  });
});
