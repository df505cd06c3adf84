// lanes: sqlite postgres
// A database that does not answer in time (StoreUnavailable: PostgreSQL's statement timeout or a
// lost server) past the token checks: 503 service_unavailable with Retry-After, on REST and on the
// agent endpoint alike, the cause logged; never 500 nor a JSON-RPC internal error.
import { describe, expect, test } from "bun:test";
import { StoreUnavailable } from "../../src/db/sql-port";
import { json, makeTestApp } from "../helpers/app";

const unavailable = () => {
  throw new StoreUnavailable("PostgreSQL postgres://svc@db:5432/svc: no answer within 5000 ms");
};

async function expectUnavailable(res: Response) {
  expect(res.status).toBe(503);
  expect(res.headers.get("retry-after")).toBe("1");
  const body = await json<{ error: { code: string; message: string } }>(res);
  expect(body.error).toEqual({ code: "service_unavailable", message: "База данных недоступна" });
}

describe("the database not answering", () => {
  test("REST: 503 service_unavailable, the cause in the log", async () => {
    const t = makeTestApp();
    const w = t.fixtures.world();
    t.services.statementRepo.list = unavailable;
    await expectUnavailable(await t.request("GET", "/api/v1/integration/statements", { token: w.token }));
    const logged = t.logs.find((l) => l.includes('"msg":"database unavailable"'));
    expect(logged).toContain("no answer within 5000 ms");
    expect(t.logs.some((l) => l.includes("unhandled error"))).toBe(false);
  });

  test("agent endpoint: 503 service_unavailable, not a JSON-RPC error", async () => {
    const t = makeTestApp();
    const w = t.fixtures.world({ purpose: "mcp" });
    const init = await t.request("POST", "/api/v1/mcp", {
      token: w.token,
      body: {
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "1" } },
      },
    });
    const session = init.headers.get("mcp-session-id")!;
    t.services.mcp.tools.deps.read.balance = unavailable;
    const res = await t.request("POST", "/api/v1/mcp", {
      token: w.token,
      headers: { "mcp-session-id": session },
      body: {
        jsonrpc: "2.0",
        id: 2,
        method: "tools/call",
        params: { name: "get_balance", arguments: { bank_account_id: w.account.bank_account_id } },
      },
    });
    await expectUnavailable(res);
    expect(t.logs.some((l) => l.includes('"msg":"database unavailable"'))).toBe(true);
  });
});
