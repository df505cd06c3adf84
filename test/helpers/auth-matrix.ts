// Replays the specification's authentication and access matrix against one token route: every
// failure kind, in the spec's order, with its exact status and code, each answered with the
// envelope and X-Request-Id. Later failures are arranged so that every earlier check passes.
//
// A route says how its request is sent (a JSON body, a multipart upload, extra headers such as
// X-MCP-Session-Id, a JSON-RPC message), which purpose and scope it needs, whether it names an
// account (then the per-account checks run too), whether the Origin check sits between IP and
// purpose (the agent endpoint), and optionally a refusal of its own (a header or field wrong) that
// every token failure must win over.
import { expect } from "bun:test";
import { BASE, type TestApp } from "./app";
import { expectError } from "./envelope";

/** One request: a JSON body (sent as application/json), or a multipart form, and headers. */
export interface MatrixRequest {
  method: string;
  path: string;
  body?: unknown;
  headers?: Record<string, string>;
}

export interface MatrixContext {
  accountId: string;
  accountNumber: string;
  /** A resource of the token under test (an import, a statement, a session), from `prepare`. */
  resourceId?: string;
  itemId?: string;
}

export interface MatrixRoute {
  name: string;
  purpose: "integration" | "mcp";
  scope: "read_statements" | "send_payments";
  /** The request for the context (the Authorization header is added by the matrix). */
  request: (ctx: MatrixContext) => MatrixRequest;
  /** The accounts' bank (sandbox unless given) and the tokens' mode (test unless given). */
  bank?: string;
  mode?: "live" | "test";
  /** Whether the request names an account (so the per-account checks apply). */
  accountScoped: boolean;
  /** Per-token setup, e.g. a statement or import owned by the token under test. */
  prepare?: (t: TestApp, ctx: MatrixContext, token: string) => Promise<Partial<MatrixContext>>;
  /** The agent endpoint: Origin is checked after IP, before purpose (src/mcp/routes.ts). */
  originChecked?: boolean;
  /** A request the route refuses on its own once the token passed; every token failure comes first. */
  ownRefusal?: { request: (ctx: MatrixContext) => MatrixRequest; status: number; code: string };
  /** The statuses of a request that passed every check (any but 401/403 unless given). */
  ok?: number[];
}

const FOREIGN_ORIGIN = "https://evil.example";

/** Sends a matrix request with this Authorization header (null: none) through the app. */
function sendMatrixRequest(
  t: TestApp,
  r: MatrixRequest,
  authorization: string | null,
  extra: Record<string, string> = {},
): Promise<Response> {
  const headers: Record<string, string> = { ...r.headers, ...extra };
  if (authorization !== null) headers.authorization = authorization;
  let body: FormData | string | undefined;
  if (r.body instanceof FormData) body = r.body;
  else if (r.body !== undefined) {
    body = typeof r.body === "string" ? r.body : JSON.stringify(r.body);
    headers["content-type"] ??= "application/json";
  }
  return t.app.handle(new Request(`${BASE}${r.path}`, { method: r.method, headers, body }));
}

export async function runAuthMatrix(t: TestApp, route: MatrixRoute): Promise<void> {
  const f = t.fixtures;
  const bank = route.bank ?? "sandbox";
  const company = f.company("ООО Матрица", "7719617469");
  const account = f.account(company.company_id, bank);
  const other = f.company("АО Чужая", "7707083893");
  const otherAccount = f.account(other.company_id, bank);
  const read = route.scope === "read_statements";
  const numberOf = (id: string) => t.services.accounts.findById(id)!.accountNumber;
  const grant = (id: string, allowed = true) => ({
    bank_account_id: id,
    // Withdrawn from a payment token, reading stays: the account is known, paying from it is not.
    allow_read_statements: read ? allowed : true,
    allow_send_payments: read ? false : allowed,
  });
  const issue = (over: Parameters<typeof f.token>[1] = {}) =>
    f.token(company.company_id, {
      purpose: route.purpose,
      mode: route.mode,
      read,
      send: !read,
      accounts: [grant(account.bank_account_id)],
      ...over,
    });
  const base: MatrixContext = {
    accountId: account.bank_account_id,
    accountNumber: numberOf(account.bank_account_id),
  };
  /** The context for a token: its own resource, where the route acts on one. */
  const contextFor = async (token: string): Promise<MatrixContext> =>
    route.prepare ? { ...base, ...(await route.prepare(t, base, token)) } : base;

  const good = issue().token;
  const ctx = await contextFor(good);
  const send = (authorization: string | null, c: MatrixContext = ctx, extra?: Record<string, string>) =>
    sendMatrixRequest(t, route.request(c), authorization, extra);
  /** A token-level refusal: the route's request, and its own wrong request too, get it. */
  const refused = async (
    authorization: string | null,
    status: number,
    code: string,
    extra?: Record<string, string>,
  ) => {
    await expectError(await send(authorization, ctx, extra), status, code);
    if (route.ownRefusal) {
      await expectError(
        await sendMatrixRequest(t, route.ownRefusal.request(ctx), authorization, extra),
        status,
        code,
      );
    }
  };
  const bearer = (raw: string) => `Bearer ${raw}`;

  // 1. format
  await refused(null, 401, "invalid_token_format");
  await refused(`Bearer sk_live_${"a".repeat(40)}`, 401, "invalid_token_format");
  await refused(`Basic ${good}`, 401, "invalid_token_format");
  await refused(`Token ${good}`, 401, "invalid_token_format");
  // 2. known / revoked / expired
  await refused(bearer(`svc_live_${"Z".repeat(40)}`), 401, "invalid_token");
  const revoked = issue();
  t.services.admin.tokens.revoke(revoked.api_token_id);
  await refused(bearer(revoked.token), 401, "invalid_token");
  const expired = issue({ expires_at: new Date(t.clock.now().getTime() - 1000).toISOString() });
  await refused(bearer(expired.token), 401, "invalid_token");
  // 3. IP; the same token from inside its ranges gets past it.
  const ipBound = issue({ allowed_ips: ["10.0.0.0/8", "2001:db8::/32"] }).token;
  await refused(bearer(ipBound), 403, "forbidden_ip");
  for (const inside of ["10.1.2.3", "2001:db8::5"]) {
    t.clientIp.value = inside;
    const res = await send(bearer(ipBound), await contextFor(ipBound));
    expect([401, 403]).not.toContain(res.status);
    t.clientIp.value = "127.0.0.1";
  }
  // The rate limit comes before the IP check (and everything after it): past its one request a
  // minute, a token refused for its address is 429.
  const limited = issue({ allowed_ips: ["10.0.0.0/8"], rate_limit_per_minute: 1 }).token;
  await expectError(await send(bearer(limited)), 403, "forbidden_ip");
  const over = await send(bearer(limited));
  expect(over.headers.get("retry-after")).toBeTruthy();
  await expectError(over, 429, "rate_limited");
  // 3½. Origin: on the agent endpoint after IP, before purpose and scope; elsewhere not checked.
  const wrongPurpose = f.token(company.company_id, {
    purpose: route.purpose === "integration" ? "mcp" : "integration",
    mode: route.mode,
    read: true,
    send: false,
    accounts: [{ bank_account_id: account.bank_account_id, allow_read_statements: true }],
  }).token;
  const noScope = issue({ read: false, send: false }).token;
  const foreign = { origin: FOREIGN_ORIGIN };
  if (route.originChecked) {
    await refused(null, 401, "invalid_token_format", foreign);
    await refused(bearer(`svc_live_${"Z".repeat(40)}`), 401, "invalid_token", foreign);
    await refused(bearer(ipBound), 403, "forbidden_ip", foreign);
    await refused(bearer(good), 403, "forbidden_origin", foreign);
    await refused(bearer(wrongPurpose), 403, "forbidden_origin", foreign);
    await refused(bearer(noScope), 403, "forbidden_origin", foreign);
  } else {
    const res = await send(bearer(good), await contextFor(good), foreign);
    expect([401, 403]).not.toContain(res.status);
  }
  // 4. purpose (an agent token can never hold payment rights: its purpose alone fails)
  await refused(bearer(wrongPurpose), 403, "forbidden_purpose");
  // 5. scope
  await refused(bearer(noScope), 403, "forbidden_scope");
  // The route's own refusal comes only after every token check passed.
  if (route.ownRefusal) {
    const own = route.ownRefusal;
    await expectError(await sendMatrixRequest(t, own.request(ctx), bearer(good)), own.status, own.code);
  }

  if (route.accountScoped) {
    // 6. per-account allow: the token had it (and may own a resource) until an operator removed it.
    const withdrawn = issue();
    const withdrawnCtx = await contextFor(withdrawn.token);
    t.services.admin.tokens.patch(withdrawn.api_token_id, {
      accounts: [grant(account.bank_account_id, false)],
    });
    await expectError(await send(bearer(withdrawn.token), withdrawnCtx), 403, "forbidden_account");
    // 7. another company's account: named in the request; for a resource, its account moved to
    // another company behind the repositories.
    if (!route.prepare) {
      const otherCtx = {
        accountId: otherAccount.bank_account_id,
        accountNumber: numberOf(otherAccount.bank_account_id),
      };
      await expectError(await send(bearer(good), otherCtx), 403, "forbidden_company");
    } else {
      const mover = issue().token;
      const moved = await contextFor(mover);
      const move = (companyId: string) => {
        t.db
          .query("UPDATE bank_accounts SET company_id = ? WHERE id = ?")
          .run(companyId, account.bank_account_id);
        t.services.externalChanges.invalidate();
      };
      move(other.company_id);
      await expectError(await send(bearer(mover), moved), 403, "forbidden_company");
      move(company.company_id);
    }
  }

  // The good token passes every check, with the rate-limit headers and a request id.
  const ok = await send(bearer(good));
  if (route.ok) expect(route.ok).toContain(ok.status);
  else expect([401, 403]).not.toContain(ok.status);
  expect(ok.headers.get("x-ratelimit-limit")).toBeTruthy();
  expect(ok.headers.get("x-request-id")).toBeTruthy();
}
