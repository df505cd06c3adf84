// lanes: sqlite postgres
// The operator's side of an agent host's sign-in, in the admin pages: the consent page (reached
// through sign-in when needed), approve and deny, and the list of connected apps with revoke.
import { describe, expect, test } from "bun:test";
import { csrfOf, postForm, raw, signIn } from "../helpers/admin-browser";
import { ADMIN_TOKEN } from "../helpers/app";
import { authorizeUrl, form, mcpCall, oauthApp, pkce, REDIRECT, register } from "./support";

async function pendingConsent(t: ReturnType<typeof oauthApp>["t"]) {
  const clientId = await register(t, { client_name: "Claude <script>" });
  const { verifier, challenge } = pkce();
  const res = await t.request("GET", authorizeUrl({ client_id: clientId, code_challenge: challenge }));
  return { clientId, verifier, consent: res.headers.get("location")! };
}

describe("the consent page", () => {
  test("not signed in: sign-in first, then straight back to the consent", async () => {
    const { t } = oauthApp();
    const { consent } = await pendingConsent(t);
    const first = await raw(t, consent);
    expect(first.status).toBe(303);
    const login = first.headers.get("location")!;
    expect(login).toBe(`/admin/login?next=${encodeURIComponent(consent)}`);
    const page = await (await raw(t, login)).text();
    expect(page).toContain(`name="next" value="${consent}"`);
    const signedIn = await postForm(t, "/admin/login", { token: ADMIN_TOKEN, next: consent });
    expect(signedIn.status).toBe(303);
    expect(signedIn.headers.get("location")).toBe(consent);
    // Anything else as `next` is ignored (no open redirect through the sign-in).
    const elsewhere = await postForm(t, "/admin/login", {
      token: ADMIN_TOKEN,
      next: "https://evil.example/",
    });
    expect(elsewhere.headers.get("location")).toBe("/admin/tokens");
  });

  test("shows who asks and where the answer goes; approving sends the browser back with a code that works", async () => {
    const { t, readable, other } = oauthApp();
    const { clientId, verifier, consent } = await pendingConsent(t);
    const b = await signIn(t);
    const res = await b.get(consent);
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html).toContain("Claude &lt;script&gt;");
    expect(html).not.toContain("Claude <script>");
    expect(html).toContain("127.0.0.1:4711");
    expect(html).toContain("statements:read");
    // The page's form may post back to the client's redirect origin, and nowhere else.
    expect(res.headers.get("content-security-policy")).toContain("form-action 'self' http://127.0.0.1:4711");
    const approved = await b.post(consent, {
      _csrf: csrfOf(html),
      decision: "approve",
      company_id: readable.company_id,
      [`account_${readable.bank_account_id}`]: "on",
    });
    expect(approved.status).toBe(303);
    const back = new URL(approved.headers.get("location")!);
    expect(`${back.origin}${back.pathname}`).toBe(REDIRECT);
    const tokens = await form(t, "/oauth/token", {
      grant_type: "authorization_code",
      code: back.searchParams.get("code")!,
      code_verifier: verifier,
      redirect_uri: REDIRECT,
      client_id: clientId,
    });
    const { access_token } = (await tokens.json()) as { access_token: string };
    const text = JSON.stringify(await (await mcpCall(t, access_token)).json());
    expect(text).toContain(readable.bank_account_id);
    expect(text).not.toContain(other.bank_account_id);

    // The connected apps page lists it; revoking there ends it from the next request.
    const apps = await (await b.get("/admin/oauth")).text();
    expect(apps).toContain("Claude &lt;script&gt;");
    const grantId = /\/admin\/oauth\/grants\/([0-9a-f]+)\/revoke/.exec(apps)![1]!;
    // First the confirmation (nothing revoked yet), then the revocation.
    const ask = await b.post(`/admin/oauth/grants/${grantId}/revoke`, {});
    expect(ask.status).toBe(200);
    expect(await ask.text()).toContain("Отозвать доступ приложения?");
    expect((await mcpCall(t, access_token)).status).toBe(200);
    const revoked = await b.post(`/admin/oauth/grants/${grantId}/revoke`, { confirm: "yes" });
    expect(revoked.status).toBe(303);
    expect((await mcpCall(t, access_token)).status).toBe(401);
  });

  test("denying sends the browser back with access_denied; no account chosen is refused on the page", async () => {
    const { t, readable } = oauthApp();
    const { consent } = await pendingConsent(t);
    const b = await signIn(t);
    const none = await b.post(consent, { decision: "approve", company_id: readable.company_id });
    expect(none.status).toBe(400);
    expect(await none.text()).toContain("Выберите хотя бы один счёт");
    const denied = await b.post(consent, { decision: "deny" });
    expect(denied.status).toBe(303);
    expect(new URL(denied.headers.get("location")!).searchParams.get("error")).toBe("access_denied");
    expect((await b.get(consent)).status).toBe(404);
  });

  test("lists only the chosen company's accounts and names «Приложения» for revoking", async () => {
    const { t, company, readable } = oauthApp();
    const second = t.fixtures.company("ООО Вторая", "7707083893");
    const foreign = t.fixtures.account(second.company_id, "sandbox");
    const { consent } = await pendingConsent(t);
    const b = await signIn(t);
    const first = await (await b.get(consent)).text();
    expect(first).toContain(readable.bank_account_id);
    expect(first).not.toContain(`account_${foreign.bank_account_id}`);
    expect(first).toContain("«Приложения»");
    expect(first).not.toContain("«Токены»");
    const chosen = await (await b.get(`${consent}?company_id=${second.company_id}`)).text();
    expect(chosen).toContain(`account_${foreign.bank_account_id}`);
    expect(chosen).not.toContain(`account_${readable.bank_account_id}`);
    expect(chosen).toContain(`name="company_id" value="${second.company_id}"`);
    expect(company.company_id).not.toBe(second.company_id);
  });

  test("a grant approved but never exchanged is not listed as a connected app", async () => {
    const { t, readable } = oauthApp();
    const { consent } = await pendingConsent(t);
    const b = await signIn(t);
    const html = await (await b.get(consent)).text();
    const approved = await b.post(consent, {
      _csrf: csrfOf(html),
      decision: "approve",
      company_id: readable.company_id,
      [`account_${readable.bank_account_id}`]: "on",
    });
    expect(approved.status).toBe(303);
    expect(await (await b.get("/admin/oauth")).text()).not.toContain("Claude &lt;script&gt;");
    const listed = (await (await t.admin("GET", "/oauth/grants")).json()) as { grants: unknown[] };
    expect(listed.grants).toEqual([]);
  });
});
