// lanes: sqlite postgres
// Session rules: TTL from config on the injected clock, extension (cheap), token binding,
// DELETE, the sweeper, and fail-closed 503 when the store is unreachable.
import { describe, expect, test } from "bun:test";
import { makeTestApp } from "../helpers/app";
import { expectError } from "../helpers/envelope";
import { FailingSessionStore, initSession, MCP, makeTestAppWith, post, rpc } from "./helpers";

function setup(ttlSeconds = 600) {
  const t = makeTestApp({ SVC_SESSION_TTL_SECONDS: String(ttlSeconds) });
  const w = t.fixtures.world({ purpose: "mcp" });
  return { t, w };
}

function countSessions(t: ReturnType<typeof makeTestApp>): number {
  return t.db.query<{ n: number }, []>("SELECT COUNT(*) AS n FROM mcp_sessions").get()!.n;
}

describe("expiry and extension", () => {
  test("a session expires after the TTL: -32600 saying it expired", async () => {
    const { t, w } = setup(600);
    const session = await initSession(t, w.token);
    t.clock.advance(599_000);
    expect((await rpc(t, w.token, session, "ping")).result).toEqual({});
    t.clock.advance(600_000);
    const body = await rpc(t, w.token, session, "ping");
    expect(body.error?.code).toBe(-32600);
    expect(body.error?.message).toMatch(/expired/);
    // A new initialize gives a working session again.
    const fresh = await initSession(t, w.token);
    expect((await rpc(t, w.token, fresh, "ping")).result).toEqual({});
  });

  test("each valid request extends the TTL", async () => {
    const { t, w } = setup(600);
    const session = await initSession(t, w.token);
    for (let i = 0; i < 5; i++) {
      t.clock.advance(500_000);
      expect((await rpc(t, w.token, session, "ping")).result).toEqual({});
    }
    // 2500 s after initialize, with a 600 s TTL: alive because every request extended it.
    const stored = await t.services.mcp.sessionStore.get(session);
    expect(stored?.expiresAtMs).toBe(t.clock.now().getTime() + 600_000);
  });

  test("the expiry is not rewritten when the extension would be tiny (under min(1% TTL, 60 s))", async () => {
    const { t, w } = setup(28_800);
    expect(t.services.mcp.sessions.extensionGranularityMs).toBe(60_000);
    const session = await initSession(t, w.token);
    const initial = (await t.services.mcp.sessionStore.get(session))!.expiresAtMs;
    t.clock.advance(30_000);
    await rpc(t, w.token, session, "ping");
    expect((await t.services.mcp.sessionStore.get(session))!.expiresAtMs).toBe(initial);
    t.clock.advance(30_000);
    await rpc(t, w.token, session, "ping");
    expect((await t.services.mcp.sessionStore.get(session))!.expiresAtMs).toBe(initial + 60_000);
  });

  test("the granularity is 1% of a short TTL", () => {
    const { t } = setup(600);
    expect(t.services.mcp.sessions.extensionGranularityMs).toBe(6_000);
  });

  test("a failed request (bad session) does not extend anything", async () => {
    const { t, w } = setup(600);
    const session = await initSession(t, w.token);
    const before = (await t.services.mcp.sessionStore.get(session))!.expiresAtMs;
    const other = t.fixtures.token(w.company.company_id, { purpose: "mcp" });
    t.clock.advance(100_000);
    expect((await rpc(t, other.token, session, "ping")).error?.code).toBe(-32600);
    expect((await t.services.mcp.sessionStore.get(session))!.expiresAtMs).toBe(before);
  });
});

describe("binding and termination", () => {
  test("another token's session is -32600; its DELETE is 204 and the session stays alive", async () => {
    const { t, w } = setup();
    const other = t.fixtures.token(w.company.company_id, { purpose: "mcp" });
    const session = await initSession(t, w.token);
    expect((await rpc(t, other.token, session, "ping")).error?.code).toBe(-32600);
    const res = await t.request("DELETE", MCP, {
      token: other.token,
      headers: { "mcp-session-id": session },
    });
    expect(res.status).toBe(204);
    expect((await rpc(t, w.token, session, "ping")).result).toEqual({});
  });

  test("DELETE then reuse: -32600 (not found)", async () => {
    const { t, w } = setup();
    const session = await initSession(t, w.token);
    expect((await rpc(t, w.token, session, "ping")).result).toEqual({});
    expect(
      (await t.request("DELETE", MCP, { token: w.token, headers: { "mcp-session-id": session } })).status,
    ).toBe(204);
    const body = await rpc(t, w.token, session, "tools/list");
    expect(body.error?.code).toBe(-32600);
    expect(body.error?.message).toMatch(/not found/);
    expect(countSessions(t)).toBe(0);
  });
});

describe("sweeper", () => {
  test("deletes expired rows and keeps live ones", async () => {
    const { t, w } = setup(600);
    const used = await initSession(t, w.token);
    await initSession(t, w.token);
    expect((await rpc(t, w.token, used, "ping")).result).toEqual({});
    t.clock.advance(400_000);
    const live = await initSession(t, w.token);
    expect(countSessions(t)).toBe(3);
    t.clock.advance(300_000);
    expect((await rpc(t, w.token, used, "ping")).error?.message).toMatch(/expired/);
    expect(await t.services.mcp.sweeper.sweep()).toBe(2);
    expect(countSessions(t)).toBe(1);
    expect((await rpc(t, w.token, live, "ping")).result).toEqual({});
    // Swept: gone, not merely expired.
    expect((await rpc(t, w.token, used, "ping")).error?.message).toMatch(/not found/);
  });

  test("is a worker with a name, start and stop", async () => {
    const { t } = setup();
    const sweeper = t.services.mcp.sweeper;
    expect(sweeper.name).toBe("mcp-session-sweeper");
    sweeper.start();
    await sweeper.stop();
  });
});

describe("session store unavailable: 503 service_unavailable (fail closed)", () => {
  test("initialize, any other method, and DELETE", async () => {
    const t = makeTestAppWith({ sessionStore: new FailingSessionStore() });
    const w = t.fixtures.world({ purpose: "mcp" });
    await expectError(
      await post(t, w.token, { jsonrpc: "2.0", id: 1, method: "initialize", params: {} }),
      503,
      "service_unavailable",
    );
    const id = crypto.randomUUID();
    for (const method of ["ping", "tools/list"]) {
      await expectError(
        await post(t, w.token, { jsonrpc: "2.0", id: 1, method }, { "mcp-session-id": id }),
        503,
        "service_unavailable",
      );
    }
    await expectError(
      await post(
        t,
        w.token,
        { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "list_companies" } },
        { "mcp-session-id": id },
      ),
      503,
      "service_unavailable",
    );
    await expectError(
      await t.request("DELETE", MCP, { token: w.token, headers: { "mcp-session-id": id } }),
      503,
      "service_unavailable",
    );
    // No tool ran: nothing audited as a tool call.
    expect(t.services.audit.query({ limit: 50, action: "mcp.list_companies" })).toEqual([]);
  });

  test("the sweeper survives a failing store", async () => {
    const t = makeTestAppWith({ sessionStore: new FailingSessionStore() });
    expect(await t.services.mcp.sweeper.sweep()).toBe(0);
  });
});
