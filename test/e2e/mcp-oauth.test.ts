// lanes: sqlite postgres
// An agent host signing in to the real server's /mcp with the official SDK v2 client's OAuth:
// through dynamic registration and through a client metadata document (served over HTTPS), the
// operator's consent given through the admin API, then every tool; and step-up when the first
// consent granted less than the tools need.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  Client,
  type OAuthClientMetadata,
  type OAuthClientProvider,
  type OAuthDiscoveryState,
  type StoredOAuthClientInformation,
  type StoredOAuthTokens,
  StreamableHTTPClientTransport,
  UnauthorizedError,
} from "@modelcontextprotocol/client";
import { loadConfig } from "../../src/config";
import { silentLogger } from "../../src/core/logger";
import { withAccountKey } from "../../src/formats/validators";
import { type RunningServer, startServer } from "../../src/main";
import { TOOL_NAMES } from "../helpers/agent-server";
import { ADMIN_TOKEN } from "../helpers/app";
import { serverStoreEnv } from "../helpers/pg";
import { freePort } from "../helpers/server";
import { selfSignedCertificate } from "../helpers/tls";

const REDIRECT = "http://127.0.0.1:53682/callback";

let dir: string;
let server: RunningServer;
let base: string;
let companyId: string;
let accountId: string;
let cimd: ReturnType<typeof Bun.serve>;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "svc-oauth-"));
  // A self-signed certificate for the client's metadata document (its URL must be https).
  const { key, cert } = selfSignedCertificate("127.0.0.1", "IP:127.0.0.1");
  cimd = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    tls: { key, cert },
    fetch: (req) =>
      Response.json({
        client_id: req.url,
        client_name: "Document agent host",
        redirect_uris: [REDIRECT],
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
        token_endpoint_auth_method: "none",
      }),
  });
  const port = freePort();
  base = `http://127.0.0.1:${port}`;
  const config = loadConfig({
    SVC_DB_PATH: join(dir, "svc.db"),
    SVC_PORT: String(port),
    SVC_HOST: "127.0.0.1",
    SVC_PUBLIC_URL: base,
    SVC_ADMIN_TOKEN: ADMIN_TOKEN,
    SVC_SECRET_KEY: Buffer.alloc(32, 6).toString("base64"),
    // The document above is on 127.0.0.1: allowed here, refused by default.
    SVC_OAUTH_ALLOW_INTERNAL_CLIENTS: "on",
    ...serverStoreEnv(),
  });
  server = await startServer(config, {
    logger: silentLogger,
    // svc trusts the test's self-signed certificate, and nothing else changes.
    overrides: {
      oauthFetch: ((url, init) =>
        fetch(url, { ...init, tls: { rejectUnauthorized: false } })) as typeof fetch,
    },
  });
  const { admin } = server.services;
  const company = admin.companies.create({ name: "ООО Тест", inn: "7719617469" });
  companyId = company.company_id;
  accountId = admin.accounts.create({
    company_id: companyId,
    bank: "sandbox",
    account_number: withAccountKey("40702810900000000044", "044525225"),
    bik: "044525225",
  }).bank_account_id;
});

afterAll(async () => {
  await server?.stop();
  cimd?.stop(true);
  rmSync(dir, { recursive: true, force: true });
});

/** The operator's consent through the admin API; `scope` narrower on purpose for step-up. */
async function approve(consentLocation: string, scope?: string): Promise<URL> {
  const requestId = consentLocation.split("/").pop()!;
  const res = await fetch(`${base}/admin/api/oauth/requests/${requestId}/approve`, {
    method: "POST",
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify({ company_id: companyId, accounts: [{ bank_account_id: accountId }], scope }),
  });
  expect(res.status).toBe(200);
  return new URL(((await res.json()) as { redirect_to: string }).redirect_to);
}

/** An agent host without a browser: it follows the authorization URL and lets the operator approve. */
class TestProvider implements OAuthClientProvider {
  private client?: StoredOAuthClientInformation;
  private tok?: StoredOAuthTokens;
  private verifier?: string;
  private discovery?: OAuthDiscoveryState;
  lastState?: string;
  callback?: URL;
  readonly authorizations: URL[] = [];

  constructor(
    private readonly scopes: (string | undefined)[],
    readonly clientMetadataUrl?: string,
  ) {}
  readonly redirectUrl = REDIRECT;
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: "svc test agent host",
      redirect_uris: [REDIRECT],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    };
  }
  state() {
    this.lastState = crypto.randomUUID();
    return this.lastState;
  }
  clientInformation() {
    return this.client;
  }
  saveClientInformation(info: StoredOAuthClientInformation) {
    this.client = info;
  }
  tokens() {
    return this.tok;
  }
  saveTokens(t: StoredOAuthTokens) {
    this.tok = t;
  }
  saveCodeVerifier(v: string) {
    this.verifier = v;
  }
  codeVerifier() {
    if (!this.verifier) throw new Error("no verifier");
    return this.verifier;
  }
  saveDiscoveryState(s: OAuthDiscoveryState) {
    this.discovery = s;
  }
  discoveryState() {
    return this.discovery;
  }
  invalidateCredentials(scope: "all" | "client" | "tokens" | "verifier" | "discovery") {
    if (scope === "all" || scope === "client") this.client = undefined;
    if (scope === "all" || scope === "tokens") this.tok = undefined;
    if (scope === "all" || scope === "verifier") this.verifier = undefined;
    if (scope === "all" || scope === "discovery") this.discovery = undefined;
  }
  async redirectToAuthorization(url: URL) {
    this.authorizations.push(url);
    const res = await fetch(url, { redirect: "manual" });
    expect(res.status).toBe(302);
    this.callback = await approve(res.headers.get("location")!, this.scopes[this.authorizations.length - 1]);
  }
}

async function finish(transport: StreamableHTTPClientTransport, provider: TestProvider) {
  const q = provider.callback!.searchParams;
  provider.callback = undefined;
  // The client checks the issuer; the state is the caller's to check.
  expect(q.get("state")).toBe(provider.lastState!);
  await transport.finishAuth(q);
}

/** Connects; each time the server sends the client to sign in (first, or for more scope), the
 *  operator approves and the client connects again on a fresh transport. */
async function signIn(
  provider: TestProvider,
): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const url = new URL(`${base}/mcp`);
  for (let attempt = 0; attempt < 4; attempt++) {
    const client = new Client({ name: "svc-oauth-e2e", version: "1" });
    const transport = new StreamableHTTPClientTransport(url, { authProvider: provider });
    if (provider.callback) await finish(transport, provider);
    try {
      await client.connect(transport);
      return { client, transport };
    } catch (e) {
      if (!(e instanceof UnauthorizedError) || !provider.callback) throw e;
    }
  }
  throw new Error("never signed in");
}

async function everyTool(client: Client) {
  const { tools } = await client.listTools();
  expect(tools.map((t) => t.name).sort()).toEqual(TOOL_NAMES);
  const accounts = await client.callTool({ name: "list_bank_accounts", arguments: {} });
  expect(accounts.isError).toBeFalsy();
  expect(JSON.stringify(accounts.structuredContent)).toContain(accountId);
  for (const [name, args] of [
    ["list_companies", {}],
    ["get_balance", { bank_account_id: accountId }],
    ["list_statements", { bank_account_id: accountId }],
  ] as const) {
    const r = await client.callTool({ name, arguments: args });
    expect(r.isError, name).toBeFalsy();
  }
}

describe("the SDK v2 client signs in to /mcp", () => {
  test("with dynamic client registration", async () => {
    const provider = new TestProvider([undefined]);
    const { client } = await signIn(provider);
    try {
      expect(provider.clientInformation()?.client_id).toMatch(/^svc-client-/);
      const asked = provider.authorizations[0]!.searchParams;
      expect(asked.get("code_challenge_method")).toBe("S256");
      expect(asked.get("resource")).toBe(`${base}/mcp`);
      await everyTool(client);
    } finally {
      await client.close();
    }
  });

  test("with a client metadata document (its URL is the client id)", async () => {
    const documentUrl = `https://127.0.0.1:${cimd.port}/oauth/client.json`;
    const provider = new TestProvider([undefined], documentUrl);
    const { client } = await signIn(provider);
    try {
      expect(provider.authorizations[0]!.searchParams.get("client_id")).toBe(documentUrl);
      await everyTool(client);
      const clients = (await (
        await fetch(`${base}/admin/api/oauth/clients`, {
          headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
        })
      ).json()) as { clients: { client_id: string; name: string }[] };
      expect(clients.clients.find((c) => c.client_id === documentUrl)?.name).toBe("Document agent host");
    } finally {
      await client.close();
    }
  });

  test("step-up: a first consent without the scope, then 403 insufficient_scope, a second consent, and the tools work", async () => {
    const provider = new TestProvider(["", undefined]);
    const { client } = await signIn(provider);
    try {
      // The first token could not even open the session (403 insufficient_scope naming
      // statements:read); the client asked again for it and the operator approved.
      expect(provider.authorizations).toHaveLength(2);
      expect(provider.authorizations[1]!.searchParams.get("scope")).toContain("statements:read");
      const result = await client.callTool({ name: "list_bank_accounts", arguments: {} });
      expect(result.isError).toBeFalsy();
    } finally {
      await client.close();
    }
  });
});

describe("the conformance suite's authorization checks", () => {
  test("authorization-server metadata and the authorization code grant pass (the operator approves through the admin API)", async () => {
    const callbackPort = freePort();
    const redirect = `http://127.0.0.1:${callbackPort}/callback`;
    const registered = (await (
      await fetch(`${base}/oauth/register`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          client_name: "conformance",
          redirect_uris: [redirect],
          token_endpoint_auth_method: "none",
        }),
      })
    ).json()) as { client_id: string };
    const cli = join(import.meta.dir, "../../node_modules/@modelcontextprotocol/conformance/dist/index.js");
    const proc = Bun.spawn(
      [
        process.execPath,
        cli,
        "authorization",
        "--url",
        base,
        "--client-id",
        registered.client_id,
        "--resource",
        `${base}/mcp`,
        "--port",
        String(callbackPort),
      ],
      { stdout: "pipe", stderr: "pipe", env: { ...process.env, NO_COLOR: "1" } },
    );
    let output = "";
    let approved = false;
    const escaped = base.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    for await (const chunk of proc.stdout) {
      output += new TextDecoder().decode(chunk);
      const m = !approved && new RegExp(`(${escaped}/oauth/authorize\\?\\S+)`).exec(output);
      if (m) {
        approved = true;
        // The browser: the authorization URL, the consent (approved by the operator), the callback.
        const res = await fetch(m[1]!, { redirect: "manual" });
        const callback = await approve(res.headers.get("location")!);
        await fetch(callback);
      }
    }
    const code = await proc.exited;
    const stderr = await new Response(proc.stderr).text();
    if (code !== 0 || process.env.SHOW_CONFORMANCE) console.error(output, stderr);
    expect(approved).toBe(true);
    const total = /Total: (\d+) passed, (\d+) failed/.exec(output);
    expect(Number(total?.[1])).toBeGreaterThanOrEqual(3);
    expect(Number(total?.[2])).toBe(0);
    expect(code).toBe(0);
  }, 60_000);
});
