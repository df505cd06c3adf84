// Tokens and accounts are cached in memory (sessions are read each time); a change made by
// another process (for example `svc admin token revoke` on the same database file) must still
// count from the next request on.
import { Database } from "bun:sqlite";
import { afterEach, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { makeTestApp, type TestApp } from "../helpers/app";
import { expectError } from "../helpers/envelope";
import { tempDir } from "../helpers/server";

const PATH = "/api/v1/integration/statements";
const open: { t: TestApp; other: Database }[] = [];
afterEach(() => {
  for (const { t, other } of open.splice(0)) {
    other.close();
    t.services.mcp.close();
    t.services.database.close();
  }
});

function setup() {
  const dbPath = join(tempDir(), "svc.db");
  const t = makeTestApp({}, "2026-11-20T09:00:00Z", { dbPath });
  const other = new Database(dbPath, { strict: true });
  other.exec("PRAGMA busy_timeout = 5000");
  open.push({ t, other });
  return { t, other };
}

describe("cached tokens and accounts", () => {
  test("a token revoked by another process fails from the next request on", async () => {
    const { t, other } = setup();
    const w = t.fixtures.world();
    expect((await t.request("GET", PATH, { token: w.token })).status).toBe(200);
    expect((await t.request("GET", PATH, { token: w.token })).status).toBe(200);
    other
      .query("UPDATE api_tokens SET revoked_at = ? WHERE id = ?")
      .run(t.clock.now().toISOString(), w.tokenId);
    await expectError(await t.request("GET", PATH, { token: w.token }), 401, "invalid_token");
  });

  test("a grant withdrawn by another process is refused from the next request on", async () => {
    const { t, other } = setup();
    const w = t.fixtures.world();
    const query = `${PATH}?bank_account_id=${w.account.bank_account_id}`;
    expect((await t.request("GET", query, { token: w.token })).status).toBe(200);
    other.query("UPDATE token_accounts SET allow_read_statements = 0 WHERE token_id = ?").run(w.tokenId);
    await expectError(await t.request("GET", query, { token: w.token }), 403, "forbidden_account");
  });

  test("an agent session ended by another instance on the same file is gone from the next request on", async () => {
    const { t, other } = setup();
    const w = t.fixtures.world({ purpose: "mcp" });
    const init = await t.request("POST", "/api/v1/mcp", {
      token: w.token,
      body: { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18" } },
    });
    const session = init.headers.get("mcp-session-id")!;
    const ping = () =>
      t.request("POST", "/api/v1/mcp", {
        token: w.token,
        body: { jsonrpc: "2.0", id: 2, method: "ping" },
        headers: { "mcp-session-id": session },
      });
    expect(((await (await ping()).json()) as { result?: unknown }).result).toEqual({});
    other.query("DELETE FROM mcp_sessions WHERE id = ?").run(session);
    expect(((await (await ping()).json()) as { error?: { code: number } }).error?.code).toBe(-32600);
  });

  test("changes through this process's admin service count at once (no other connection involved)", async () => {
    const { t } = setup();
    const w = t.fixtures.world();
    expect((await t.request("GET", PATH, { token: w.token })).status).toBe(200);
    t.services.admin.patchToken(w.tokenId, { allowed_ips: ["10.0.0.0/8"] });
    await expectError(await t.request("GET", PATH, { token: w.token }), 403, "forbidden_ip");
    t.services.admin.patchToken(w.tokenId, { allowed_ips: [] });
    expect((await t.request("GET", PATH, { token: w.token })).status).toBe(200);
  });
});
