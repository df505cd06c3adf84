// lanes: sqlite postgres
// Every agent request is audited before any data goes out; a failing audit write means no data.
import { describe, expect, test } from "bun:test";
import { makeTestApp, type TestApp } from "../helpers/app";
import { expectError } from "../helpers/envelope";
import { callTool, initSession, MCP, post, readyStatement, rpc } from "./helpers";

describe("audit entries", () => {
  test("initialize, notification, tools/list, each tool, ping, unknown tool and terminate", async () => {
    const t = makeTestApp();
    const w = t.fixtures.world({ purpose: "mcp" });
    const accountId = w.account.bank_account_id;
    const statementId = await readyStatement(t, accountId, "2026-11-01", "2026-11-10");
    const session = await initSession(t, w.token);
    const note = await post(
      t,
      w.token,
      { jsonrpc: "2.0", method: "notifications/initialized" },
      { "mcp-session-id": session },
    );
    expect(note.status).toBe(202);
    await rpc(t, w.token, session, "tools/list");
    await callTool(t, w.token, session, "list_companies");
    await callTool(t, w.token, session, "list_bank_accounts");
    await callTool(t, w.token, session, "get_balance", { bank_account_id: accountId });
    await callTool(t, w.token, session, "list_statements", { bank_account_id: accountId });
    await callTool(t, w.token, session, "get_statement", { statement_id: statementId });
    await callTool(t, w.token, session, "search_operations", {
      bank_account_id: accountId,
      date_from: "2026-11-01",
      date_to: "2026-11-10",
      query: "оплата",
    });
    await callTool(t, w.token, session, "get_statement", { statement_id: crypto.randomUUID() });
    await rpc(t, w.token, session, "tools/call", { name: "send_payment", arguments: { amount: 1 } });
    await rpc(t, w.token, session, "ping");
    expect(
      (await t.request("DELETE", MCP, { token: w.token, headers: { "mcp-session-id": session } })).status,
    ).toBe(204);

    const entries = t.services.audit
      .query({ limit: 100, apiTokenId: w.tokenId })
      .filter((e) => e.action.startsWith("mcp."))
      .reverse();
    expect(entries.map((e) => [e.action, e.tool, e.outcome])).toEqual([
      ["mcp.initialize", null, "ok"],
      ["mcp.notification.initialized", null, "ok"],
      ["mcp.tools_list", null, "ok"],
      ["mcp.list_companies", "list_companies", "ok"],
      ["mcp.list_bank_accounts", "list_bank_accounts", "ok"],
      ["mcp.get_balance", "get_balance", "ok"],
      ["mcp.list_statements", "list_statements", "ok"],
      ["mcp.get_statement", "get_statement", "ok"],
      ["mcp.search_operations", "search_operations", "ok"],
      ["mcp.get_statement", "get_statement", "not_found"],
      ["mcp.tools_call", "send_payment", "-32601"],
      ["mcp.ping", null, "ok"],
      ["mcp.session.terminate", null, "ok"],
    ]);
    for (const e of entries) {
      expect(e.api_token_id).toBe(w.tokenId);
      expect(e.mcp_session_id).toBe(session);
      expect(e.transport).toBe("http");
      expect(e.actor).toBe("token");
      expect(e.ip).toBe("127.0.0.1");
      expect(e.request_id).toBeTruthy();
      expect(typeof e.duration_ms).toBe("number");
      expect(Number.isNaN(Date.parse(e.at))).toBe(false);
    }
    const search = entries.find((e) => e.action === "mcp.search_operations");
    expect(search?.arguments).toMatchObject({ bank_account_id: accountId, query: "оплата" });
    const unknown = entries.find((e) => e.action === "mcp.tools_call");
    expect(unknown?.arguments).toEqual({ amount: 1 });
  });

  test("protocol errors are audited with their JSON-RPC code", async () => {
    const t = makeTestApp();
    const w = t.fixtures.world({ purpose: "mcp" });
    await rpc(t, w.token, null, "tools/list");
    await post(t, w.token, "{nope");
    const session = await initSession(t, w.token);
    await rpc(t, w.token, session, "resources/list");
    await rpc(t, w.token, session, "tools/call", { arguments: {} });
    const entries = t.services.audit.query({ limit: 20, apiTokenId: w.tokenId }).reverse();
    expect(
      entries
        .filter((e) => e.action !== "mcp.initialize")
        .map((e) => [e.action, e.outcome, e.mcp_session_id]),
    ).toEqual([
      ["mcp.tools_list", "-32600", null],
      ["mcp.request", "-32700", null],
      ["mcp.request", "-32601", session],
      ["mcp.tools_call", "-32602", session],
    ]);
  });

  test("large arguments are cut to 2 KB in the entry", async () => {
    const t = makeTestApp();
    const w = t.fixtures.world({ purpose: "mcp" });
    const session = await initSession(t, w.token);
    const r = await callTool(t, w.token, session, "list_companies", { junk: "x".repeat(10_000) });
    expect(r.isError).toBe(true);
    const [entry] = t.services.audit.query({ limit: 1, action: "mcp.list_companies" });
    expect(entry?.outcome).toBe("validation_error");
    expect(Buffer.byteLength(JSON.stringify(entry?.arguments))).toBeLessThanOrEqual(2048 + 64);
  });
});

/** Every audit write fails from now on, one entry or a batch, as a failing disk would make them. */
function breakAudit(t: TestApp): void {
  const fail = () => {
    throw new Error("disk I/O error");
  };
  t.services.audit.write = fail;
  t.services.audit.writeAll = fail;
}

describe("audit cannot be skipped", () => {
  function brokenAudit() {
    const t = makeTestApp();
    const w = t.fixtures.world({ purpose: "mcp" });
    return { t, w };
  }

  test("a failing audit write is 503 service_unavailable instead of data, and initialize leaves no usable session", async () => {
    const { t, w } = brokenAudit();
    const session = await initSession(t, w.token);
    breakAudit(t);
    const call = await post(
      t,
      w.token,
      { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "list_companies", arguments: {} } },
      { "mcp-session-id": session },
    );
    const text = await call.clone().text();
    expect(text).not.toContain(w.company.name);
    await expectError(call, 503, "service_unavailable");
    for (const method of ["tools/list", "ping"]) {
      await expectError(
        await post(t, w.token, { jsonrpc: "2.0", id: 2, method }, { "mcp-session-id": session }),
        503,
        "service_unavailable",
      );
    }

    const init = await post(t, w.token, { jsonrpc: "2.0", id: 5, method: "initialize", params: {} });
    expect(init.headers.get("mcp-session-id")).toBeNull();
    await expectError(init, 503, "service_unavailable");
    const rows = t.db.query<{ n: number }, []>("SELECT COUNT(*) AS n FROM mcp_sessions").get();
    expect(rows?.n).toBe(1); // only the session made before the audit broke
  });

  test("a notification or DELETE whose audit fails is 503", async () => {
    const { t, w } = brokenAudit();
    const session = await initSession(t, w.token);
    breakAudit(t);
    await expectError(
      await post(
        t,
        w.token,
        { jsonrpc: "2.0", method: "notifications/initialized" },
        { "mcp-session-id": session },
      ),
      503,
      "service_unavailable",
    );
    await expectError(
      await t.request("DELETE", MCP, { token: w.token, headers: { "mcp-session-id": session } }),
      503,
      "service_unavailable",
    );
  });
});
