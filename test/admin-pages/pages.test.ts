// lanes: sqlite postgres
// The admin web pages through app.handle(): sign-in, session cookie, CSRF, CSP, the one-time
// token page, the read-only rule for agent tokens, the audit log with its chart, and escaping.
import { describe, expect, test } from "bun:test";
import { CONTENT_SECURITY_POLICY } from "../../src/admin/pages/security";
import { FORM, postForm, raw, signIn } from "../helpers/admin-browser";
import { ADMIN_TOKEN, BASE, makeTestApp } from "../helpers/app";

/** Every page a signed-in administrator can open, for header and leak checks. */
function pagesOf(companyId: string, tokenId: string): string[] {
  return [
    "/admin/companies",
    "/admin/accounts",
    "/admin/tokens",
    `/admin/tokens/new?company_id=${companyId}&purpose=integration`,
    `/admin/tokens/new?company_id=${companyId}&purpose=mcp`,
    `/admin/tokens/${tokenId}`,
    "/admin/statements",
    "/admin/audit-log",
  ];
}

describe("admin pages: sign-in and sessions", () => {
  test("without SVC_ADMIN_TOKEN the pages do not exist (404, like the admin API)", async () => {
    const t = makeTestApp({ SVC_ADMIN_TOKEN: "" });
    for (const path of [
      "/admin",
      "/admin/login",
      "/admin/tokens",
      "/admin/audit-log",
      "/admin/assets/app.css",
    ]) {
      expect((await raw(t, path)).status).toBe(404);
    }
    expect((await postForm(t, "/admin/login", { token: "x".repeat(40) })).status).toBe(404);
  });

  test("without a session every page redirects (303) to the sign-in form and no post does anything", async () => {
    const t = makeTestApp();
    for (const path of [
      "/admin",
      "/admin/companies",
      "/admin/tokens",
      "/admin/audit-log",
      "/admin/statements",
    ]) {
      const res = await raw(t, path);
      expect(res.status).toBe(303);
      expect(res.headers.get("location")).toBe("/admin/login");
    }
    const res = await postForm(t, "/admin/companies", { name: "ООО Ромашка", inn: "7719617469" });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/admin/login");
    expect(t.services.admin.companies.list()).toHaveLength(0);
    // A made-up session cookie is no session.
    const forged = await raw(t, "/admin/tokens", { headers: { cookie: "svc_admin_session=made-up" } });
    expect(forged.status).toBe(303);
  });

  test("a wrong token re-renders the form with an error and 401, sets no cookie, and is not echoed", async () => {
    const t = makeTestApp();
    const wrong = `${ADMIN_TOKEN}x`;
    const res = await postForm(t, "/admin/login", { token: wrong });
    expect(res.status).toBe(401);
    expect(res.headers.get("set-cookie")).toBeNull();
    const html = await res.text();
    expect(html).toContain("Неверный токен администратора");
    expect(html).toContain('name="token"');
    expect(html).not.toContain(wrong);
    expect((await postForm(t, "/admin/login", {})).status).toBe(401);
  });

  test("the right token sets an HttpOnly, SameSite=Strict cookie on Path=/admin, not Secure over http", async () => {
    const t = makeTestApp();
    const res = await postForm(t, "/admin/login", { token: ADMIN_TOKEN });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/admin/tokens");
    const cookie = res.headers.get("set-cookie")!;
    const parts = cookie.split(";").map((p) => p.trim());
    expect(parts[0]).toMatch(/^svc_admin_session=[A-Za-z0-9_-]{43}$/);
    expect(parts).toContain("HttpOnly");
    expect(parts).toContain("SameSite=Strict");
    expect(parts).toContain("Path=/admin");
    expect(parts).not.toContain("Secure");
    expect(cookie).not.toContain(ADMIN_TOKEN);
    // Signing in is audited, without the token.
    const entry = t.services.admin.audit.page({ action: "admin.ui.sign_in" }).entries[0]!;
    expect(entry.ip).toBe("127.0.0.1");
    expect(JSON.stringify(entry)).not.toContain(ADMIN_TOKEN);
  });

  test("the cookie is Secure over https, and behind a trusted proxy that says https (only then)", async () => {
    const t = makeTestApp({ SVC_TRUST_PROXY: "10.0.0.0/8" });
    const direct = await raw(
      t,
      "/admin/login",
      {
        method: "POST",
        headers: { "content-type": FORM, origin: "https://localhost" },
        body: `token=${ADMIN_TOKEN}`,
      },
      "https://localhost",
    );
    expect(direct.status).toBe(303);
    expect(direct.headers.get("set-cookie")).toContain("; Secure");

    const proxied = {
      "x-forwarded-proto": "https",
      "x-forwarded-for": "203.0.113.5",
      origin: "https://localhost",
    };
    t.clientIp.value = "10.1.2.3";
    const viaProxy = await postForm(t, "/admin/login", { token: ADMIN_TOKEN }, proxied);
    expect(viaProxy.status).toBe(303);
    expect(viaProxy.headers.get("set-cookie")).toContain("; Secure");

    // The same header from an address that is not a trusted proxy proves nothing; the page is
    // then plain http, so an https Origin is not ours either.
    t.clientIp.value = "198.51.100.7";
    const spoofed = await postForm(
      t,
      "/admin/login",
      { token: ADMIN_TOKEN },
      { "x-forwarded-proto": "https" },
    );
    expect(spoofed.status).toBe(303);
    expect(spoofed.headers.get("set-cookie")).not.toContain("Secure");
  });

  test("wrong tokens are limited per client address (SVC_PUBLIC_RATE_LIMIT_PER_MINUTE), the right one never", async () => {
    const t = makeTestApp({ SVC_PUBLIC_RATE_LIMIT_PER_MINUTE: "10" }, "2026-11-20T09:00:05Z");
    for (let i = 0; i < 10; i++)
      expect((await postForm(t, "/admin/login", { token: `wrong-${i}` })).status).toBe(401);
    const locked = await postForm(t, "/admin/login", { token: "wrong-again" });
    expect(locked.status).toBe(429);
    expect(Number(locked.headers.get("retry-after"))).toBe(55);
    expect(locked.headers.get("set-cookie")).toBeNull();
    expect(await locked.text()).toContain("Слишком много неудачных попыток");
    // The operator's right token still signs in from the locked address (operators behind one
    // proxy svc does not trust share it with whoever guesses).
    const operator = await postForm(t, "/admin/login", { token: ADMIN_TOKEN });
    expect(operator.status).toBe(303);
    expect(operator.headers.get("set-cookie")).toContain("svc_admin_session=");
    // Another address is not locked out.
    t.clientIp.value = "192.0.2.10";
    expect((await postForm(t, "/admin/login", { token: "wrong" })).status).toBe(401);
    // The next minute the first address may guess again.
    t.clientIp.value = "127.0.0.1";
    t.clock.advance(60_000);
    expect((await postForm(t, "/admin/login", { token: "wrong" })).status).toBe(401);
  });

  test("refused sign-ins are audited once per address and minute, and the lockout once, without token material", async () => {
    const t = makeTestApp({ SVC_PUBLIC_RATE_LIMIT_PER_MINUTE: "10" }, "2026-11-20T09:00:05Z");
    t.clientIp.value = "198.51.100.7";
    for (let i = 0; i < 50; i++) await postForm(t, "/admin/login", { token: `guess-number-${i}` });
    await postForm(t, "/admin/login", { token: ADMIN_TOKEN });
    const { entries } = (await (await t.admin("GET", "/audit-log?action=admin.ui.sign_in")).json()) as {
      entries: { outcome: string; ip: string; arguments: unknown }[];
    };
    expect(entries.map((e) => e.outcome)).toEqual(["ok", "rate_limited", "invalid_token"]);
    expect(entries.every((e) => e.ip === "198.51.100.7" && e.arguments === null)).toBe(true);
    const everything = JSON.stringify(entries);
    expect(everything).not.toContain("guess-number");
    expect(everything).not.toContain(ADMIN_TOKEN);
    // The operator sees them on the audit page.
    t.clientIp.value = "127.0.0.1";
    const login = await postForm(t, "/admin/login", { token: ADMIN_TOKEN });
    const cookie = login.headers.get("set-cookie")!.split(";")[0]!;
    const page = await (
      await raw(t, "/admin/audit-log?action=admin.ui.sign_in", { headers: { cookie } })
    ).text();
    expect(page).toContain(">неверный токен<");
    expect(page).toContain(">превышен лимит<");
    expect(page).toContain("198.51.100.7");
  });

  test("sign-in from another origin is refused", async () => {
    const t = makeTestApp();
    const res = await postForm(t, "/admin/login", { token: ADMIN_TOKEN }, { origin: "https://evil.example" });
    expect(res.status).toBe(403);
    expect(res.headers.get("set-cookie")).toBeNull();
  });

  test("sign-out ends the session and clears the cookie; an idle session expires after 8 hours", async () => {
    const t = makeTestApp();
    const b = await signIn(t);
    const out = await b.post("/admin/logout", {});
    expect(out.status).toBe(303);
    expect(out.headers.get("location")).toBe("/admin/login");
    expect(out.headers.get("set-cookie")).toContain("Max-Age=0");
    expect((await b.get("/admin/tokens")).status).toBe(303);
    expect(t.services.admin.audit.page({ action: "admin.ui.sign_out" }).entries).toHaveLength(1);

    const b2 = await signIn(t);
    t.clock.advance(7 * 3600_000);
    expect((await b2.get("/admin/tokens")).status).toBe(200); // use restarts the idle timer
    t.clock.advance(8 * 3600_000 - 1000);
    expect((await b2.get("/admin/tokens")).status).toBe(200);
    t.clock.advance(8 * 3600_000);
    const expired = await b2.get("/admin/tokens");
    expect(expired.status).toBe(303);
    expect(expired.headers.get("location")).toBe("/admin/login");
  });
});

describe("admin pages: headers, CSRF and leaks", () => {
  test("every page has the CSP, X-Frame-Options DENY, nosniff and no-store, and never the admin token", async () => {
    const t = makeTestApp();
    const b = await signIn(t);
    const company = t.fixtures.company();
    const account = t.fixtures.account(company.company_id);
    const token = t.fixtures.token(company.company_id, {
      accounts: [{ bank_account_id: account.bank_account_id, allow_read_statements: true }],
    });
    const login = await raw(t, "/admin/login");
    const responses: [string, Response][] = [["/admin/login", login]];
    for (const path of pagesOf(company.company_id, token.api_token_id))
      responses.push([path, await b.get(path)]);
    for (const [path, res] of responses) {
      expect({ path, status: res.status }).toEqual({ path, status: 200 });
      expect(res.headers.get("content-security-policy")).toBe(CONTENT_SECURITY_POLICY);
      expect(res.headers.get("x-frame-options")).toBe("DENY");
      expect(res.headers.get("x-content-type-options")).toBe("nosniff");
      expect(res.headers.get("cache-control")).toBe("no-store");
      expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
      const html = await res.text();
      expect(html).not.toContain(ADMIN_TOKEN);
      expect(html).not.toContain(token.token); // raw API tokens neither
      // No inline script: every <script> loads the same-origin file.
      for (const m of html.matchAll(/<script\b[^>]*>/g)) expect(m[0]).toContain('src="/admin/assets/app.js"');
    }
    expect(CONTENT_SECURITY_POLICY).toContain("default-src 'self'");
    expect(CONTENT_SECURITY_POLICY).toContain("frame-ancestors 'none'");
    expect(CONTENT_SECURITY_POLICY).not.toContain("unsafe-inline");
    const js = await raw(t, "/admin/assets/app.js");
    expect(js.headers.get("content-type")).toContain("text/javascript");
    expect(await js.text()).toContain("data-copy");
    const css = await raw(t, "/admin/assets/app.css");
    expect(css.headers.get("content-type")).toContain("text/css");
    expect((await raw(t, "/admin/assets/constructor")).status).toBe(404);
  });

  test("a post without, or with a wrong, CSRF token is 403 and changes nothing", async () => {
    const t = makeTestApp();
    const b = await signIn(t);
    const fields = { name: "ООО Ромашка", inn: "7719617469" };
    const auditBefore = t.services.admin.audit.page({}).entries.length;
    for (const csrf of [null, "", "wrong-token", `${b.csrf}x`]) {
      const res = await b.post("/admin/companies", fields, { csrf });
      expect(res.status).toBe(403);
      expect(await res.text()).toContain("Запрос отклонён");
    }
    // The right token from another origin, or with neither Origin nor Referer: refused as well.
    expect(
      (await b.post("/admin/companies", fields, { headers: { origin: "https://evil.example" } })).status,
    ).toBe(403);
    const noOrigin = await t.app.handle(
      new Request(`${BASE}/admin/companies`, {
        method: "POST",
        headers: { "content-type": FORM, cookie: b.cookie },
        body: new URLSearchParams({ _csrf: b.csrf, ...fields }).toString(),
      }),
    );
    expect(noOrigin.status).toBe(403);
    // Another session's token is no good either.
    const other = await signIn(t);
    expect((await b.post("/admin/companies", fields, { csrf: other.csrf })).status).toBe(403);
    expect(t.services.admin.companies.list()).toHaveLength(0);
    expect(t.services.admin.audit.page({}).entries.length).toBe(auditBefore + 1); // the second sign-in only

    // With a Referer of ours instead of Origin, and the right token: done, and audited with the request's id and IP.
    const ok = await b.post("/admin/companies", fields, {
      headers: { origin: "", referer: `${BASE}/admin/companies`, "x-request-id": "req-page-1" },
    });
    expect(ok.status).toBe(303);
    expect(ok.headers.get("location")).toBe("/admin/companies");
    expect(t.services.admin.companies.list()).toHaveLength(1);
    const entry = t.services.admin.audit.page({ action: "admin.company.create" }).entries[0]!;
    expect(entry.request_id).toBe("req-page-1");
    expect(entry.ip).toBe("127.0.0.1");
    expect(await (await b.get("/admin/companies")).text()).toContain("Компания «ООО Ромашка» создана");
  });

  test("the JSON APIs still refuse form bodies as invalid request bodies", async () => {
    const t = makeTestApp();
    const res = await t.app.handle(
      new Request(`${BASE}/admin/api/companies`, {
        method: "POST",
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": FORM },
        body: "name=x&inn=7719617469",
      }),
    );
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("invalid request body");
    const world = t.fixtures.world();
    const api = await t.app.handle(
      new Request(`${BASE}/api/v1/integration/statements`, {
        method: "POST",
        headers: { authorization: `Bearer ${world.token}`, "content-type": FORM },
        body: `bank_account_id=${world.account.bank_account_id}&external_id=a&date_from=2026-11-01&date_to=2026-11-02`,
      }),
    );
    expect(api.status).toBe(400);
    expect(((await api.json()) as { error: { code: string } }).error.code).toBe("invalid request body");
  });

  test("data from companies, tokens, bank texts and audit entries is escaped", async () => {
    const t = makeTestApp();
    const b = await signIn(t);
    const evil = "<script>alert(1)</script>";
    const create = await b.post("/admin/companies", { name: evil, inn: "7719617469" });
    expect(create.status).toBe(303);
    const company = t.services.admin.companies.list()[0]!;
    const account = t.fixtures.account(company.company_id);
    const token = t.services.admin.tokens.create({
      company_id: company.company_id,
      name: `<img src=x onerror=alert(2)>`,
      purpose: "mcp",
      scope_read_statements: true,
      accounts: [{ bank_account_id: account.bank_account_id, allow_read_statements: true }],
    });
    t.services.audit.write({
      at: t.clock.now(),
      actor: "token",
      apiTokenId: token.api_token_id,
      action: "mcp.search_operations",
      arguments: { query: "</pre><script>alert(3)</script>" },
      outcome: "ok",
      requestId: "<b>req</b>",
      ip: "127.0.0.1",
    });
    for (const path of [
      ...pagesOf(company.company_id, token.api_token_id),
      "/admin/audit-log?action=%3Cx%3E",
    ]) {
      // Inside a quoted attribute value `<` is inert; everywhere else markup must be escaped.
      const html = (await (await b.get(path)).text()).replace(/="[^"]*"/g, '=""');
      expect(html).not.toContain("<script>alert");
      expect(html).not.toContain("<img src=x");
      expect(html).not.toContain("<b>req</b>");
    }
    expect(await (await b.get("/admin/companies")).text()).toContain("&lt;script&gt;alert(1)&lt;/script&gt;");
    expect(await (await b.get("/admin/tokens")).text()).toContain("&lt;img src=x onerror=alert(2)&gt;");
    const audit = await (await b.get("/admin/audit-log")).text();
    expect(audit).toContain("&lt;/pre&gt;&lt;script&gt;alert(3)&lt;/script&gt;");
    expect(audit).toContain("&lt;b&gt;req&lt;/b&gt;");
  });
});

describe("admin pages: companies, accounts, tokens", () => {
  test("companies and accounts are created from forms; account numbers are shown masked; errors shown", async () => {
    const t = makeTestApp();
    const b = await signIn(t);
    const badInn = await b.post("/admin/companies", { name: "ООО Ромашка", inn: "1234567890" });
    expect(badInn.status).toBe(400);
    const badHtml = await badInn.text();
    expect(badHtml).toContain("Неверный ИНН");
    expect(badHtml).toContain('value="ООО Ромашка"'); // the form keeps what was typed
    expect((await b.post("/admin/companies", { name: "ООО Ромашка", inn: "7719617469" })).status).toBe(303);
    const company = t.services.admin.companies.list()[0]!;

    const number = "40702810938000000001";
    const fields = {
      company_id: company.company_id,
      bank: "sandbox",
      account_number: number,
      bik: "044525225",
    };
    const badBik = await b.post("/admin/accounts", { ...fields, bik: "12345" });
    expect(badBik.status).toBe(400);
    expect(await badBik.text()).toContain("БИК: ровно 9 цифр");
    const ok = await b.post("/admin/accounts", { ...fields, alias: "main", ops_per_day: "7" });
    expect(ok.status).toBe(303);
    const page = await (await b.get("/admin/accounts")).text();
    expect(page).toContain("4070************0001");
    expect(page).not.toContain(number);
    expect(page).toContain("Тестовый банк, 7 оп. в день");
    expect(t.services.admin.audit.page({ action: "admin.bank_account.create" }).entries).toHaveLength(1);
  });

  test("a new token is shown once on the POST response, never in the list, and a reloaded POST creates nothing", async () => {
    const t = makeTestApp();
    const b = await signIn(t);
    const company = t.fixtures.company();
    const account = t.fixtures.account(company.company_id);
    const form = await (
      await b.get(`/admin/tokens/new?company_id=${company.company_id}&purpose=integration`)
    ).text();
    expect(form).toContain('name="scope_send_payments"');
    expect(form).toContain(`name="send:${account.bank_account_id}"`);
    const formId = /name="form_id" value="([^"]+)"/.exec(form)![1]!;
    const fields = {
      company_id: company.company_id,
      purpose: "integration",
      form_id: formId,
      name: "1С бухгалтерия",
      mode: "test",
      scope_read_statements: "on",
      scope_send_payments: "on",
      [`read:${account.bank_account_id}`]: "on",
      [`send:${account.bank_account_id}`]: "on",
      allowed_ips: "10.0.0.0/8\n192.0.2.1",
      rate_limit_per_minute: "120",
      expires_at: "31.01.2027 21:00",
    };
    const res = await b.post("/admin/tokens", fields);
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(res.headers.get("location")).toBeNull();
    const html = await res.text();
    const raw = /id="new-token" readonly value="(svc_test_[0-9A-Za-z]{40})"/.exec(html)?.[1];
    expect(raw).toBeDefined();
    expect(html.split(raw!).length - 1).toBe(1); // exactly once
    expect(html).toContain('data-copy="new-token"');

    const [view] = t.services.admin.tokens.list();
    expect(view).toMatchObject({
      name: "1С бухгалтерия",
      purpose: "integration",
      mode: "test",
      scopes: { read_statements: true, send_payments: true },
      accounts: [
        { bank_account_id: account.bank_account_id, allow_read_statements: true, allow_send_payments: true },
      ],
      allowed_ips: ["10.0.0.0/8", "192.0.2.1"],
      rate_limit_per_minute: 120,
      expires_at: "2027-01-31T18:00:00.000Z",
    });
    const entry = t.services.admin.audit.page({ action: "admin.token.create" }).entries[0]!;
    expect(JSON.stringify(entry)).not.toContain(raw!);

    // The list (and every later page) shows the prefix only.
    const list = await (await b.get("/admin/tokens")).text();
    expect(list).not.toContain(raw!);
    expect(list).toContain(`${raw!.slice(0, 13)}…`);
    // Posting the same form again (a browser reload) does not make a second token or show one.
    const again = await b.post("/admin/tokens", fields);
    expect(again.status).toBe(303);
    expect(again.headers.get("location")).toBe("/admin/tokens");
    expect(t.services.admin.tokens.list()).toHaveLength(1);
    const after = await (await b.get("/admin/tokens")).text();
    expect(after).toContain("показывается только один раз");
    expect(after).not.toMatch(/svc_test_[0-9A-Za-z]{40}/);
  });

  test("the agent (mcp) form offers no payment rights, and forged ones are refused with the service's message", async () => {
    const t = makeTestApp();
    const b = await signIn(t);
    const company = t.fixtures.company();
    const account = t.fixtures.account(company.company_id);
    const form = await (await b.get(`/admin/tokens/new?company_id=${company.company_id}&purpose=mcp`)).text();
    expect(form).not.toContain("scope_send_payments");
    expect(form).not.toContain("send:");
    // (the navigation links to the payments page; the form itself has no payments column)
    expect(form.slice(form.indexOf("<main>"))).not.toContain("Платежи");
    expect(form).toContain('name="purpose" value="mcp"');
    const base = {
      company_id: company.company_id,
      purpose: "mcp",
      name: "agent",
      scope_read_statements: "on",
      [`read:${account.bank_account_id}`]: "on",
    };
    const forgedScope = await b.post("/admin/tokens", { ...base, scope_send_payments: "on" });
    expect(forgedScope.status).toBe(400);
    const scopeHtml = await forgedScope.text();
    expect(scopeHtml).toContain("Токен агента (mcp) не может получить право на платежи");
    expect(scopeHtml).not.toContain("scope_send_payments"); // the re-rendered form still offers none
    const forgedGrant = await b.post("/admin/tokens", { ...base, [`send:${account.bank_account_id}`]: "on" });
    expect(forgedGrant.status).toBe(400);
    expect(await forgedGrant.text()).toContain("Токен агента (mcp) не может получить право на платежи");
    expect(t.services.admin.tokens.list()).toHaveLength(0);

    const ok = await b.post("/admin/tokens", base);
    expect(ok.status).toBe(200);
    const [view] = t.services.admin.tokens.list();
    expect(view?.purpose).toBe("mcp");
    // Editing it: the form has no payment rights either, and a forged one is refused.
    const edit = await (await b.get(`/admin/tokens/${view!.api_token_id}`)).text();
    expect(edit).not.toContain("scope_send_payments");
    expect(edit).not.toContain("send:");
    const forgedEdit = await b.post(`/admin/tokens/${view!.api_token_id}`, {
      name: "agent",
      scope_read_statements: "on",
      scope_send_payments: "on",
    });
    expect(forgedEdit.status).toBe(400);
    expect(await forgedEdit.text()).toContain("не может получить право на платежи");
    expect(t.services.admin.tokens.view(view!.api_token_id).scopes.send_payments).toBe(false);
  });

  test("a token's IPs, rate limit and per-account allows are edited; bad values are shown; revoke works", async () => {
    const t = makeTestApp();
    const b = await signIn(t);
    const company = t.fixtures.company();
    const a1 = t.fixtures.account(company.company_id);
    const a2 = t.fixtures.account(company.company_id);
    const tk = t.fixtures.token(company.company_id, {
      accounts: [{ bank_account_id: a1.bank_account_id, allow_read_statements: true }],
    });
    const edit = await b.post(`/admin/tokens/${tk.api_token_id}`, {
      name: "renamed",
      scope_read_statements: "on",
      [`read:${a2.bank_account_id}`]: "on",
      [`send:${a2.bank_account_id}`]: "on",
      allowed_ips: "203.0.113.0/24, 198.51.100.7",
      rate_limit_per_minute: "5",
      expires_at: "",
    });
    expect(edit.status).toBe(303);
    expect(edit.headers.get("location")).toBe(`/admin/tokens/${tk.api_token_id}`);
    expect(t.services.admin.tokens.view(tk.api_token_id)).toMatchObject({
      name: "renamed",
      allowed_ips: ["203.0.113.0/24", "198.51.100.7"],
      rate_limit_per_minute: 5,
      accounts: [
        { bank_account_id: a2.bank_account_id, allow_read_statements: true, allow_send_payments: true },
      ],
    });
    const page = await (await b.get(`/admin/tokens/${tk.api_token_id}`)).text();
    expect(page).toContain("Изменения сохранены");
    expect(page).toContain("203.0.113.0/24\n198.51.100.7");

    const bad = await b.post(`/admin/tokens/${tk.api_token_id}`, {
      name: "renamed",
      allowed_ips: "not-an-ip",
      rate_limit_per_minute: "",
    });
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain("Неверный IP-адрес или подсеть: not-an-ip");
    const badLimit = await b.post(`/admin/tokens/${tk.api_token_id}`, {
      name: "renamed",
      rate_limit_per_minute: "0",
    });
    expect(badLimit.status).toBe(400);
    // The service's refusal, with the form's label for the field the API names.
    expect(await badLimit.text()).toContain("Лимит запросов в минуту: целое от 1 до 10000");

    // The button leads to the confirmation first: nothing is revoked yet.
    const ask = await b.post(`/admin/tokens/${tk.api_token_id}/revoke`, {});
    expect(ask.status).toBe(200);
    const askHtml = await ask.text();
    expect(askHtml).toContain("Отозвать токен?");
    expect(askHtml).toContain('name="confirm" value="yes"');
    expect(t.services.admin.tokens.view(tk.api_token_id).revoked_at).toBeNull();
    const revoke = await b.post(`/admin/tokens/${tk.api_token_id}/revoke`, { confirm: "yes" });
    expect(revoke.status).toBe(303);
    expect(t.services.admin.tokens.view(tk.api_token_id).revoked_at).not.toBeNull();
    const list = await (await b.get("/admin/tokens")).text();
    expect(list).toContain("отозван");
    expect(t.services.admin.audit.page({ action: "admin.token.revoke" }).entries[0]?.target).toBe(
      tk.api_token_id,
    );
    // Unknown tokens are a 404 page, not a crash.
    expect((await b.get("/admin/tokens/00000000-0000-4000-8000-000000000000")).status).toBe(404);
    expect((await b.get("/admin/tokens/not-a-uuid")).status).toBe(404);
  });
});

describe("admin pages: statements and the audit log", () => {
  test("a statement is ordered via the UI form (source ui, audited); errors are shown on the page", async () => {
    const t = makeTestApp();
    const b = await signIn(t);
    const company = t.fixtures.company();
    const account = t.fixtures.account(company.company_id);
    const tooLong = await b.post("/admin/statements", {
      bank_account_id: account.bank_account_id,
      date_from: "01.09.2026",
      date_to: "01.11.2026",
    });
    expect(tooLong.status).toBe(400);
    expect(await tooLong.text()).toContain("Период не длиннее 31 дня");
    const ok = await b.post("/admin/statements", {
      bank_account_id: account.bank_account_id,
      date_from: "01.11.2026",
      date_to: "10.11.2026",
    });
    expect(ok.status).toBe(303);
    const listed = t.services.statements.page({
      accountIds: [account.bank_account_id],
      limit: 10,
    }).statements;
    expect(listed).toHaveLength(1);
    expect(listed[0]?.source).toBe("ui");
    const entry = t.services.admin.audit.page({ action: "admin.statement.order" }).entries[0]!;
    expect(entry.target).toBe(listed[0]!.statement_id);
    const page = await (await b.get("/admin/statements")).text();
    expect(page).toContain("Выписка заказана");
    expect(page).toContain(`data-statement-id="${listed[0]!.statement_id}"`);
    expect(page).toContain("01.11.2026\u00A0— 10.11.2026");
    expect(page).toContain(">вручную<");
    const filtered = await (await b.get("/admin/statements?status=failed")).text();
    expect(filtered).not.toContain(listed[0]!.statement_id);
  });

  test("the audit log filters by token, action and time, and pages with next_cursor", async () => {
    const t = makeTestApp();
    const b = await signIn(t);
    const company = t.fixtures.company();
    const tk1 = t.fixtures.token(company.company_id, { purpose: "mcp" });
    const tk2 = t.fixtures.token(company.company_id, { purpose: "mcp" });
    const start = t.clock.now().getTime();
    for (let i = 0; i < 60; i++) {
      t.services.audit.write({
        at: new Date(start - (60 - i) * 60_000),
        actor: "token",
        apiTokenId: i % 2 === 0 ? tk1.api_token_id : tk2.api_token_id,
        action: i % 3 === 0 ? "mcp.get_balance" : "mcp.list_statements",
        outcome: "ok",
        requestId: `req-${i}`,
      });
    }
    const rows = (html: string) => [...html.matchAll(/>req-(\d+)</g)].map((m) => Number(m[1]));

    const first = await (await b.get("/admin/audit-log")).text();
    const firstRows = rows(first);
    expect(firstRows).toHaveLength(50);
    expect(firstRows[0]).toBe(59); // newest first
    const next = /href="(\/admin\/audit-log\?cursor=[^"]+)" rel="next"|rel="next" href="([^"]+)"/.exec(first);
    const nextHref = (next?.[1] ?? next?.[2])!.replaceAll("&amp;", "&");
    const second = await (await b.get(nextHref)).text();
    const secondRows = rows(second);
    expect(secondRows).toHaveLength(10);
    expect(secondRows[0]).toBe(9);
    expect(second).not.toContain('rel="next"');

    const byToken = rows(await (await b.get(`/admin/audit-log?api_token_id=${tk2.api_token_id}`)).text());
    expect(byToken).toHaveLength(30);
    expect(byToken.every((i) => i % 2 === 1)).toBe(true);

    const byAction = rows(
      await (await b.get(`/admin/audit-log?action=mcp.get_balance&api_token_id=${tk1.api_token_id}`)).text(),
    );
    expect(byAction).toEqual([54, 48, 42, 36, 30, 24, 18, 12, 6, 0]);

    // Times are typed in Moscow time (UTC+3): entries i at 08:00+i minutes UTC; [11:10, 11:20)
    // Moscow time holds i = 10..19.
    const byTime = rows(
      await (await b.get("/admin/audit-log?since=20.11.2026%2011:10&until=20.11.2026%2011:20")).text(),
    );
    expect(byTime).toEqual([19, 18, 17, 16, 15, 14, 13, 12, 11, 10]);

    const badCursor = await b.get("/admin/audit-log?cursor=nonsense");
    expect(badCursor.status).toBe(400);
    expect(await badCursor.text()).toContain("Неверный курсор");
  });

  test("the chart draws one series per token for agent calls in the last 24 hours", async () => {
    const t = makeTestApp({}, "2026-11-20T09:30:00Z");
    const b = await signIn(t);
    const company = t.fixtures.company();
    const tk1 = t.fixtures.token(company.company_id, { purpose: "mcp" });
    const tk2 = t.fixtures.token(company.company_id, { purpose: "mcp" });
    const tk3 = t.fixtures.token(company.company_id, { purpose: "mcp" });
    const write = (at: string, tokenId: string, action: string) =>
      t.services.audit.write({
        at: new Date(at),
        actor: "token",
        apiTokenId: tokenId,
        action,
        outcome: "ok",
      });
    write("2026-11-20T09:10:00Z", tk1.api_token_id, "mcp.get_balance");
    write("2026-11-20T09:20:00Z", tk1.api_token_id, "mcp.tools_list");
    write("2026-11-19T12:00:00Z", tk2.api_token_id, "mcp.initialize");
    write("2026-11-19T10:00:00Z", tk2.api_token_id, "mcp.ping"); // first hour of the window
    write("2026-11-19T09:59:59Z", tk3.api_token_id, "mcp.ping"); // before the window
    write("2026-11-20T09:00:00Z", tk3.api_token_id, "admin.token.create"); // not an agent call

    const html = await (await b.get("/admin/audit-log")).text();
    const svg = /<svg class="chart"[\s\S]*?<\/svg>/.exec(html)?.[0];
    expect(svg).toBeDefined();
    expect(svg).toContain('data-series-count="2"');
    expect(svg!.match(/<g class="series"/g)).toHaveLength(2);
    expect(svg).toContain(`data-series="${tk1.api_token_id}"`);
    expect(svg).toContain(`data-series="${tk2.api_token_id}"`);
    expect(svg).not.toContain(tk3.api_token_id);
    expect(svg).toContain(`${tk1.token_prefix}… test token`); // legend
    // Hours on Moscow's clock (UTC+3): 10:00 UTC is 13:00, the current hour 09:00 UTC is 12:00.
    expect(svg).toContain("13:00"); // first hour label
    expect(svg).toContain("12:00"); // current hour label
    expect(svg).not.toContain("UTC");
    // tk1 has 2 calls in the last bucket: the axis tops out at 2.
    expect(svg).toMatch(/<title>[^<]*: 2 в 12:00<\/title>/);

    const counts = t.services.audit.agentCallsPerHour("2026-11-19T10:00:00.000Z");
    expect(counts).toEqual([
      { api_token_id: tk2.api_token_id, hour: "2026-11-19T10", calls: 1 },
      { api_token_id: tk2.api_token_id, hour: "2026-11-19T12", calls: 1 },
      { api_token_id: tk1.api_token_id, hour: "2026-11-20T09", calls: 2 },
    ]);

    const empty = makeTestApp();
    const be = await signIn(empty);
    const emptyHtml = await (await be.get("/admin/audit-log")).text();
    expect(emptyHtml).toContain('data-series-count="0"');
    expect(emptyHtml).toContain("вызовов агентов не было");
  });
});

describe("admin pages: what a newcomer met", () => {
  test("an unknown page is an HTML page saying so; the admin API keeps its JSON; /favicon.ico exists", async () => {
    const t = makeTestApp();
    const b = await signIn(t);
    const res = await b.get("/admin/no-such-page");
    expect(res.status).toBe(404);
    expect(res.headers.get("content-type")).toContain("text/html");
    expect(await res.text()).toContain("Такой страницы нет");
    const api = await t.admin("GET", "/no-such-call");
    expect(api.headers.get("content-type")).toContain("application/json");
    const icon = await raw(t, "/favicon.ico");
    expect(icon.status).toBe(200);
    expect(icon.headers.get("content-type")).toBe("image/svg+xml");
  });

  test("a refused save keeps what was typed (allowed IPs included); new tokens default to test mode", async () => {
    const t = makeTestApp();
    const w = t.fixtures.world();
    const b = await signIn(t);
    const res = await b.post(`/admin/tokens/${w.tokenId}`, {
      name: "renamed",
      allowed_ips: "10.0.0.0/8\nnot-an-ip",
      rate_limit_per_minute: "60",
    });
    expect(res.status).toBe(400);
    const html = await res.text();
    expect(html).toContain("10.0.0.0/8");
    expect(html).toContain("not-an-ip");
    expect(html).toContain('value="renamed"');
    const form = await (
      await b.get(`/admin/tokens/new?company_id=${w.company.company_id}&purpose=integration`)
    ).text();
    expect(form).toMatch(/<option value="test" selected/);
  });

  test("the audit page names objects; the statements page downloads ready statements and names companies", async () => {
    const t = makeTestApp();
    const w = t.fixtures.world();
    const b = await signIn(t);
    await b.post(`/admin/tokens/${w.tokenId}/revoke`, { confirm: "yes" });
    const audit = await (await b.get("/admin/audit-log?action=admin.token.revoke")).text();
    expect(audit).toContain(`токен <span class="mono nowrap">svc_test_`);
    expect(audit).toContain(`title="${w.tokenId}"`);

    const ordered = t.services.statements.orderFromUi(w.account.bank_account_id, "2026-11-01", "2026-11-02");
    await t.services.poller.idle();
    await t.services.poller.tick();
    await t.services.poller.idle();
    const page = await (await b.get("/admin/statements")).text();
    expect(page).toContain(`/admin/statements/${ordered.statement_id}/export?format=1c`);
    expect(page).toContain("ООО Ромашка: ");
    const csv = await b.get(`/admin/statements/${ordered.statement_id}/export?format=csv&bom=1`);
    expect(csv.status).toBe(200);
    expect(csv.headers.get("content-disposition")).toContain("attachment");
    expect([...new Uint8Array(await csv.arrayBuffer()).subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    expect((await b.get(`/admin/statements/${ordered.statement_id}/export?format=xml`)).status).toBe(400);
    // Signed out: the sign-in page, not the file.
    const anonymous = await raw(t, `/admin/statements/${ordered.statement_id}/export?format=json`);
    expect(anonymous.status).toBe(303);
  });
});
