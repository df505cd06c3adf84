// Sign-in and sign-out, the start address, the assets, and the page for any unknown address.
import { NotFoundError } from "elysia";
import { secretEquals } from "../../../auth/tokens";
import { ApiError } from "../../../core/errors";
import { readBody } from "../../../http/body-policy";
import { refusedBearer } from "../../../http/client-limit";
import { APP_CSS, APP_JS } from "../assets";
import { formOf, LANDING, type Outcome, type PageKit, page, redirect } from "../kit";
import { get, type PageRoute, pageDoc, post } from "../page-route";
import {
  clearedSessionCookie,
  readCookie,
  SESSION_COOKIE,
  sameOrigin,
  securityHeaders,
  sessionCookie,
} from "../security";
import { LoginPage } from "./view";

const ASSETS: Record<string, { type: string; body: string }> = {
  "app.css": { type: "text/css; charset=utf-8", body: APP_CSS },
  "app.js": { type: "text/javascript; charset=utf-8", body: APP_JS },
};

export function signInRoutes(kit: PageKit, adminToken: string): PageRoute[] {
  const { admin } = kit.deps;
  const { sessions, https, actorOf, sessionOf, frame, send, run, view, action } = kit;
  const loginPage = (
    status: number,
    error: string | null,
    headers?: Record<string, string>,
    next?: string,
  ): Outcome =>
    page(<LoginPage frame={frame(null, "Вход", null)} error={error} next={next} />, status, headers);

  return [
    get(
      "/admin/assets/:name",
      ({ params, set }) => {
        const name = params.name ?? "";
        const asset = Object.hasOwn(ASSETS, name) ? ASSETS[name] : undefined;
        if (!asset) throw new ApiError("not_found");
        Object.assign(set.headers, securityHeaders(), { "content-type": asset.type });
        return asset.body;
      },
      {
        detail: pageDoc("The stylesheet and the script of the admin pages (app.css, app.js)", "asset"),
      },
    ),
    get(
      "/admin",
      view(() => redirect(LANDING)),
      { detail: pageDoc("Admin pages: start (redirects to the token list)") },
    ),
    get(
      "/admin/login",
      (ctx) => {
        const next = returnPath(ctx.query.next);
        if (sessionOf(ctx)) return send(ctx, redirect(next ?? LANDING));
        return run(ctx, null, () => loginPage(200, null, undefined, next));
      },
      { detail: pageDoc("Admin pages: sign-in form") },
    ),
    post(
      "/admin/login",
      (ctx) =>
        run(ctx, null, async () => {
          if (!sameOrigin(ctx.request, https(ctx))) {
            return loginPage(403, "Запрос отклонён: форма отправлена с другого сайта.");
          }
          // The form (within its 16 KB) is read only for a post from our own pages.
          const form = formOf(await readBody(ctx));
          const next = returnPath(form?.next);
          const presented = form?.token ?? "";
          // The right token always signs in: the lockout below is for wrong guesses only, so that
          // operators behind one address (a proxy svc is not told to trust) are never locked out
          // by someone else's guessing.
          if (presented.length === 0 || !secretEquals(presented, adminToken)) {
            // Counted for the address; audited (admin.ui.sign_in, the address and the time, never
            // what was typed) for its first refusal of the minute and the start of its lockout.
            const { limiter, audit } = kit.deps.signInRefusals;
            const refusal = refusedBearer(limiter, ctx.requestState, audit);
            if (refusal.code === "rate_limited") {
              const wait = String(refusal.details?.retry_after_seconds);
              return loginPage(429, `Слишком много неудачных попыток входа. Повторите через ${wait} с.`, {
                "retry-after": wait,
              });
            }
            return loginPage(401, "Неверный токен администратора.", undefined, next);
          }
          const previous = readCookie(ctx.request.headers.get("cookie"), SESSION_COOKIE);
          if (previous !== null) sessions.destroy(previous);
          const session = sessions.create();
          admin.audit.record("admin.ui.sign_in", "admin-ui", actorOf(ctx));
          return redirect(next ?? LANDING, sessionCookie(session.id, https(ctx)));
        }),
      {
        // A sign-in form is a token and a return address: 16 KB is plenty.
        bodyPolicy: { kind: "form", limit: 16 * 1024, invalid: "route", read: "route" },
        detail: pageDoc(
          "Admin pages: sign in with SVC_ADMIN_TOKEN (401 wrong token, 429 too many wrong ones from the address)",
          "form",
        ),
      },
    ),
    post(
      "/admin/logout",
      action((session, _form, ctx) => {
        sessions.destroy(session.id);
        admin.audit.record("admin.ui.sign_out", "admin-ui", actorOf(ctx));
        return redirect("/admin/login", clearedSessionCookie(https(ctx)));
      }),
      { detail: pageDoc("Admin pages: sign out", "form") },
    ),
    get(
      "/admin/*",
      (ctx) => {
        // The admin API's own answer: 404, or 405 where the path exists for other methods.
        if (/^\/admin\/api(\/|$)/.test(new URL(ctx.request.url).pathname)) throw new NotFoundError();
        return run(ctx, sessionOf(ctx), () => {
          throw new ApiError("not_found", "Такой страницы нет");
        });
      },
      { detail: pageDoc("Admin pages: any other address (a page saying there is no such page)") },
    ),
  ];
}

/** Where a sign-in goes on to: an agent host's consent page only (nothing else, nowhere else). */
function returnPath(value: string | undefined): string | undefined {
  return value && /^\/admin\/oauth\/consent\/[0-9a-f]{32}$/.test(value) ? value : undefined;
}
