// The admin web pages under /admin: server-rendered HTML over the same admin services and
// StatementService as the admin API, so every change is validated and audited the same way.
//
// Security: sign-in with SVC_ADMIN_TOKEN (throttled per client address) opens a server-side
// session (see session.ts) carried by an HttpOnly, SameSite=Strict cookie on Path=/admin, Secure
// when the browser came over https. Every form post must come from our own origin and carry the
// session's anti-forgery token. Without a session, every page redirects (303) to /admin/login.
// Without SVC_ADMIN_TOKEN there are no pages at all: 404, like the admin API.
//
// The machinery every page shares is in kit.tsx and layout.tsx; each area has its folder with its
// routes (routes.tsx) and its pages (view.tsx).
import { Elysia } from "elysia";
import { bodyPolicyOption, DEFAULT_BODY_POLICY } from "../../http/body-policy";
import { withRequestState } from "../../http/request-state";
import { accountRoutes } from "./accounts/routes";
import { accountSyncRoutes } from "./accounts/sync-routes";
import { auditRoutes } from "./audit/routes";
import { bankLoginRoutes } from "./bank-logins/routes";
import { companyRoutes } from "./companies/routes";
import { type AdminPagesDeps, pageKit } from "./kit";
import { oauthRoutes } from "./oauth/routes";
import { operationRoutes } from "./operations/routes";
import type { PageRoute } from "./page-route";
import { paymentRoutes } from "./payments/routes";
import { signInRoutes } from "./sign-in/routes";
import { statementRoutes } from "./statements/routes";
import { tokenRoutes } from "./tokens/routes";

export type { AdminPagesDeps } from "./kit";

export function adminPages(deps: AdminPagesDeps) {
  const adminToken = deps.adminToken;
  // No admin token configured: no pages, so /admin/... is the HTTP core's 404 like the admin API.
  if (adminToken === null) return new Elysia();

  const kit = pageKit(deps);
  const routes: PageRoute[] = [
    ...signInRoutes(kit, adminToken),
    ...companyRoutes(kit),
    ...accountRoutes(kit),
    ...operationRoutes(kit),
    ...accountSyncRoutes(kit),
    ...bankLoginRoutes(kit),
    ...paymentRoutes(kit),
    ...oauthRoutes(kit, deps.oauth),
    ...tokenRoutes(kit),
    ...statementRoutes(kit),
    ...auditRoutes(kit),
  ];
  const mount = (app: Elysia, route: PageRoute) =>
    app.route(
      route.method,
      route.path,
      route.handler as never,
      {
        detail: route.detail,
        ...(route.bodyPolicy ? { bodyPolicy: route.bodyPolicy } : {}),
      } as never,
    );

  const pages = new Elysia().use(withRequestState).use(bodyPolicyOption);
  // A page with a body policy of its own (a file upload, the sign-in) is outside the guard below:
  // one policy a route.
  for (const route of routes) if (route.bodyPolicy) mount(pages as never, route);
  // HTML forms (and JSON, as ever), read by the page once its session (or, signing in, its
  // origin) has passed; a body that cannot be read is refused by the page itself (the form's
  // anti-forgery check), as a page, not as the API's envelope.
  return pages.guard(
    { bodyPolicy: { kind: "form", limit: DEFAULT_BODY_POLICY.limit, invalid: "route", read: "route" } },
    (guarded) => {
      for (const route of routes) if (!route.bodyPolicy) mount(guarded as never, route);
      return guarded;
    },
  );
}
