// lanes: sqlite postgres
// svc as the authorization server and resource server of /mcp: metadata, the 401/403 challenges,
// registration, the code flow with PKCE and the operator's consent, tokens bound to /mcp, rotating
// refresh tokens, revocation, and each abuse refused.
import { describe, expect, test } from "bun:test";
import { json } from "../helpers/app";
import {
  approvedCallback,
  authorizeUrl,
  form,
  mcpCall,
  oauthApp,
  PUBLIC,
  pkce,
  REDIRECT,
  register,
  rowCount,
  signedIn,
} from "./support";

describe("metadata and challenges", () => {
  test("protected-resource metadata at the path-specific address only; authorization-server metadata", async () => {
    const { t } = oauthApp();
    const prm = await t.request("GET", "/.well-known/oauth-protected-resource/mcp");
    expect(prm.status).toBe(200);
    expect(await prm.json()).toMatchObject({
      resource: `${PUBLIC}/mcp`,
      authorization_servers: [PUBLIC],
      scopes_supported: ["statements:read"],
    });
    expect((await t.request("GET", "/.well-known/oauth-protected-resource")).status).toBe(404);
    const as = await json<Record<string, unknown>>(
      await t.request("GET", "/.well-known/oauth-authorization-server"),
    );
    expect(as).toMatchObject({
      issuer: PUBLIC,
      authorization_endpoint: `${PUBLIC}/oauth/authorize`,
      token_endpoint: `${PUBLIC}/oauth/token`,
      registration_endpoint: `${PUBLIC}/oauth/register`,
      revocation_endpoint: `${PUBLIC}/oauth/revoke`,
      code_challenge_methods_supported: ["S256"],
      client_id_metadata_document_supported: true,
      authorization_response_iss_parameter_supported: true,
    });
  });

  test("/mcp without a token: 401 naming the metadata and the scope; static tokens are not accepted there", async () => {
    const { t, company, readable } = oauthApp();
    const res = await mcpCall(t, null);
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toBe(
      `Bearer resource_metadata="${PUBLIC}/.well-known/oauth-protected-resource/mcp", scope="statements:read"`,
    );
    const staticToken = t.fixtures.token(company.company_id, {
      purpose: "mcp",
      accounts: [{ bank_account_id: readable.bank_account_id, allow_read_statements: true }],
    }).token;
    const refused = await mcpCall(t, staticToken);
    expect(refused.status).toBe(401);
    expect(refused.headers.get("www-authenticate")).toContain('error="invalid_token"');
    // /api/v1/mcp keeps static tokens and publishes nothing about OAuth.
    const legacy = await mcpCall(t, null, "list_bank_accounts", "/api/v1/mcp");
    expect(legacy.status).toBe(401);
    expect(legacy.headers.get("www-authenticate")).toBeNull();
  });
});

describe("the code flow", () => {
  test("register, authorize, the operator approves, the code for tokens; the tools see the chosen accounts only", async () => {
    const { t, company, readable, other } = oauthApp();
    const { callback, tokens } = await signedIn(t, {
      company_id: company.company_id,
      accounts: [{ bank_account_id: readable.bank_account_id }],
    });
    expect(callback.origin + callback.pathname).toBe(REDIRECT);
    expect(callback.searchParams.get("state")).toBe("st-1");
    expect(callback.searchParams.get("iss")).toBe(PUBLIC);
    expect(tokens).toMatchObject({ expires_in: 3600, scope: "statements:read" });
    const res = await mcpCall(t, tokens.access_token);
    expect(res.status).toBe(200);
    const text = JSON.stringify(await res.json());
    expect(text).toContain(readable.bank_account_id);
    expect(text).not.toContain(other.bank_account_id);
    // The same access token is no good on the static-token endpoint (its audience is /mcp).
    expect((await mcpCall(t, tokens.access_token, "list_bank_accounts", "/api/v1/mcp")).status).toBe(401);
    // Audited like any agent call, naming the grant's token (and through it the client).
    await t.services.agentAudit.flush();
    const grant = (
      await json<{ grants: { api_token_id: string; client_name: string }[] }>(
        await t.admin("GET", "/oauth/grants"),
      )
    ).grants[0]!;
    expect(grant.client_name).toBe("Test agent host");
    const audited = t.db
      .query<{ api_token_id: string }, []>(
        "SELECT api_token_id FROM audit_log WHERE action = 'mcp.list_bank_accounts'",
      )
      .get();
    expect(audited?.api_token_id).toBe(grant.api_token_id);
  });

  test("nothing secret in the logs: no code, access token, refresh token or verifier", async () => {
    const { t, company, readable } = oauthApp();
    const { clientId, callback, tokens } = await signedIn(t, {
      company_id: company.company_id,
      accounts: [{ bank_account_id: readable.bank_account_id }],
    });
    await form(t, "/oauth/token", {
      grant_type: "refresh_token",
      refresh_token: tokens.refresh_token,
      client_id: clientId,
    });
    await mcpCall(t, tokens.access_token);
    await new Promise((r) => setTimeout(r, 20));
    const logs = t.logs.join("\n");
    expect(logs.length).toBeGreaterThan(0);
    for (const secret of [callback.searchParams.get("code")!, tokens.access_token, tokens.refresh_token]) {
      expect(logs).not.toContain(secret);
    }
    // Stored only as hashes.
    const dump = JSON.stringify(
      ["oauth_requests", "oauth_refresh_tokens", "api_tokens"].map((table) =>
        t.db.query(`SELECT * FROM ${table}`).all(),
      ),
    );
    for (const secret of [callback.searchParams.get("code")!, tokens.access_token, tokens.refresh_token]) {
      expect(dump).not.toContain(secret);
    }
  });

  test("refresh tokens rotate; a used one presented again revokes the whole grant", async () => {
    const { t, company, readable } = oauthApp();
    const { clientId, tokens } = await signedIn(t, {
      company_id: company.company_id,
      accounts: [{ bank_account_id: readable.bank_account_id }],
    });
    const refresh = (token: string) =>
      form(t, "/oauth/token", { grant_type: "refresh_token", refresh_token: token, client_id: clientId });
    const first = await refresh(tokens.refresh_token);
    expect(first.status).toBe(200);
    expect(first.headers.get("cache-control")).toBe("no-store");
    const rotated = await json<{ access_token: string; refresh_token: string }>(first);
    expect(rotated.refresh_token).not.toBe(tokens.refresh_token);
    // The old access token stopped working; the new one works.
    expect((await mcpCall(t, tokens.access_token)).status).toBe(401);
    expect((await mcpCall(t, rotated.access_token)).status).toBe(200);
    // Replay of the used refresh token: invalid_grant, and nothing of the grant works any more.
    const replay = await refresh(tokens.refresh_token);
    expect(replay.status).toBe(400);
    expect(await replay.json()).toMatchObject({ error: "invalid_grant" });
    expect((await mcpCall(t, rotated.access_token)).status).toBe(401);
    expect((await refresh(rotated.refresh_token)).status).toBe(400);
  });

  test("revocation endpoint and the operator's revoke end the grant from the next request", async () => {
    const { t, company, readable } = oauthApp();
    const a = await signedIn(t, {
      company_id: company.company_id,
      accounts: [{ bank_account_id: readable.bank_account_id }],
    });
    expect(
      (await form(t, "/oauth/revoke", { token: a.tokens.refresh_token, client_id: a.clientId })).status,
    ).toBe(200);
    expect((await mcpCall(t, a.tokens.access_token)).status).toBe(401);
    const b = await signedIn(t, {
      company_id: company.company_id,
      accounts: [{ bank_account_id: readable.bank_account_id }],
    });
    expect((await mcpCall(t, b.tokens.access_token)).status).toBe(200);
    const grants = (
      await json<{ grants: { grant_id: string; revoked_at: string | null }[] }>(
        await t.admin("GET", "/oauth/grants"),
      )
    ).grants;
    const live = grants.find((g) => g.revoked_at === null)!;
    expect((await t.admin("POST", `/oauth/grants/${live.grant_id}/revoke`)).status).toBe(200);
    expect((await mcpCall(t, b.tokens.access_token)).status).toBe(401);
    // An unknown token is no error (RFC 7009).
    expect((await form(t, "/oauth/revoke", { token: "nothing", client_id: b.clientId })).status).toBe(200);
  });

  test("a token granted without the scope: 403 insufficient_scope naming it (so the client can step up)", async () => {
    const { t, company, readable } = oauthApp();
    const { tokens } = await signedIn(t, {
      company_id: company.company_id,
      accounts: [{ bank_account_id: readable.bank_account_id }],
      scope: "",
    });
    const res = await mcpCall(t, tokens.access_token);
    expect(res.status).toBe(403);
    expect(res.headers.get("www-authenticate")).toBe(
      `Bearer error="insufficient_scope", resource_metadata="${PUBLIC}/.well-known/oauth-protected-resource/mcp", scope="statements:read"`,
    );
    expect((await json<{ error: { code: string } }>(res)).error.code).toBe("insufficient_scope");
  });

  test("the operator denies: the client gets access_denied with its state and the issuer", async () => {
    const { t } = oauthApp();
    const clientId = await register(t);
    const res = await t.request(
      "GET",
      authorizeUrl({ client_id: clientId, code_challenge: pkce().challenge }),
    );
    const requestId = res.headers.get("location")!.split("/").pop()!;
    const pending = await json<{
      requests: { request_id: string; client_name: string; redirect_host: string }[];
    }>(await t.admin("GET", "/oauth/requests"));
    expect(pending.requests[0]).toMatchObject({
      request_id: requestId,
      client_name: "Test agent host",
      redirect_host: "127.0.0.1:4711",
    });
    const denied = await json<{ redirect_to: string }>(
      await t.admin("POST", `/oauth/requests/${requestId}/deny`),
    );
    const url = new URL(denied.redirect_to);
    expect(Object.fromEntries(url.searchParams)).toMatchObject({
      error: "access_denied",
      state: "st-1",
      iss: PUBLIC,
    });
    expect(
      (
        await t.admin("POST", `/oauth/requests/${requestId}/approve`, {
          company_id: crypto.randomUUID(),
          accounts: [],
        })
      ).status,
    ).toBe(400);
  });
});

describe("abuse, each refused", () => {
  test("authorization requests: no PKCE or plain PKCE, a wrong resource, scope or response type are pages (never a redirect, not even to a registered URI); an unregistered redirect too", async () => {
    const { t } = oauthApp();
    const clientId = await register(t);
    const { challenge } = pkce();
    const refused = async (params: Record<string, string>) => {
      const res = await t.request(
        "GET",
        authorizeUrl({ client_id: clientId, code_challenge: challenge, ...params }),
      );
      expect(res.status).toBe(400);
      expect(res.headers.get("location")).toBeNull();
      expect(res.headers.get("content-type")).toContain("text/html");
      return res.text();
    };
    expect(await refused({ code_challenge_method: "plain" })).toContain("invalid_request");
    expect(await refused({ code_challenge: "" })).toContain("invalid_request");
    expect(await refused({ resource: "https://evil.example/mcp" })).toContain("invalid_target");
    expect(await refused({ scope: "payments:write" })).toContain("invalid_scope");
    expect(await refused({ response_type: "token" })).toContain("unsupported_response_type");
    expect(rowCount(t, "oauth_requests")).toBe(0);
    for (const redirect of [
      "https://evil.example/callback",
      "http://attacker.example:4711/callback",
      "http://127.0.0.1:4711/other",
    ]) {
      const res = await t.request(
        "GET",
        authorizeUrl({ client_id: clientId, code_challenge: challenge, redirect_uri: redirect }),
      );
      expect(res.status).toBe(400);
      expect(res.headers.get("location")).toBeNull();
    }
    expect(
      (await t.request("GET", authorizeUrl({ client_id: "unknown", code_challenge: challenge }))).status,
    ).toBe(400);
    // A loopback redirect may use another port (desktop clients).
    expect(
      (
        await t.request(
          "GET",
          authorizeUrl({
            client_id: clientId,
            code_challenge: challenge,
            redirect_uri: "http://127.0.0.1:55555/callback",
          }),
        )
      ).status,
    ).toBe(302);
  });

  test("token requests: a swapped redirect URI, a replayed code, another client, a bad grant type", async () => {
    const { t, company, readable } = oauthApp();
    const approve = {
      company_id: company.company_id,
      accounts: [{ bank_account_id: readable.bank_account_id }],
    };
    const clientId = await register(t);
    const { verifier, challenge } = pkce();
    const callback = await approvedCallback(t, clientId, challenge, approve);
    const code = callback.searchParams.get("code")!;
    const exchange = (fields: Record<string, string>) =>
      form(t, "/oauth/token", {
        grant_type: "authorization_code",
        code,
        code_verifier: verifier,
        redirect_uri: REDIRECT,
        client_id: clientId,
        ...fields,
      });
    const error = async (res: Response) => ({
      status: res.status,
      ...((await res.json()) as { error: string }),
    });
    expect(await error(await exchange({ redirect_uri: "http://127.0.0.1:4711/other" }))).toMatchObject({
      status: 400,
      error: "invalid_grant",
    });
    const otherClient = await register(t, { client_name: "Other" });
    expect(await error(await exchange({ client_id: otherClient }))).toMatchObject({
      status: 400,
      error: "invalid_grant",
    });
    expect(await error(await exchange({ client_id: "nobody" }))).toMatchObject({
      status: 401,
      error: "invalid_client",
    });
    expect(await error(await exchange({ grant_type: "password" }))).toMatchObject({
      status: 400,
      error: "unsupported_grant_type",
    });
    const good = await exchange({});
    expect(good.status).toBe(200);
    const { access_token } = await json<{ access_token: string }>(good);
    // The code again: refused, and the grant it made is revoked (whoever replays it may be an attacker).
    expect(await error(await exchange({}))).toMatchObject({ status: 400, error: "invalid_grant" });
    expect((await mcpCall(t, access_token)).status).toBe(401);
  });

  test("a confidential client must authenticate; secrets are kept only as hashes", async () => {
    const { t, company, readable } = oauthApp();
    const res = await t.request("POST", "/oauth/register", {
      body: {
        client_name: "Server app",
        redirect_uris: ["https://app.example/cb"],
        token_endpoint_auth_method: "client_secret_post",
      },
    });
    const client = await json<{ client_id: string; client_secret: string }>(res);
    expect(client.client_secret).toBeString();
    const dump = JSON.stringify(t.db.query("SELECT * FROM oauth_clients").all());
    expect(dump).not.toContain(client.client_secret);
    const { verifier, challenge } = pkce();
    const callback = await approvedCallback(
      t,
      client.client_id,
      challenge,
      { company_id: company.company_id, accounts: [{ bank_account_id: readable.bank_account_id }] },
      { redirect_uri: "https://app.example/cb" },
    );
    const fields = {
      grant_type: "authorization_code",
      code: callback.searchParams.get("code")!,
      code_verifier: verifier,
      redirect_uri: "https://app.example/cb",
      client_id: client.client_id,
    };
    expect((await form(t, "/oauth/token", { ...fields, client_secret: "wrong" })).status).toBe(401);
    const basic = `Basic ${Buffer.from(`${client.client_id}:${client.client_secret}`).toString("base64")}`;
    expect((await form(t, "/oauth/token", fields, { authorization: basic })).status).toBe(200);
  });

  test("registration refuses redirect URIs that are not https or loopback, and non-JSON bodies", async () => {
    const { t } = oauthApp();
    for (const uris of [
      ["http://app.example/cb"],
      ["https://app.example/cb#frag"],
      [],
      ["javascript:alert(1)"],
    ]) {
      const res = await t.request("POST", "/oauth/register", { body: { redirect_uris: uris } });
      expect(res.status).toBe(400);
      expect((await json<{ error: string }>(res)).error).toMatch(/invalid_(redirect_uri|client_metadata)/);
    }
    const bad = await t.request("POST", "/oauth/register", { body: "{nope" });
    expect(bad.status).toBe(400);
  });
});

describe("client metadata documents", () => {
  test("a client known by its document's URL signs in; a document inside the network is refused unless allowed", async () => {
    const doc = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch: (req) =>
        Response.json({
          client_id: `http://127.0.0.1:${new URL(req.url).port}/client.json`,
          client_name: "Document client",
          redirect_uris: [REDIRECT],
          token_endpoint_auth_method: "none",
        }),
    });
    try {
      const url = `http://127.0.0.1:${doc.port}/client.json`;
      const allowed = oauthApp({ SVC_OAUTH_ALLOW_INTERNAL_CLIENTS: "on" });
      const res = await allowed.t.request(
        "GET",
        authorizeUrl({ client_id: url, code_challenge: pkce().challenge }),
      );
      expect(res.status).toBe(302);
      const pending = await json<{ requests: { client_name: string }[] }>(
        await allowed.t.admin("GET", "/oauth/requests"),
      );
      expect(pending.requests[0]?.client_name).toBe("Document client");
      // By default a document at an internal address (here loopback, over https) is never fetched.
      const strict = oauthApp();
      const refused = await strict.t.request(
        "GET",
        authorizeUrl({
          client_id: `https://127.0.0.1:${doc.port}/client.json`,
          code_challenge: pkce().challenge,
        }),
      );
      expect(refused.status).toBe(400);
      expect(await refused.text()).toContain("internal address");
      const requests = doc.pendingRequests;
      expect(requests).toBe(0);
    } finally {
      doc.stop(true);
    }
  });
});
