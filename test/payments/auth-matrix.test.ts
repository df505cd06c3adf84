// The authentication and access matrix, replayed against every payment route: each failure kind
// with its status, code, envelope and X-Request-Id; each later check with every earlier one passing.
import { describe, expect, test } from "bun:test";
import { makeTestApp, type TestApp } from "../helpers/app";
import { expectError } from "../helpers/envelope";
import { bodyOf, expectNoBankSecrets, paymentFile, recordResponses, seenBodies, upload } from "./support";

const BASE_PATH = "/api/v1/integration/payments/imports";

interface World {
  t: TestApp;
  companyId: string;
  accountId: string;
  accountNumber: string;
  otherAccountId: string;
}

interface Target {
  importId: string;
  itemId: string;
}

interface Route {
  name: string;
  /** Sends the route's request with this Authorization header (null: none). */
  send(w: World, authorization: string | null, target: Target, accountId?: string): Promise<Response>;
  /** Whether the route acts on an import (so a token needs one of its own). */
  resource: boolean;
}

const routes: Route[] = [
  {
    name: "POST /imports",
    resource: false,
    send: (w, authorization, _target, accountId = w.accountId) => {
      const headers: Record<string, string> = authorization === null ? {} : { authorization };
      const form = new FormData();
      form.append("bank_account_id", accountId);
      form.append("file", new Blob([paymentFile(w.accountNumber) as Uint8Array<ArrayBuffer>]), "p.txt");
      return w.t.app.handle(
        new Request(`http://localhost${BASE_PATH}`, { method: "POST", headers, body: form }),
      );
    },
  },
  {
    name: "GET /imports/{id}",
    resource: true,
    send: (w, authorization, target) =>
      w.t.request("GET", `${BASE_PATH}/${target.importId}`, {
        headers: authorization === null ? {} : { authorization },
      }),
  },
  {
    name: "POST /imports/{id}/submit",
    resource: true,
    send: (w, authorization, target) =>
      w.t.request("POST", `${BASE_PATH}/${target.importId}/submit`, {
        headers: authorization === null ? {} : { authorization },
        body: { external_id: `m-${crypto.randomUUID()}` },
      }),
  },
  {
    name: "POST /imports/{id}/items/{item_id}/submit",
    resource: true,
    send: (w, authorization, target) =>
      w.t.request("POST", `${BASE_PATH}/${target.importId}/items/${target.itemId}/submit`, {
        headers: authorization === null ? {} : { authorization },
        body: { external_id: `m-${crypto.randomUUID()}` },
      }),
  },
];

function world(): World {
  const t = makeTestApp();
  recordResponses(t);
  const company = t.fixtures.company("ООО Матрица", "7719617469");
  const account = t.fixtures.account(company.company_id);
  const other = t.fixtures.company("АО Чужая", "7707083893");
  const otherAccount = t.fixtures.account(other.company_id);
  return {
    t,
    companyId: company.company_id,
    accountId: account.bank_account_id,
    accountNumber: t.services.accounts.findById(account.bank_account_id)!.accountNumber,
    otherAccountId: otherAccount.bank_account_id,
  };
}

function token(w: World, over: Parameters<TestApp["fixtures"]["token"]>[1] = {}) {
  return w.t.fixtures.token(w.companyId, {
    send: true,
    accounts: [{ bank_account_id: w.accountId, allow_send_payments: true }],
    ...over,
  });
}

async function importOf(w: World, raw: string): Promise<Target> {
  const res = await upload(w.t, raw, w.accountId, paymentFile(w.accountNumber));
  expect(res.status).toBe(201);
  const body = await bodyOf<{ import_id: string; items: { item_id: string }[] }>(res);
  return { importId: body.import_id, itemId: body.items[0]!.item_id };
}

describe.each(routes)("auth matrix: $name", (route) => {
  test("every check, in order, with envelope and X-Request-Id", async () => {
    const w = world();
    const good = token(w);
    const target = await importOf(w, good.token);
    const bearer = (raw: string) => `Bearer ${raw}`;

    await expectError(await route.send(w, null, target), 401, "invalid_token_format");
    await expectError(
      await route.send(w, `Bearer sk_live_${"a".repeat(40)}`, target),
      401,
      "invalid_token_format",
    );
    await expectError(await route.send(w, `Token ${good.token}`, target), 401, "invalid_token_format");
    await expectError(
      await route.send(w, bearer(`svc_live_${"Z".repeat(40)}`), target),
      401,
      "invalid_token",
    );

    const revoked = token(w);
    w.t.services.admin.tokens.revoke(revoked.api_token_id);
    await expectError(await route.send(w, bearer(revoked.token), target), 401, "invalid_token");

    const expired = token(w, { expires_at: new Date(w.t.clock.now().getTime() - 1000).toISOString() });
    await expectError(await route.send(w, bearer(expired.token), target), 401, "invalid_token");

    const ipBound = token(w, { allowed_ips: ["10.0.0.0/8"] });
    await expectError(await route.send(w, bearer(ipBound.token), target), 403, "forbidden_ip");
    // The same token from inside its range gets past the IP check.
    w.t.clientIp.value = "10.1.2.3";
    expect([401, 403]).not.toContain(
      (await route.send(w, bearer(ipBound.token), route.resource ? await importOf(w, ipBound.token) : target))
        .status,
    );
    w.t.clientIp.value = "127.0.0.1";

    // An agent token can never hold payment rights; its purpose alone fails the check.
    const agent = token(w, {
      purpose: "mcp",
      read: true,
      send: false,
      accounts: [{ bank_account_id: w.accountId, allow_read_statements: true }],
    });
    await expectError(await route.send(w, bearer(agent.token), target), 403, "forbidden_purpose");

    const noScope = token(w, { send: false });
    await expectError(await route.send(w, bearer(noScope.token), target), 403, "forbidden_scope");

    // Per-account allow: held (the token uploaded its own import) until an operator removed it.
    const withdrawn = token(w);
    const withdrawnTarget = route.resource ? await importOf(w, withdrawn.token) : target;
    w.t.services.admin.tokens.patch(withdrawn.api_token_id, {
      accounts: [{ bank_account_id: w.accountId, allow_read_statements: true, allow_send_payments: false }],
    });
    await expectError(
      await route.send(w, bearer(withdrawn.token), withdrawnTarget),
      403,
      "forbidden_account",
    );

    // Another company's account: named in the upload; for an import, its account moved company.
    if (!route.resource) {
      await expectError(
        await route.send(w, bearer(good.token), target, w.otherAccountId),
        403,
        "forbidden_company",
      );
    } else {
      const mover = token(w);
      const moved = await importOf(w, mover.token);
      const otherCompany = w.t.services.accounts.findById(w.otherAccountId)!.companyId;
      w.t.db.query("UPDATE bank_accounts SET company_id = ? WHERE id = ?").run(otherCompany, w.accountId);
      w.t.services.externalChanges.invalidate(); // changed behind the repositories
      await expectError(await route.send(w, bearer(mover.token), moved), 403, "forbidden_company");
      w.t.db.query("UPDATE bank_accounts SET company_id = ? WHERE id = ?").run(w.companyId, w.accountId);
      w.t.services.externalChanges.invalidate();
    }

    // The good token passes every check, with the rate-limit headers.
    const ok = await route.send(w, bearer(good.token), target);
    expect([200, 201]).toContain(ok.status);
    expect(ok.headers.get("x-ratelimit-limit")).toBeTruthy();
    expect(ok.headers.get("x-request-id")).toBeTruthy();
  });
});

test("a sandbox-only (test) token cannot pay from a live bank's account", async () => {
  const w = world();
  const company = w.t.fixtures.company("ООО Живой", "7719617469");
  w.t.services.banks.register({ ...w.t.services.banks.get("sandbox"), bank: "livebank" } as never);
  const live = w.t.fixtures.account(company.company_id, "livebank");
  const raw = w.t.fixtures.token(company.company_id, {
    send: true,
    mode: "test",
    accounts: [{ bank_account_id: live.bank_account_id, allow_send_payments: true }],
  }).token;
  const number = w.t.services.accounts.findById(live.bank_account_id)!.accountNumber;
  await expectError(
    await upload(w.t, raw, live.bank_account_id, paymentFile(number)),
    403,
    "forbidden_account",
  );
});

test("no response of this file carries a bank reference or signing URL", () => {
  for (const text of seenBodies) expectNoBankSecrets(text);
});
