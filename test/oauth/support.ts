// An agent host signing in to /mcp over HTTP, step by step: registration, the authorization
// request, the operator's consent (admin API), the code exchange; PKCE as a client does it.
import { expect } from "bun:test";
import { createHash, randomBytes } from "node:crypto";
import { BASE, json, makeTestApp, type TestApp } from "../helpers/app";

export const PUBLIC = "https://svc.example.com";
export const REDIRECT = "http://127.0.0.1:4711/callback";

export function oauthApp(env: Record<string, string> = {}) {
  const t = makeTestApp({ SVC_PUBLIC_URL: PUBLIC, ...env });
  const company = t.fixtures.company();
  const readable = t.fixtures.account(company.company_id, "sandbox");
  const other = t.fixtures.account(company.company_id, "sandbox");
  return { t, company, readable, other };
}

/** Rows in one of the OAuth tables, on either store. */
export function rowCount(t: TestApp, table: string): number {
  return Number((t.db.query(`SELECT count(*) AS n FROM ${table}`).get() as { n: number | string }).n);
}

export function pkce() {
  const verifier = randomBytes(32).toString("base64url");
  return { verifier, challenge: createHash("sha256").update(verifier).digest("base64url") };
}

export function form(
  t: TestApp,
  path: string,
  fields: Record<string, string>,
  headers: Record<string, string> = {},
) {
  return t.app.handle(
    new Request(`${BASE}${path}`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
      body: new URLSearchParams(fields).toString(),
    }),
  );
}

export async function register(t: TestApp, body: Record<string, unknown> = {}): Promise<string> {
  const res = await t.request("POST", "/oauth/register", {
    body: {
      client_name: "Test agent host",
      redirect_uris: [REDIRECT],
      token_endpoint_auth_method: "none",
      ...body,
    },
  });
  expect(res.status).toBe(201);
  return (await json<{ client_id: string }>(res)).client_id;
}

export function authorizeUrl(params: Record<string, string>): string {
  return `/oauth/authorize?${new URLSearchParams({
    response_type: "code",
    redirect_uri: REDIRECT,
    code_challenge_method: "S256",
    scope: "statements:read",
    resource: `${PUBLIC}/mcp`,
    state: "st-1",
    ...params,
  }).toString()}`;
}

/** authorize → consent approved by the operator → the client's callback URL. */
export async function approvedCallback(
  t: TestApp,
  clientId: string,
  challenge: string,
  approve: { company_id: string; accounts: { bank_account_id: string }[]; scope?: string },
  extra: Record<string, string> = {},
): Promise<URL> {
  const res = await t.request(
    "GET",
    authorizeUrl({ client_id: clientId, code_challenge: challenge, ...extra }),
  );
  expect(res.status).toBe(302);
  const consent = res.headers.get("location")!;
  expect(consent).toMatch(/^\/admin\/oauth\/consent\/[0-9a-f]{32}$/);
  const requestId = consent.split("/").pop()!;
  const approved = await t.admin("POST", `/oauth/requests/${requestId}/approve`, approve);
  expect(approved.status).toBe(200);
  return new URL((await json<{ redirect_to: string }>(approved)).redirect_to);
}

export async function signedIn(
  t: TestApp,
  approve: { company_id: string; accounts: { bank_account_id: string }[]; scope?: string },
) {
  const clientId = await register(t);
  const { verifier, challenge } = pkce();
  const callback = await approvedCallback(t, clientId, challenge, approve);
  const tokens = await exchangeCode(t, clientId, callback, verifier);
  return { clientId, callback, tokens };
}

/** The code of an approved callback for the client's tokens. */
export async function exchangeCode(t: TestApp, clientId: string, callback: URL, verifier: string) {
  const res = await form(t, "/oauth/token", {
    grant_type: "authorization_code",
    code: callback.searchParams.get("code")!,
    code_verifier: verifier,
    redirect_uri: REDIRECT,
    client_id: clientId,
    resource: `${PUBLIC}/mcp`,
  });
  expect(res.status).toBe(200);
  return json<{ access_token: string; refresh_token: string; expires_in: number; scope: string }>(res);
}

/** A stateless tools/call on /mcp with a bearer token. */
export function mcpCall(t: TestApp, token: string | null, name = "list_bank_accounts", path = "/mcp") {
  return t.request("POST", path, {
    ...(token === null ? {} : { token }),
    body: {
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: {
        name,
        arguments: {},
        _meta: {
          "io.modelcontextprotocol/protocolVersion": "2026-07-28",
          "io.modelcontextprotocol/clientCapabilities": {},
        },
      },
    },
    headers: { "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call", "mcp-name": name },
  });
}
