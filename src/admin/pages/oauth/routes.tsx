// The consent page of an agent host's sign-in (/oauth/authorize sends the browser here).
import { ApiError } from "../../../core/errors";
import { CONTENT_SECURITY_POLICY } from "../../../http/security-headers";
import type { OAuthService } from "../../../oauth/service";
import { attempt, nonEmpty, PAGE_SIZE, type PageKit, page, redirect } from "../kit";
import { ConfirmPage } from "../layout";
import { get, type PageRoute, pageDoc, post } from "../page-route";
import { ConnectedAppsPage, OAuthConsentPage } from "./view";

/** The consent page may send the browser back to the client: its form may post there and no further. */
function consentPolicy(oauth: OAuthService, requestId: string): Record<string, string> {
  const target = oauth.requests.redirectOriginOf(requestId);
  return {
    "content-security-policy": CONTENT_SECURITY_POLICY.replace(
      "form-action 'self'",
      `form-action 'self'${target ? ` ${target}` : ""}`,
    ),
  };
}

export function oauthRoutes(kit: PageKit, oauth: OAuthService): PageRoute[] {
  const { admin } = kit.deps;
  const { actorOf, signedInFrame, view, action, flashThen } = kit;
  // The accounts offered are the chosen company's only (the first one unless another is chosen).
  const consentPage = (
    session: Parameters<typeof signedInFrame>[0],
    id: string,
    error: string | null,
    status = 200,
    companyId?: string,
  ) => {
    const companies = admin.companies.list();
    const company = companies.find((c) => c.company_id === companyId) ?? companies[0] ?? null;
    return page(
      <OAuthConsentPage
        frame={signedInFrame(session, "Доступ для агента", "oauth")}
        request={oauth.requests.pendingRequest(id)}
        companies={companies}
        company={company}
        accounts={company ? admin.accounts.list(company.company_id) : []}
        error={error}
      />,
      status,
      consentPolicy(oauth, id),
    );
  };

  return [
    get(
      "/admin/oauth",
      view((session, ctx) => {
        const cursor = nonEmpty((ctx.query as Record<string, string | undefined>).cursor);
        const listed = attempt(() => oauth.tokens.grants({ limit: PAGE_SIZE, cursor }));
        const ok = "ok" in listed ? listed.ok : { grants: [], next_cursor: null };
        return page(
          <ConnectedAppsPage
            frame={signedInFrame(session, "Подключённые приложения", "oauth")}
            grants={ok.grants}
            cursor={cursor}
            nextCursor={ok.next_cursor}
            error={"error" in listed ? listed.error.message : null}
            companies={admin.companies.list()}
            accounts={admin.accounts.list()}
          />,
          "error" in listed ? listed.error.status : 200,
        );
      }),
      { detail: pageDoc("Admin pages: agent hosts signed in with OAuth, their grants") },
    ),
    post(
      "/admin/oauth/grants/:id/revoke",
      action((session, form, ctx) => {
        if (form.confirm !== "yes") {
          return page(
            <ConfirmPage
              frame={signedInFrame(session, "Отозвать доступ", "oauth")}
              heading="Отозвать доступ приложения?"
              text="Приложение потеряет доступ к счетам со следующего запроса; чтобы вернуть его, приложению придётся войти заново."
              action={`/admin/oauth/grants/${encodeURIComponent(ctx.params.id ?? "")}/revoke`}
              confirmLabel="Да, отозвать"
              back="/admin/oauth"
            />,
          );
        }
        const grant = oauth.tokens.revokeGrant(ctx.params.id ?? "");
        admin.audit.record("admin.oauth.revoke", grant.id, actorOf(ctx));
        return flashThen(session, "Доступ приложения отозван", "/admin/oauth");
      }),
      {
        detail: pageDoc(
          "Admin pages: revoke an agent host's grant (without confirm=yes: the confirmation page)",
          "form",
        ),
      },
    ),
    get(
      "/admin/oauth/consent/:id",
      (ctx) => {
        // Not signed in: the sign-in form, then straight back here.
        if (!kit.sessionOf(ctx)) {
          return kit.send(
            ctx,
            redirect(
              `/admin/login?next=${encodeURIComponent(`/admin/oauth/consent/${ctx.params.id ?? ""}`)}`,
            ),
          );
        }
        const companyId = nonEmpty((ctx.query as Record<string, string | undefined>).company_id);
        return view((session) => consentPage(session, ctx.params.id ?? "", null, 200, companyId))(ctx);
      },
      { detail: pageDoc("Admin pages: consent to an agent host's sign-in") },
    ),
    post(
      "/admin/oauth/consent/:id",
      action((session, form, ctx) => {
        const id = ctx.params.id ?? "";
        if (form.decision === "deny") return redirect(oauth.requests.deny(id, actorOf(ctx)).redirect_to);
        const accounts = Object.keys(form)
          .filter((k) => k.startsWith("account_") && form[k] === "on")
          .map((k) => ({ bank_account_id: k.slice("account_".length) }));
        try {
          const { redirect_to } = oauth.requests.approve(
            id,
            { company_id: form.company_id ?? "", accounts },
            actorOf(ctx),
          );
          return redirect(redirect_to);
        } catch (e) {
          if (e instanceof ApiError && e.status === 400)
            return consentPage(session, id, e.message, 400, form.company_id);
          throw e;
        }
      }),
      { detail: pageDoc("Admin pages: approve or deny an agent host's sign-in", "form") },
    ),
  ];
}
