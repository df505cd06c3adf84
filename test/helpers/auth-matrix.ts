// Replays the specification's authentication and access matrix against one route: every failure
// kind, in the spec's order, with its exact status and code, each answered with the envelope and
// X-Request-Id. Later failures are arranged so that every earlier check passes.
import { expect } from "bun:test";
import type { TestApp } from "./app";
import { expectError } from "./envelope";

export interface MatrixRoute {
  method: string;
  /** Path for a request about `accountId` (and, for resource routes, a resource of that account). */
  path: (ctx: MatrixContext) => string;
  body?: (ctx: MatrixContext) => unknown;
  purpose: "integration" | "mcp";
  scope: "read_statements" | "send_payments";
  /** Whether the request names an account (so per-account checks apply). */
  accountScoped: boolean;
  /** Optional per-account setup, e.g. ordering a statement owned by the token under test. */
  prepare?: (ctx: MatrixContext, token: string) => Promise<Partial<MatrixContext>> | Partial<MatrixContext>;
}

export interface MatrixContext {
  accountId: string;
  resourceId?: string;
}

export async function runAuthMatrix(t: TestApp, route: MatrixRoute): Promise<void> {
  const f = t.fixtures;
  const company = f.company("ООО Матрица", "7719617469");
  const account = f.account(company.company_id);
  const other = f.company("АО Чужая", "7707083893");
  const otherAccount = f.account(other.company_id);
  const read = route.scope === "read_statements";
  const grant = (id: string, allowed = true) => ({
    bank_account_id: id,
    allow_read_statements: read ? allowed : false,
    allow_send_payments: read ? false : allowed,
  });
  const make = (over: Parameters<typeof f.token>[1] = {}) =>
    f.token(company.company_id, {
      purpose: route.purpose,
      read: read,
      send: !read,
      accounts: [grant(account.bank_account_id)],
      ...over,
    }).token;

  const good = make();
  let ctx: MatrixContext = { accountId: account.bank_account_id };
  if (route.prepare) ctx = { ...ctx, ...(await route.prepare(ctx, good)) };

  const send = (authorization: string | null, c: MatrixContext = ctx) => {
    const headers: Record<string, string> = {};
    if (authorization !== null) headers.authorization = authorization;
    return t.request(route.method, route.path(c), { body: route.body?.(c), headers });
  };

  // 1. format
  await expectError(await send(null), 401, "invalid_token_format");
  await expectError(await send(`Bearer sk_live_${"a".repeat(40)}`), 401, "invalid_token_format");
  await expectError(await send(`Basic ${good}`), 401, "invalid_token_format");
  // 2. known / revoked / expired
  await expectError(await send(`Bearer svc_live_${"Z".repeat(40)}`), 401, "invalid_token");
  const revoked = f.token(company.company_id, {
    purpose: route.purpose,
    read,
    send: !read,
    accounts: [grant(account.bank_account_id)],
  });
  t.services.admin.tokens.revoke(revoked.api_token_id);
  await expectError(await send(`Bearer ${revoked.token}`), 401, "invalid_token");
  const expired = make({ expires_at: new Date(t.clock.now().getTime() - 1000).toISOString() });
  await expectError(await send(`Bearer ${expired}`), 401, "invalid_token");
  // 3. IP
  const ipBound = make({ allowed_ips: ["10.0.0.0/8", "2001:db8::/32"] });
  await expectError(await send(`Bearer ${ipBound}`), 403, "forbidden_ip");
  // 4. purpose
  const wrongPurpose = f.token(company.company_id, {
    purpose: route.purpose === "integration" ? "mcp" : "integration",
    read: true,
    send: false,
    accounts: [{ bank_account_id: account.bank_account_id, allow_read_statements: true }],
  }).token;
  await expectError(await send(`Bearer ${wrongPurpose}`), 403, "forbidden_purpose");
  // 5. scope
  const noScope = make({ read: false, send: false });
  await expectError(await send(`Bearer ${noScope}`), 403, "forbidden_scope");

  if (route.accountScoped) {
    // 6. per-account allow: the token had it (and may own a resource) until an operator removed it.
    const withdrawn = f.token(company.company_id, {
      purpose: route.purpose,
      read,
      send: !read,
      accounts: [grant(account.bank_account_id)],
    });
    let withdrawnCtx: MatrixContext = { accountId: account.bank_account_id };
    if (route.prepare)
      withdrawnCtx = { ...withdrawnCtx, ...(await route.prepare(withdrawnCtx, withdrawn.token)) };
    t.services.admin.tokens.patch(withdrawn.api_token_id, {
      accounts: [grant(account.bank_account_id, false)],
    });
    await expectError(await send(`Bearer ${withdrawn.token}`, withdrawnCtx), 403, "forbidden_account");
    // 7. account of another company (only where the request names the account itself; a resource
    // of another company's account cannot belong to this token and is simply not found).
    if (!route.prepare) {
      await expectError(
        await send(`Bearer ${good}`, { accountId: otherAccount.bank_account_id }),
        403,
        "forbidden_company",
      );
    }
  }

  // The good token passes every check (whatever the route then answers, it is not an auth failure).
  const ok = await send(`Bearer ${good}`);
  expect([401, 403]).not.toContain(ok.status);
  expect(ok.headers.get("x-ratelimit-limit")).toBeTruthy();
}
