// lanes: sqlite postgres
// Tochka's OAuth login: the bank's consent flow from the admin API and the callback page, access
// tokens renewed with rotating refresh tokens (committed before use, one renewal at a time, also
// across processes), and what happens when a process dies in the middle of a renewal.
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { json, makeTestApp, type TestApp } from "../helpers/app";
import { tempDir } from "../helpers/server";
import {
  PUBLIC_URL,
  type TochkaAccount,
  type TochkaWorld,
  tochkaEnv,
  tochkaWorlds,
} from "../support/tochka-world";

const CLIENT = { kind: "oauth", client_id: "svc-app", client_secret: "app-secret-ABC" };
const DAY = 86_400_000;

const worlds = tochkaWorlds();

/** Runs the consent flow as the operator's browser would; returns the callback's answer. */
async function consent(w: TochkaWorld, t: TestApp, accountId: string): Promise<Response> {
  const started = await t.admin("POST", `/bank-accounts/${accountId}/bank-consent`);
  expect(started.status).toBe(200);
  const { authorize_url } = await json<{ authorize_url: string }>(started);
  expect(authorize_url.startsWith(`${w.fake.authUrl}/connect/authorize?`)).toBe(true);
  const bank = await fetch(authorize_url, { redirect: "manual" });
  expect(bank.status).toBe(302);
  const back = new URL(bank.headers.get("location")!);
  expect(`${back.origin}${back.pathname}`).toBe(`${PUBLIC_URL}/admin/banks/tochka/callback`);
  return t.request("GET", `/admin/banks/tochka/callback${back.search}`);
}

async function oauthWorld(options: Parameters<typeof worlds.start>[0] = {}) {
  const w = await worlds.start({ pollsBeforeReady: 0, ...options });
  w.fake.addOAuthClient(CLIENT.client_id, CLIENT.client_secret);
  const account = await w.account({ credentials: CLIENT });
  const res = await consent(w, w.t, account.id);
  expect(res.status).toBe(200);
  return { w, account };
}

function storedLogin(t: TestApp, accountId: string): Record<string, unknown> {
  const account = t.services.accounts.findById(accountId)!;
  return t.services.connections.read(account.connectionId!) as Record<string, unknown>;
}

async function balanceOf(t: TestApp, account: TochkaAccount) {
  return t.admin("POST", `/bank-accounts/${account.id}/balance/refresh`);
}

describe("the bank's consent flow", () => {
  test("an OAuth login waits for consent; the operator approves in the bank; the tokens are stored sealed", async () => {
    const w = await worlds.start();
    w.fake.addOAuthClient(CLIENT.client_id, CLIENT.client_secret);
    const account = await w.account({ credentials: CLIENT });
    const listed = async () =>
      (
        await json<{ bank_accounts: Record<string, unknown>[] }>(await w.t.admin("GET", "/bank-accounts"))
      ).bank_accounts.find((a) => a.bank_account_id === account.id)!;
    expect((await listed()).credentials_status).toBe("consent_required");
    // Before the consent nothing is asked of the bank for data.
    expect((await balanceOf(w.t, account)).status).toBe(500);

    const back = await consent(w, w.t, account.id);
    expect(back.status).toBe(200);
    expect(await back.text()).toContain("Банк подтвердил доступ");
    expect((await listed()).credentials_status).toBe("active");
    const login = storedLogin(w.t, account.id);
    expect(typeof login.access_token).toBe("string");
    expect(typeof login.refresh_token).toBe("string");
    // Sealed at rest: no token in clear in the database, the answers or the logs.
    const dump = JSON.stringify(w.t.db.query("SELECT * FROM bank_connections").all(), (_k, v) =>
      v instanceof Uint8Array ? Buffer.from(v).toString("latin1") : v,
    );
    for (const secret of [login.access_token, login.refresh_token, CLIENT.client_secret] as string[]) {
      expect(dump).not.toContain(secret);
      expect(w.t.logs.join("\n")).not.toContain(secret);
      expect(JSON.stringify(await listed())).not.toContain(secret);
    }
    expect((await balanceOf(w.t, account)).status).toBe(200);
    // The consent asked for what svc uses, and the bank's pages were followed in order.
    const auth = w.fake.requests.filter((r) => r.base === "auth" || r.path.startsWith("/consent"));
    expect(auth.map((r) => `${r.method} ${r.path}`)).toEqual([
      "POST /connect/token",
      "POST /consent/v1.0/consents",
      "GET /connect/authorize",
      "POST /connect/token",
    ]);
    const audit = w.t.db
      .query<{ action: string }, []>(
        "SELECT action FROM audit_log WHERE action LIKE 'admin.bank_connection.%' ORDER BY id",
      )
      .all()
      .map((r) => r.action);
    expect(audit).toEqual(["admin.bank_connection.consent_start", "admin.bank_connection.consent_done"]);
  });

  test("the callback refuses a replayed, unknown or missing state, and a customer who declined", async () => {
    const w = await worlds.start();
    w.fake.addOAuthClient(CLIENT.client_id, CLIENT.client_secret);
    const account = await w.account({ credentials: CLIENT });
    const started = await json<{ authorize_url: string }>(
      await w.t.admin("POST", `/bank-accounts/${account.id}/bank-consent`),
    );
    const bank = await fetch(started.authorize_url, { redirect: "manual" });
    const search = new URL(bank.headers.get("location")!).search;
    expect((await w.t.request("GET", `/admin/banks/tochka/callback${search}`)).status).toBe(200);
    // The same answer again: the state was used.
    const replay = await w.t.request("GET", `/admin/banks/tochka/callback${search}`);
    expect(replay.status).toBe(400);
    expect(await replay.text()).toContain("устарела или уже использована");
    expect((await w.t.request("GET", "/admin/banks/tochka/callback?code=x&state=forged")).status).toBe(400);
    expect((await w.t.request("GET", "/admin/banks/tochka/callback?code=x")).status).toBe(400);
    expect((await w.t.request("GET", "/admin/banks/nobank/callback?code=x&state=y")).status).toBe(404);

    const declined = await w.account({ credentials: CLIENT });
    w.fake.setAuthorizationOutcome("deny");
    const refused = await consent(w, w.t, declined.id);
    expect(refused.status).toBe(400);
    const view = (
      await json<{ bank_accounts: Record<string, unknown>[] }>(await w.t.admin("GET", "/bank-accounts"))
    ).bank_accounts.find((a) => a.bank_account_id === declined.id)!;
    expect(view.credentials_status).toBe("consent_required");
    expect(view.credentials_message).toContain("access_denied");
  });

  test("a JWT account needs no consent: the bank's page is not offered (501)", async () => {
    const w = await worlds.start();
    const account = await w.account();
    const res = await w.t.admin("POST", `/bank-accounts/${account.id}/bank-consent`);
    expect(res.status).toBe(501);
  });
});

describe("access tokens and rotating refresh tokens", () => {
  test("a token the bank refuses (401) is renewed once and the call repeated; the new refresh token is stored", async () => {
    const { w, account } = await oauthWorld();
    const before = storedLogin(w.t, account.id);
    w.fake.expireAccessTokens();
    expect((await balanceOf(w.t, account)).status).toBe(200);
    expect(w.fake.refreshCount).toBe(1);
    const after = storedLogin(w.t, account.id);
    expect(after.refresh_token).not.toBe(before.refresh_token);
    expect(after.access_token).not.toBe(before.access_token);
    // The old refresh token is dead at the bank: had svc kept it, the next renewal would fail.
    const reuse = await fetch(`${w.fake.authUrl}/connect/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        client_id: CLIENT.client_id,
        client_secret: CLIENT.client_secret,
        grant_type: "refresh_token",
        refresh_token: before.refresh_token as string,
      }),
    });
    expect(reuse.status).toBe(400);
    w.fake.violations.length = 0; // that deliberate reuse is not svc's traffic
  });

  test("a token near its expiry is renewed before the call; concurrent calls renew it once", async () => {
    const { w, account } = await oauthWorld();
    w.t.clock.advance(DAY);
    const answers = await Promise.all(Array.from({ length: 6 }, () => balanceOf(w.t, account)));
    expect(answers.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 200]);
    expect(w.fake.refreshCount).toBe(1);
    // No call was refused on the way: the renewal came first.
    expect(w.fake.requests.filter((r) => r.status === 401)).toEqual([]);
  });

  test("two processes on one database renew one login once (the lease), each using the new token", async () => {
    const dbPath = join(tempDir(), "svc.db");
    const { w, account } = await oauthWorld({ dbPath });
    const other = makeTestApp(tochkaEnv(w.fake), "2026-11-20T09:00:00Z", { dbPath });
    w.t.clock.advance(DAY);
    other.clock.advance(DAY);
    const answers = await Promise.all([
      balanceOf(w.t, account),
      balanceOf(other, account),
      balanceOf(w.t, account),
      balanceOf(other, account),
    ]);
    expect(answers.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    expect(w.fake.refreshCount).toBe(1);
    expect(storedLogin(other, account.id).access_token).toBe(storedLogin(w.t, account.id).access_token);
  });

  test("a process that dies after storing the new tokens: the next one uses them, no second renewal", async () => {
    const dbPath = join(tempDir(), "svc.db");
    const { w, account } = await oauthWorld({ dbPath });
    w.t.clock.advance(DAY);
    const connections = w.t.services.connections;
    const renew = connections.renew.bind(connections);
    // The renewal is committed, then the process "dies" before the new access token is used.
    connections.renew = async (...args) => {
      await renew(...args);
      throw new Error("process killed");
    };
    expect((await balanceOf(w.t, account)).status).toBe(500);
    expect(w.fake.refreshCount).toBe(1);

    const next = makeTestApp(tochkaEnv(w.fake), "2026-11-21T09:30:00Z", { dbPath });
    expect((await balanceOf(next, account)).status).toBe(200);
    expect(w.fake.refreshCount).toBe(1);
  });

  test("a process that dies before storing them: the bank refuses the old refresh token, the operator is told, nothing loops", async () => {
    const { w, account } = await oauthWorld();
    w.t.clock.advance(DAY);
    const repo = w.t.services.connectionRepo;
    const store = repo.store.bind(repo);
    repo.store = () => {
      throw new Error("process killed");
    };
    expect((await balanceOf(w.t, account)).status).toBe(500);
    repo.store = store;
    // The bank rotated; the new refresh token was lost with the process. The old one is refused.
    const res = await balanceOf(w.t, account);
    expect(res.status).toBe(500);
    expect((await json<{ error: { message: string } }>(res)).error.message).toMatch(/Обновите доступ/);
    const view = (
      await json<{ bank_accounts: Record<string, unknown>[] }>(await w.t.admin("GET", "/bank-accounts"))
    ).bank_accounts.find((a) => a.bank_account_id === account.id)!;
    expect(view.credentials_status).toBe("renewal_needed");
    const refreshes = w.fake.refreshCount;
    // A statement ordered now fails at once instead of retrying forever; the bank is asked nothing more.
    const ordered = await w.t.request("POST", "/api/v1/integration/statements", {
      token: w.token,
      body: {
        bank_account_id: account.id,
        date_from: "2026-10-01",
        date_to: "2026-10-31",
        external_id: "after-crash",
      },
    });
    const statement = await w.settle((await json<{ statement_id: string }>(ordered)).statement_id);
    expect(statement.status).toBe("failed");
    expect(w.fake.refreshCount).toBe(refreshes + 1);
    // After the operator runs the consent again, everything works.
    expect((await consent(w, w.t, account.id)).status).toBe(200);
    expect((await balanceOf(w.t, account)).status).toBe(200);
  });
});
