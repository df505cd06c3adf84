// Seeding a running svc through its admin API, and the agent-endpoint calls the benchmarks make.
import { createHash, randomBytes } from "node:crypto";
import { withAccountKey } from "../../src/formats/validators";
import type { RunningProcess } from "../../test/helpers/server";
import type { RawRequest } from "./wrk";

const PROTOCOL_VERSION = "2025-06-18";
const MCP_ACCEPT = "application/json, text/event-stream";

async function ok<T>(res: Promise<Response>, what: string): Promise<T> {
  const r = await res;
  const text = await r.text();
  if (!r.ok) throw new Error(`${what}: HTTP ${r.status} ${text}`);
  return JSON.parse(text) as T;
}

let accountSeq = 0;

export async function createCompany(server: RunningProcess): Promise<string> {
  const c = await ok<{ company_id: string }>(
    server.admin("POST", "/companies", { name: "ООО Бенчмарк", inn: "7719617469" }),
    "company",
  );
  return c.company_id;
}

export async function createAccount(server: RunningProcess, companyId: string, opsPerDay: number) {
  return (await newAccount(server, companyId, "sandbox", { ops_per_day: opsPerDay })).accountId;
}

/** An account of bank kind `file`: its statements are the bank's 1C files, imported. */
export function createFileAccount(server: RunningProcess, companyId: string) {
  return newAccount(server, companyId, "file");
}

async function newAccount(
  server: RunningProcess,
  companyId: string,
  bank: string,
  sandbox?: { ops_per_day: number },
): Promise<{ accountId: string; number: string }> {
  accountSeq += 1;
  const number = withAccountKey(`40702810${String(900000000000 + accountSeq).slice(-12)}`, "044525225");
  const a = await ok<{ bank_account_id: string }>(
    server.admin("POST", "/bank-accounts", {
      company_id: companyId,
      bank,
      account_number: number,
      bik: "044525225",
      alias: `bench${accountSeq}`,
      sandbox,
    }),
    "bank account",
  );
  return { accountId: a.bank_account_id, number };
}

export async function createTokens(
  server: RunningProcess,
  o: {
    companyId: string;
    accountIds: string[];
    purpose: "integration" | "mcp";
    count: number;
    /** live: reaches every bank (a test token reaches sandbox banks only). */
    mode?: "live" | "test";
  },
): Promise<{ token: string; id: string }[]> {
  const out: { token: string; id: string }[] = [];
  for (let i = 0; i < o.count; i++) {
    const t = await ok<{ token: string; api_token_id: string }>(
      server.admin("POST", "/tokens", {
        company_id: o.companyId,
        name: `bench-${o.purpose}-${i}`,
        purpose: o.purpose,
        mode: o.mode ?? "test",
        scope_read_statements: true,
        accounts: o.accountIds.map((id) => ({ bank_account_id: id, allow_read_statements: true })),
        rate_limit_per_minute: 10000,
      }),
      "token",
    );
    out.push({ token: t.token, id: t.api_token_id });
  }
  return out;
}

/** POST one statement order (the raw response: the load loops count statuses themselves). */
export function orderRequest(
  url: string,
  token: string,
  o: { accountId: string; externalId: string; from: string; to: string },
): Promise<Response> {
  return fetch(`${url}/api/v1/integration/statements`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({
      bank_account_id: o.accountId,
      external_id: o.externalId,
      date_from: o.from,
      date_to: o.to,
    }),
  });
}

export async function orderStatement(
  url: string,
  token: string,
  o: { accountId: string; externalId: string; from: string; to: string },
): Promise<string> {
  const s = await ok<{ statement_id: string }>(orderRequest(url, token, o), "order");
  return s.statement_id;
}

export function mcpHeaders(token: string, sessionId?: string): Record<string, string> {
  const h: Record<string, string> = {
    Authorization: `Bearer ${token}`,
    "Content-Type": "application/json",
    Accept: MCP_ACCEPT,
    "MCP-Protocol-Version": PROTOCOL_VERSION,
  };
  if (sessionId) h["Mcp-Session-Id"] = sessionId;
  return h;
}

/** The JSON-RPC initialize request every benchmark client sends first. */
export function initializeMessage() {
  return {
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: {
      protocolVersion: PROTOCOL_VERSION,
      capabilities: {},
      clientInfo: { name: "bench", version: "1" },
    },
  };
}

/** initialize + notifications/initialized; returns the session id. */
export async function mcpSession(endpoint: string, token: string): Promise<string> {
  const init = await fetch(endpoint, {
    method: "POST",
    headers: mcpHeaders(token),
    body: JSON.stringify(initializeMessage()),
  });
  const sessionId = init.headers.get("mcp-session-id");
  const text = await init.text();
  if (!init.ok || !sessionId) throw new Error(`initialize: HTTP ${init.status} ${text}`);
  const note = await fetch(endpoint, {
    method: "POST",
    headers: mcpHeaders(token, sessionId),
    body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
  });
  await note.text();
  return sessionId;
}

export function toolCallBody(name: string, args: Record<string, unknown>, id = 2): string {
  return JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: args } });
}

export async function mcpCall(
  endpoint: string,
  token: string,
  sessionId: string,
  name: string,
  args: Record<string, unknown>,
): Promise<{ status: number; text: string; json: Record<string, unknown> }> {
  const res = await fetch(endpoint, {
    method: "POST",
    headers: mcpHeaders(token, sessionId),
    body: toolCallBody(name, args),
  });
  const text = await res.text();
  return { status: res.status, text, json: JSON.parse(text) as Record<string, unknown> };
}

/** One get_balance call per agent token, each on its own session (what wrk rotates over); `path`
 *  is the peer's endpoint when the peer is measured. */
export function agentCallRequests(
  tokens: { token: string }[],
  sessions: string[],
  accountId: string,
  path = "/api/v1/mcp",
): RawRequest[] {
  const body = toolCallBody("get_balance", { bank_account_id: accountId });
  return tokens.map((t, i) => ({
    method: "POST",
    path,
    headers: mcpHeaders(t.token, sessions[i]),
    body,
  }));
}

/** The same get_balance call in the stateless revision (2026-07-28): no session, `_meta` and
 *  the routing headers instead. */
export function statelessCallRequests(
  tokens: { token: string }[],
  accountId: string,
  path = "/api/v1/mcp",
): RawRequest[] {
  const body = JSON.stringify({
    jsonrpc: "2.0",
    id: 2,
    method: "tools/call",
    params: {
      name: "get_balance",
      arguments: { bank_account_id: accountId },
      _meta: {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
      },
    },
  });
  return tokens.map((t) => ({
    method: "POST",
    path,
    headers: {
      Authorization: `Bearer ${t.token}`,
      "Content-Type": "application/json",
      Accept: MCP_ACCEPT,
      "MCP-Protocol-Version": "2026-07-28",
      "Mcp-Method": "tools/call",
      "Mcp-Name": "get_balance",
    },
    body,
  }));
}

/**
 * An OAuth access token for /mcp, the way an agent host gets one: registration, the authorization
 * request, the operator's consent (admin API), the code exchange with its PKCE verifier.
 */
export async function oauthAccessToken(
  server: { url: string; admin(method: string, path: string, body?: unknown): Promise<Response> },
  companyId: string,
  accountId: string,
): Promise<string> {
  const redirect = "http://127.0.0.1:9/callback";
  const prm = (await (await fetch(`${server.url}/.well-known/oauth-protected-resource/mcp`)).json()) as {
    resource: string;
  };
  const client = (await (
    await fetch(`${server.url}/oauth/register`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        client_name: "bench",
        redirect_uris: [redirect],
        token_endpoint_auth_method: "none",
      }),
    })
  ).json()) as { client_id: string };
  const verifier = randomBytes(32).toString("base64url");
  const challenge = createHash("sha256").update(verifier).digest("base64url");
  const query = new URLSearchParams({
    response_type: "code",
    client_id: client.client_id,
    redirect_uri: redirect,
    code_challenge: challenge,
    code_challenge_method: "S256",
    resource: prm.resource,
  });
  const authorize = await fetch(`${server.url}/oauth/authorize?${query}`, { redirect: "manual" });
  const requestId = authorize.headers.get("location")?.split("/").pop();
  if (!requestId) throw new Error(`authorize: ${authorize.status}`);
  const approved = await server.admin("POST", `/oauth/requests/${requestId}/approve`, {
    company_id: companyId,
    accounts: [{ bank_account_id: accountId }],
  });
  const code = new URL(((await approved.json()) as { redirect_to: string }).redirect_to).searchParams.get(
    "code",
  );
  const token = await fetch(`${server.url}/oauth/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({
      grant_type: "authorization_code",
      code: code ?? "",
      code_verifier: verifier,
      redirect_uri: redirect,
      client_id: client.client_id,
    }).toString(),
  });
  if (!token.ok) throw new Error(`token: ${token.status} ${await token.text()}`);
  return ((await token.json()) as { access_token: string }).access_token;
}

/** One statement poll per integration token, each for its own statement. */
export function pollRequests(tokens: { token: string }[], statementIds: string[]): RawRequest[] {
  return tokens.map((t, i) => ({
    method: "GET",
    path: `/api/v1/integration/statements/${statementIds[i]}`,
    headers: { Authorization: `Bearer ${t.token}` },
  }));
}
