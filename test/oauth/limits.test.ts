// lanes: sqlite postgres
// Abuse limits of the authorization server: every length a client has svc store is capped, every
// error before the operator's consent is a page (never a redirect), expired and unused rows are
// swept, the operator's lists come in pages, a wrong verifier spends its code, refresh tokens end,
// an OAuth grant's token cannot be widened past the consent, and the consent page says the
// client's name is its own claim.
import { describe, expect, test } from "bun:test";
import { silentLogger } from "../../src/core/logger";
import { OAuthSweeper } from "../../src/oauth/sweeper";
import { csrfOf, signIn } from "../helpers/admin-browser";
import { json } from "../helpers/app";
import {
  approvedCallback,
  authorizeUrl,
  form,
  mcpCall,
  oauthApp,
  pkce,
  REDIRECT,
  register,
  rowCount,
  signedIn,
} from "./support";

const DAY = 86_400_000;

async function oauthErrorOf(res: Response) {
  return { status: res.status, ...((await res.json()) as { error: string }) };
}

describe("lengths a client has svc store are capped", () => {
  test("registration: too many or too long redirect URIs, a long client_name are refused; nothing is stored", async () => {
    const { t } = oauthApp();
    const long = `https://app.example/${"a".repeat(700)}`;
    for (const body of [
      // The flood of the report: 20 redirect URIs of 700 characters.
      { redirect_uris: Array.from({ length: 20 }, (_, i) => `${long}${i}`) },
      { redirect_uris: Array.from({ length: 11 }, (_, i) => `https://app.example/cb${i}`) },
      { redirect_uris: [long] },
    ]) {
      const res = await t.request("POST", "/oauth/register", { body });
      expect(await oauthErrorOf(res)).toMatchObject({ status: 400, error: "invalid_redirect_uri" });
    }
    const named = await t.request("POST", "/oauth/register", {
      body: { redirect_uris: [REDIRECT], client_name: "x".repeat(201) },
    });
    expect(await oauthErrorOf(named)).toMatchObject({ status: 400, error: "invalid_client_metadata" });
    expect(rowCount(t, "oauth_clients")).toBe(0);
    // At the caps: accepted.
    await register(t, {
      client_name: "x".repeat(200),
      redirect_uris: Array.from({ length: 10 }, (_, i) => `https://app.example/${"b".repeat(183)}${i}`),
    });
    await register(t, { redirect_uris: [`https://app.example/${"b".repeat(492)}`] });
    expect(rowCount(t, "oauth_clients")).toBe(2);
  });

  test("registration: redirect URIs of more than 2,048 characters together are refused", async () => {
    const { t } = oauthApp();
    const res = await t.request("POST", "/oauth/register", {
      body: {
        redirect_uris: Array.from({ length: 5 }, (_, i) => `https://app.example/${"c".repeat(420)}${i}`),
      },
    });
    expect(await oauthErrorOf(res)).toMatchObject({ status: 400, error: "invalid_redirect_uri" });
    expect(rowCount(t, "oauth_clients")).toBe(0);
  });

  test("registration: at most 10,000 clients a day, whatever addresses they come from; the next day again", async () => {
    const { t } = oauthApp();
    // 9,999 clients registered a minute ago (written directly: the limit counts rows, not requests).
    t.db
      .query(
        `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 9999)
         INSERT INTO oauth_clients (id, kind, name, redirect_uris, token_endpoint_auth_method, secret_hash, created_at)
         SELECT 'flood-' || i, 'registered', 'x', '[]', 'none', NULL, '2026-11-20T08:59:00.000Z' FROM n`,
      )
      .run();
    await register(t);
    const refused = await t.request("POST", "/oauth/register", { body: { redirect_uris: [REDIRECT] } });
    expect(await oauthErrorOf(refused)).toMatchObject({ status: 503, error: "temporarily_unavailable" });
    expect(rowCount(t, "oauth_clients")).toBe(10_000);
    t.clock.advance(DAY);
    await register(t);
  });

  test("authorization: a long state or scope is a page and no request is stored; repeated scopes are stored once", async () => {
    const { t } = oauthApp();
    const clientId = await register(t);
    const { challenge } = pkce();
    const tooLong: Record<string, string>[] = [
      { state: "s".repeat(7000) },
      { scope: "statements:read ".repeat(40) },
    ];
    for (const params of tooLong) {
      const res = await t.request(
        "GET",
        authorizeUrl({ client_id: clientId, code_challenge: challenge, ...params }),
      );
      expect(res.status).toBe(400);
      expect(res.headers.get("location")).toBeNull();
    }
    expect(rowCount(t, "oauth_requests")).toBe(0);
    const ok = await t.request(
      "GET",
      authorizeUrl({
        client_id: clientId,
        code_challenge: challenge,
        state: "s".repeat(1024),
        scope: "statements:read statements:read",
      }),
    );
    expect(ok.status).toBe(302);
    expect(t.db.query("SELECT scope FROM oauth_requests").get()).toEqual({ scope: "statements:read" });
  });
});

describe("errors before consent", () => {
  test("a registered evil redirect and a bad response_type: the error page, never a 302 to it", async () => {
    const { t } = oauthApp();
    const clientId = await register(t, { redirect_uris: ["https://evil.example/cb"] });
    const res = await t.request(
      "GET",
      authorizeUrl({
        client_id: clientId,
        redirect_uri: "https://evil.example/cb",
        response_type: "token",
        code_challenge: pkce().challenge,
      }),
    );
    expect(res.status).toBe(400);
    expect(res.headers.get("location")).toBeNull();
    expect(await res.text()).toContain("unsupported_response_type");
  });
});

describe("the sweep", () => {
  test("expired requests, clients without a grant after a day go; a client with a grant stays; once per interval for the fleet", async () => {
    const { t, company, readable } = oauthApp();
    const unused = await register(t, { client_name: "Never approved" });
    await t.request("GET", authorizeUrl({ client_id: unused, code_challenge: pkce().challenge }));
    const { clientId: used } = await signedIn(t, {
      company_id: company.company_id,
      accounts: [{ bank_account_id: readable.bank_account_id }],
    });
    expect(rowCount(t, "oauth_requests")).toBe(2);
    const sweeper = new OAuthSweeper(t.services.oauth, silentLogger, t.services.fleetSchedule);
    // Within the request's 10 minutes nothing goes.
    expect(await sweeper.runOnce()).toBe(0);
    t.clock.advance(11 * 60_000);
    await sweeper.runOnce();
    // The pending request is gone; the used code's row stays a day (a replay still revokes).
    expect(rowCount(t, "oauth_requests")).toBe(1);
    t.clock.advance(DAY);
    await sweeper.runOnce();
    expect(rowCount(t, "oauth_requests")).toBe(0);
    const ids = t.db
      .query<{ id: string }>("SELECT id FROM oauth_clients")
      .all()
      .map((r) => r.id);
    expect(ids).toEqual([used]);
  });

  test("refresh tokens end after 30 days unused; spent ones go a day after use; the grant nothing can renew ends", async () => {
    const { t, company, readable } = oauthApp();
    const { clientId, tokens } = await signedIn(t, {
      company_id: company.company_id,
      accounts: [{ bank_account_id: readable.bank_account_id }],
    });
    const refresh = (token: string) =>
      form(t, "/oauth/token", { grant_type: "refresh_token", refresh_token: token, client_id: clientId });
    const next = await json<{ refresh_token: string }>(await refresh(tokens.refresh_token));
    expect(rowCount(t, "oauth_refresh_tokens")).toBe(2);
    t.clock.advance(DAY + 60_000);
    t.services.oauth.sweepOnce();
    // The spent one went; the live one stays.
    expect(rowCount(t, "oauth_refresh_tokens")).toBe(1);
    t.clock.advance(30 * DAY);
    expect(await oauthErrorOf(await refresh(next.refresh_token))).toMatchObject({
      status: 400,
      error: "invalid_grant",
    });
    t.services.oauth.sweepOnce();
    expect(rowCount(t, "oauth_refresh_tokens")).toBe(0);
    const grants = await json<{ grants: { revoked_at: string | null }[] }>(
      await t.admin("GET", "/oauth/grants"),
    );
    expect(grants.grants[0]?.revoked_at).not.toBeNull();
  });
});

describe("the sweeper as a worker", () => {
  test("two replicas' sweepers on one store: one sweep per interval between them", async () => {
    const { t } = oauthApp();
    let sweeps = 0;
    let claims = 0;
    const counting = {
      sweepOnce: () => {
        sweeps++;
        return t.services.oauth.sweepOnce();
      },
    } as unknown as typeof t.services.oauth;
    const schedule = t.services.fleetSchedule;
    const claiming = {
      claim: (job: string, ms: number) => {
        claims++;
        return schedule.claim(job, ms);
      },
    } as unknown as typeof schedule;
    // The interval is 5 ms of the timers, but the schedule's time is the test's clock.
    const replicas = [1, 2].map(() => new OAuthSweeper(counting, silentLogger, claiming, 5));
    expect(replicas[0]!.name).toBe("oauth-sweeper");
    for (const r of replicas) r.start();
    try {
      for (let i = 0; i < 500 && claims < 10; i++) await Bun.sleep(5);
      expect(claims).toBeGreaterThanOrEqual(10);
      expect(sweeps).toBe(1);
      t.clock.advance(5);
      const before = claims;
      for (let i = 0; i < 500 && claims < before + 10; i++) await Bun.sleep(5);
      expect(sweeps).toBe(2);
    } finally {
      for (const r of replicas) await r.stop();
    }
  });
});

describe("the operator's lists come in pages", () => {
  test("clients, requests and grants: limit and cursor, every row once; a bad cursor or limit is 400", async () => {
    const { t, company, readable } = oauthApp();
    for (let i = 0; i < 4; i++) {
      const id = await register(t, { client_name: `Client ${i}` });
      await t.request("GET", authorizeUrl({ client_id: id, code_challenge: pkce().challenge }));
      t.clock.advance(1000);
    }
    for (let i = 0; i < 3; i++) {
      await signedIn(t, {
        company_id: company.company_id,
        accounts: [{ bank_account_id: readable.bank_account_id }],
      });
      t.clock.advance(1000);
    }
    const walk = async (path: string, key: string) => {
      const seen: unknown[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const res = await t.admin("GET", `${path}?limit=2${cursor ? `&cursor=${cursor}` : ""}`);
        expect(res.status).toBe(200);
        const body = await json<Record<string, unknown[]> & { next_cursor: string | null }>(res);
        expect(body[key]!.length).toBeLessThanOrEqual(2);
        seen.push(...body[key]!);
        cursor = body.next_cursor;
        pages++;
      } while (cursor !== null && pages < 10);
      return seen;
    };
    const clients = (await walk("/oauth/clients", "clients")) as { client_id: string }[];
    expect(clients.length).toBe(7);
    expect(new Set(clients.map((c) => c.client_id)).size).toBe(7);
    expect((await walk("/oauth/requests", "requests")).length).toBe(4);
    expect((await walk("/oauth/grants", "grants")).length).toBe(3);
    expect((await t.admin("GET", "/oauth/clients?cursor=nonsense")).status).toBe(400);
    expect((await t.admin("GET", "/oauth/grants?limit=501")).status).toBe(400);
    const first = await json<{ clients: unknown[] }>(await t.admin("GET", "/oauth/clients"));
    expect(first.clients.length).toBe(7);
  });

  test("the connected apps page shows a page of grants and a link to the next", async () => {
    // 51 sign-ins from one address: past the default per-address limit of the OAuth routes.
    const { t, company, readable } = oauthApp({ SVC_PUBLIC_RATE_LIMIT_PER_MINUTE: "1000" });
    for (let i = 0; i < 51; i++) {
      await signedIn(t, {
        company_id: company.company_id,
        accounts: [{ bank_account_id: readable.bank_account_id }],
      });
    }
    const b = await signIn(t);
    const html = await (await b.get("/admin/oauth")).text();
    expect(html.match(/\/admin\/oauth\/grants\/[0-9a-f]+\/revoke/g)?.length).toBe(50);
    const next = /href="(\/admin\/oauth\?cursor=[^"]+)"/.exec(html)?.[1];
    expect(next).toBeString();
    const rest = await (await b.get(next!.replaceAll("&amp;", "&"))).text();
    expect(rest.match(/\/admin\/oauth\/grants\/[0-9a-f]+\/revoke/g)?.length).toBe(1);
  });
});

describe("decided points", () => {
  test("a wrong code_verifier spends the code: the right one afterwards gets nothing", async () => {
    const { t, company, readable } = oauthApp();
    const clientId = await register(t);
    const { verifier, challenge } = pkce();
    const callback = await approvedCallback(t, clientId, challenge, {
      company_id: company.company_id,
      accounts: [{ bank_account_id: readable.bank_account_id }],
    });
    const exchange = (code_verifier: string) =>
      form(t, "/oauth/token", {
        grant_type: "authorization_code",
        code: callback.searchParams.get("code")!,
        code_verifier,
        redirect_uri: REDIRECT,
        client_id: clientId,
      });
    expect(await oauthErrorOf(await exchange(pkce().verifier))).toMatchObject({
      status: 400,
      error: "invalid_grant",
    });
    expect(await oauthErrorOf(await exchange(verifier))).toMatchObject({
      status: 400,
      error: "invalid_grant",
    });
  });

  test("an OAuth grant's token may be narrowed on the admin API, never widened past the consent", async () => {
    const { t, company, readable, other } = oauthApp();
    const { tokens } = await signedIn(t, {
      company_id: company.company_id,
      accounts: [{ bank_account_id: readable.bank_account_id }],
    });
    const grants = await json<{ grants: { api_token_id: string }[] }>(await t.admin("GET", "/oauth/grants"));
    const tokenId = grants.grants[0]!.api_token_id;
    const patch = (body: unknown) => t.admin("PATCH", `/tokens/${tokenId}`, body);
    const wider = await patch({
      accounts: [
        { bank_account_id: readable.bank_account_id, allow_read_statements: true },
        { bank_account_id: other.bank_account_id, allow_read_statements: true },
      ],
    });
    expect(wider.status).toBe(400);
    expect((await patch({ expires_at: null })).status).toBe(400);
    expect((await patch({ expires_at: "2030-01-01T00:00:00Z" })).status).toBe(400);
    // Narrowing is the operator's right: the scope off, then on again is more than the token has.
    expect((await patch({ scope_read_statements: false })).status).toBe(200);
    expect((await patch({ scope_read_statements: true })).status).toBe(400);
    expect((await patch({ name: "Claude (ours)" })).status).toBe(200);
    expect((await mcpCall(t, tokens.access_token)).status).toBe(403);
  });

  test("the consent page says the client's name is its own claim, with its id and where the answer goes", async () => {
    const { t } = oauthApp();
    const clientId = await register(t, { client_name: "Claude" });
    const res = await t.request(
      "GET",
      authorizeUrl({ client_id: clientId, code_challenge: pkce().challenge }),
    );
    const b = await signIn(t);
    const page = await b.get(res.headers.get("location")!);
    const html = await page.text();
    expect(csrfOf(html)).toBeString();
    expect(html).toContain("svc не проверял это имя");
    expect(html).toContain(clientId);
    expect(html).toContain("127.0.0.1:4711");
  });
});
