// lanes: sqlite
// Tokens, accounts, statement rows, agent sessions and balances are cached in memory; a change
// made by another process (for example `svc admin token revoke` on the same database file) must
// still count from the next request on. Every case runs with the row cache on and off
// (SVC_ROW_CACHE): the answers must not depend on it.
import { Database } from "bun:sqlite";
import { afterEach, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { makeTestApp, type TestApp } from "../../helpers/app";
import { expectError } from "../../helpers/envelope";
import { tempDir } from "../../helpers/server";

const PATH = "/api/v1/integration/statements";
const open: { t: TestApp; other: Database }[] = [];
afterEach(() => {
  for (const { t, other } of open.splice(0)) {
    other.close();
    t.services.store.close();
  }
});

function setup(rowCache: "on" | "off") {
  const dbPath = join(tempDir(), "svc.db");
  const t = makeTestApp({ SVC_ROW_CACHE: rowCache }, "2026-11-20T09:00:00Z", { dbPath });
  const other = new Database(dbPath, { strict: true });
  other.exec("PRAGMA busy_timeout = 5000");
  open.push({ t, other });
  return { t, other };
}

function tokenHash(t: TestApp, tokenId: string): string {
  return t.services.database.sqlite
    .query<{ token_hash: string }, [string]>("SELECT token_hash FROM api_tokens WHERE id = ?")
    .get(tokenId)!.token_hash;
}

async function orderOneDay(t: TestApp, token: string, accountId: string): Promise<string> {
  const ordered = await t.request("POST", PATH, {
    token,
    body: {
      bank_account_id: accountId,
      external_id: "one-day",
      date_from: "2026-11-18",
      date_to: "2026-11-18",
    },
  });
  return ((await ordered.json()) as { statement_id: string }).statement_id;
}

describe.each(["on", "off"] as const)("cached tokens and accounts, SVC_ROW_CACHE=%s", (rowCache) => {
  test("a token revoked by another process fails from the next request on", async () => {
    const { t, other } = setup(rowCache);
    const w = t.fixtures.world();
    expect((await t.request("GET", PATH, { token: w.token })).status).toBe(200);
    expect((await t.request("GET", PATH, { token: w.token })).status).toBe(200);
    other
      .query("UPDATE api_tokens SET revoked_at = ? WHERE id = ?")
      .run(t.clock.now().toISOString(), w.tokenId);
    await expectError(await t.request("GET", PATH, { token: w.token }), 401, "invalid_token");
  });

  test("a grant withdrawn by another process is refused from the next request on", async () => {
    const { t, other } = setup(rowCache);
    const w = t.fixtures.world();
    const query = `${PATH}?bank_account_id=${w.account.bank_account_id}`;
    expect((await t.request("GET", query, { token: w.token })).status).toBe(200);
    other.query("UPDATE token_accounts SET allow_read_statements = 0 WHERE token_id = ?").run(w.tokenId);
    await expectError(await t.request("GET", query, { token: w.token }), 403, "forbidden_account");
  });

  test("an agent session ended by another instance on the same file is gone from the next request on", async () => {
    const { t, other } = setup(rowCache);
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

  test("a balance written by another process is get_balance's answer from the next call on", async () => {
    const { t, other } = setup(rowCache);
    const w = t.fixtures.world({ purpose: "mcp" });
    const accountId = w.account.bank_account_id;
    expect((await t.admin("POST", `/bank-accounts/${accountId}/balance/refresh`)).status).toBe(200);
    const init = await t.request("POST", "/api/v1/mcp", {
      token: w.token,
      body: { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18" } },
    });
    const session = init.headers.get("mcp-session-id")!;
    const balance = async () => {
      const res = await t.request("POST", "/api/v1/mcp", {
        token: w.token,
        body: {
          jsonrpc: "2.0",
          id: 2,
          method: "tools/call",
          params: { name: "get_balance", arguments: { bank_account_id: accountId } },
        },
        headers: { "mcp-session-id": session },
      });
      return ((await res.json()) as { result: { structuredContent: { balance: number; as_of: string } } })
        .result.structuredContent;
    };
    const before = await balance();
    expect(await balance()).toEqual(before);
    other
      .query("UPDATE balances SET balance = balance + 12345, as_of = ? WHERE bank_account_id = ?")
      .run("2026-11-20T09:30:00.000Z", accountId);
    expect(await balance()).toMatchObject({
      balance: Math.round(before.balance * 100 + 12345) / 100,
      as_of: "2026-11-20T09:30:00.000Z",
    });
  });

  test("grants changed by another process show in the admin API from the next request on", async () => {
    const { t, other } = setup(rowCache);
    const w = t.fixtures.world();
    const grantsShown = async () => {
      const listed = (await (await t.admin("GET", "/tokens")).json()) as {
        tokens: { api_token_id: string; accounts: { allow_read_statements: boolean }[] }[];
      };
      return listed.tokens.find((token) => token.api_token_id === w.tokenId)?.accounts;
    };
    // The grants are read (and kept) by the token's own request and by the admin view.
    expect((await t.request("GET", PATH, { token: w.token })).status).toBe(200);
    expect(await grantsShown()).toMatchObject([{ allow_read_statements: true }]);
    other.query("UPDATE token_accounts SET allow_read_statements = 0 WHERE token_id = ?").run(w.tokenId);
    expect(await grantsShown()).toMatchObject([{ allow_read_statements: false }]);
    expect(t.services.admin.tokens.view(w.tokenId).accounts).toMatchObject([
      { allow_read_statements: false },
    ]);
  });

  test("changes through this process's admin service count at once (no other connection involved)", async () => {
    const { t } = setup(rowCache);
    const w = t.fixtures.world();
    expect((await t.request("GET", PATH, { token: w.token })).status).toBe(200);
    t.services.admin.tokens.patch(w.tokenId, { allowed_ips: ["10.0.0.0/8"] });
    await expectError(await t.request("GET", PATH, { token: w.token }), 403, "forbidden_ip");
    t.services.admin.tokens.patch(w.tokenId, { allowed_ips: [] });
    expect((await t.request("GET", PATH, { token: w.token })).status).toBe(200);
  });

  test("a statement polled while the poller works on it shows each state as it is written", async () => {
    const { t } = setup(rowCache);
    const w = t.fixtures.world();
    const id = await orderOneDay(t, w.token, w.account.bank_account_id);
    const status = async () =>
      ((await (await t.request("GET", `${PATH}/${id}`, { token: w.token })).json()) as { status: string })
        .status;
    expect(await status()).toBe("processing");
    expect(await status()).toBe("processing");
    await t.services.poller.idle();
    await t.services.poller.tick();
    await t.services.poller.idle();
    expect(await status()).toBe("ready");
  });

  test("a statement changed by another process is read again from the next request on", async () => {
    const { t, other } = setup(rowCache);
    const w = t.fixtures.world();
    const id = await orderOneDay(t, w.token, w.account.bank_account_id);
    const poll = async () =>
      (await (await t.request("GET", `${PATH}/${id}`, { token: w.token })).json()) as {
        status: string;
        error?: { code: string };
      };
    expect((await poll()).status).toBe("processing");
    other
      .query(
        "UPDATE statements SET status = 'failed', error_code = 'bank_error', error_message = 'x' WHERE id = ?",
      )
      .run(id);
    const after = await poll();
    expect(after.status).toBe("failed");
    expect(after.error?.code).toBe("bank_error");
  });
});

describe("how often other processes' commits are looked for", () => {
  test("other processes' commits are looked for once per synchronous run of code", async () => {
    const { t, other } = setup("on");
    const w = t.fixtures.world();
    const tokens = t.services.tokens;
    const hash = tokenHash(t, w.tokenId);
    expect(tokens.findByHash(hash)?.revokedAt).toBeNull();
    other.query("UPDATE api_tokens SET revoked_at = '2026-11-20T09:00:00.000Z' WHERE id = ?").run(w.tokenId);
    // Same run as the look above: the cached row still answers.
    expect(tokens.findByHash(hash)?.revokedAt).toBeNull();
    await Promise.resolve();
    // A later run looks again.
    expect(tokens.findByHash(hash)?.revokedAt).toBe("2026-11-20T09:00:00.000Z");
  });

  test("with SVC_ROW_CACHE=off nothing is kept: a commit counts even within the same run", () => {
    const { t, other } = setup("off");
    const w = t.fixtures.world();
    const tokens = t.services.tokens;
    const hash = tokenHash(t, w.tokenId);
    expect(tokens.findByHash(hash)?.revokedAt).toBeNull();
    other.query("UPDATE api_tokens SET revoked_at = '2026-11-20T09:00:00.000Z' WHERE id = ?").run(w.tokenId);
    expect(tokens.findByHash(hash)?.revokedAt).toBe("2026-11-20T09:00:00.000Z");
  });
});
