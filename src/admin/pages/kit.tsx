// What every admin page shares: the page outcome (HTML or redirect), the session checks of a
// page and of a form post (same origin, anti-forgery token), the error page, and the form helpers.
// Each area of the pages (sign-in, companies, accounts, bank logins, payments, OAuth, tokens,
// statements, audit) has its folder: routes.tsx lists its routes with `get`/`post` (page-route.ts),
// view.tsx renders its pages; index.tsx mounts the routes.

import type { AuditLog } from "../../audit/audit-log";
import type { IpRange } from "../../auth/ip";
import { secretEquals } from "../../auth/tokens";
import { BankError } from "../../banks/adapter";
import type { Clock } from "../../core/clock";
import { ApiError } from "../../core/errors";
import { errorText, type Logger } from "../../core/logger";
import type { BearerRefusals } from "../../http/admin-auth";
import { readBody } from "../../http/body-policy";
import { type MultipartForm, readMultipart } from "../../http/multipart";
import type { McpReadModel } from "../../mcp/read-model";
import type { OAuthService } from "../../oauth/service";
import type { PaymentService } from "../../payments/service";
import type { DownloadDeps } from "../../statements/export/download";
import type { StatementService } from "../../statements/service";
import type { SyncService } from "../../sync/service";
import type { AdminServices } from "../areas";
import type { AdminActor } from "../audit";
import { parseRuDateTime } from "./format";
import { type FormValues, type Frame, MessagePage, type NavKey } from "./layout";
import { forOperators, operatorMessage } from "./messages";
import { get, type PageRoute, pageDoc, post, type RouteContext } from "./page-route";
import { cameOverHttps, readCookie, SESSION_COOKIE, sameOrigin, securityHeaders } from "./security";
import { type AdminSession, AdminSessionStore } from "./session";

type SocketIp = (
  request: Request,
  server: { requestIP?(r: Request): { address: string } | null } | null,
) => string | null;

export interface AdminPagesDeps {
  admin: AdminServices;
  statements: StatementService;
  audit: AuditLog;
  clock: Clock;
  logger: Logger;
  adminToken: string | null;
  trustedProxies: IpRange[];
  socketIp: SocketIp;
  /** Wrong sign-ins: counted per client address (SVC_PUBLIC_RATE_LIMIT_PER_MINUTE) and audited. */
  signInRefusals: BearerRefusals;
  banks: () => string[];
  payments: PaymentService;
  oauth: OAuthService;
  /** What a statement download needs (the same as the integration API's). */
  download: DownloadDeps;
  /** The 1C:DirectBank settings file of a token and account (directbank/service.ts). */
  directbankSettings: (apiTokenId: string, bankAccountId?: string) => string;
  /** What the agent tools read: an account's operations (search_operations) and coverage. */
  read: McpReadModel;
  /** The business time zone (SVC_TIMEZONE): the pages' times and what "today" is. */
  timezone: string;
  /** Accounts that keep themselves fresh, and the pass that runs them now. */
  sync: { service: SyncService; kick: () => void };
}

export type Outcome =
  | { kind: "page"; status: number; html: string; headers?: Record<string, string> }
  | { kind: "redirect"; location: string; cookie?: string };

export const LANDING = "/admin/tokens";
export const PAGE_SIZE = 50;

export const page = (html: JSX.Element, status = 200, headers?: Record<string, string>): Outcome => ({
  kind: "page",
  status,
  html: html as string,
  headers,
});
export const redirect = (location: string, cookie?: string): Outcome => ({
  kind: "redirect",
  location,
  cookie,
});

export type PageKit = ReturnType<typeof pageKit>;

/** A list page with its creation form; after a refused post, with the service's message and what
 *  was typed. */
export type FormPage = (
  session: AdminSession,
  status?: number,
  error?: string | null,
  values?: FormValues,
) => Outcome;

export function pageKit(deps: AdminPagesDeps) {
  const { logger } = deps;
  const sessions = new AdminSessionStore(deps.clock);

  const https = (ctx: RouteContext) =>
    cameOverHttps(ctx.request, deps.socketIp(ctx.request, ctx.server as never), deps.trustedProxies);
  const actorOf = ({ requestState: state }: RouteContext): AdminActor => ({
    requestId: state.requestId,
    ip: state.clientIp,
  });
  const sessionOf = (ctx: RouteContext): AdminSession | null =>
    sessions.touch(readCookie(ctx.request.headers.get("cookie"), SESSION_COOKIE));

  function frame(session: AdminSession | null, title: string, active: NavKey | null): Frame {
    const flash = session ? session.flash : [];
    if (session) session.flash = [];
    return { title, active, csrf: session?.csrf ?? null, flash, timeZone: deps.timezone };
  }
  const signedInFrame = (session: AdminSession, title: string, active: NavKey | null) =>
    frame(session, title, active) as Frame & { csrf: string };

  function send(ctx: RouteContext, outcome: Outcome): string {
    Object.assign(ctx.set.headers, securityHeaders());
    if (outcome.kind === "redirect") {
      if (outcome.cookie !== undefined) ctx.set.headers["set-cookie"] = outcome.cookie;
      ctx.set.status = 303;
      ctx.set.headers.location = outcome.location;
      return "";
    }
    ctx.set.status = outcome.status;
    ctx.set.headers["content-type"] = "text/html; charset=utf-8";
    Object.assign(ctx.set.headers, outcome.headers ?? {});
    return outcome.html;
  }

  /** Runs a page; an ApiError (or a bank's refusal) nobody handled becomes a message page. */
  function run(
    ctx: RouteContext,
    session: AdminSession | null,
    body: () => Outcome | Promise<Outcome>,
  ): string | Promise<string> {
    const fail = (error: unknown): string => {
      const f = session ? signedInFrame(session, "Ошибка", null) : frame(null, "Ошибка", null);
      if (error instanceof ApiError) {
        const text = operatorMessage(error.message);
        return send(ctx, page(<MessagePage frame={f} heading="Ошибка" text={text} />, error.status));
      }
      if (error instanceof BankError) {
        const text = `Банк: ${error.message}`;
        return send(ctx, page(<MessagePage frame={f} heading="Ошибка банка" text={text} />, 502));
      }
      const requestId = ctx.requestState.requestId;
      logger.error("admin page failed", {
        request_id: requestId,
        error: errorText(error),
        stack: error instanceof Error ? error.stack : undefined,
      });
      const text = `Внутренняя ошибка сервиса; номер запроса ${requestId}`;
      return send(ctx, page(<MessagePage frame={f} heading="Ошибка" text={text} />, 500));
    };
    try {
      const outcome = body();
      return outcome instanceof Promise ? outcome.then((o) => send(ctx, o), fail) : send(ctx, outcome);
    } catch (error) {
      return fail(error);
    }
  }

  /** A page for signed-in administrators; anyone else is sent to the sign-in form. */
  const view =
    (handler: (session: AdminSession, ctx: RouteContext) => Outcome | Promise<Outcome>) =>
    (ctx: RouteContext): string | Promise<string> => {
      const session = sessionOf(ctx);
      if (!session) return send(ctx, redirect("/admin/login"));
      return run(ctx, session, () => handler(session, ctx));
    };

  /** A form post: signed in, same origin, and the session's anti-forgery token; else 403 and
   *  nothing is done. */
  const action =
    (handler: (session: AdminSession, form: FormValues, ctx: RouteContext) => Outcome | Promise<Outcome>) =>
    (ctx: RouteContext): string | Promise<string> => {
      const session = sessionOf(ctx);
      if (!session) return send(ctx, redirect("/admin/login"));
      // The form is read only now, for a signed-in administrator.
      return run(ctx, session, async () =>
        checked(ctx, session, formOf(await readBody(ctx)), (form) => handler(session, form, ctx)),
      );
    };

  /** A file upload form (multipart, streamed up to `limit`): the same checks as `action`. */
  const uploadAction =
    (
      limit: number,
      handler: (
        session: AdminSession,
        form: FormValues,
        files: MultipartForm["files"],
        ctx: RouteContext,
      ) => Outcome | Promise<Outcome>,
    ) =>
    async (ctx: RouteContext): Promise<string> => {
      const session = sessionOf(ctx);
      if (!session) return send(ctx, redirect("/admin/login"));
      let upload: MultipartForm;
      try {
        upload = await readMultipart(ctx.request, limit);
      } catch (error) {
        return run(ctx, session, () => {
          throw error;
        });
      }
      const form = Object.fromEntries(upload.fields) as FormValues;
      return run(ctx, session, () =>
        checked(ctx, session, form, (f) => handler(session, f, upload.files, ctx)),
      );
    };

  function checked(
    ctx: RouteContext,
    session: AdminSession,
    form: FormValues | null,
    then: (form: FormValues) => Outcome | Promise<Outcome>,
  ): Outcome | Promise<Outcome> {
    const csrf = form?._csrf;
    if (
      !sameOrigin(ctx.request, https(ctx)) ||
      form === null ||
      csrf === undefined ||
      !secretEquals(csrf, session.csrf)
    ) {
      logger.warn("admin form refused", {
        request_id: ctx.requestState.requestId,
        reason: "csrf",
      });
      const text =
        "Запрос отклонён: форма устарела или отправлена с другого сайта. Обновите страницу и повторите.";
      return page(
        <MessagePage
          frame={signedInFrame(session, "Запрос отклонён", null)}
          heading="Запрос отклонён"
          text={text}
        />,
        403,
      );
    }
    return then(form);
  }
  const flashThen = (session: AdminSession, text: string, location: string, kind: "ok" | "error" = "ok") => {
    session.flash.push({ kind, text });
    return redirect(location);
  };

  /** A list with its creation form: the post creates through the service, then the list again
   *  with a notice, or the form again with the service's message and what was typed. */
  function listWithForm<T>(
    path: string,
    listPage: FormPage,
    create: (form: FormValues, ctx: RouteContext) => T,
    notice: (created: T) => string,
    docs: { list: string; create: string },
  ): PageRoute[] {
    return [
      get(
        path,
        view((session) => listPage(session)),
        { detail: pageDoc(docs.list) },
      ),
      post(
        path,
        action((session, form, ctx) => {
          const result = attempt(() => create(form, ctx));
          // A refused form comes back as typed, except the bank login: a secret is never echoed.
          const { credentials: _secret, ...typed } = form;
          if ("error" in result) return listPage(session, result.error.status, result.error.message, typed);
          return flashThen(session, notice(result.ok), path);
        }),
        { detail: pageDoc(docs.create, "form") },
      ),
    ];
  }

  return {
    deps,
    sessions,
    https,
    actorOf,
    sessionOf,
    frame,
    signedInFrame,
    send,
    run,
    view,
    action,
    uploadAction,
    flashThen,
    listWithForm,
  };
}

// ---- form and query helpers

/** A form post's fields; null for anything that is not a flat object of strings. */
export function formOf(body: unknown): FormValues | null {
  if (body === null || typeof body !== "object" || Array.isArray(body)) return null;
  const values = body as Record<string, unknown>;
  for (const v of Object.values(values)) if (typeof v !== "string") return null;
  return values as FormValues;
}

export function attempt<T>(fn: () => T): { ok: T } | { error: ApiError } {
  try {
    return { ok: fn() };
  } catch (error) {
    if (error instanceof ApiError) return { error: forOperators(error) };
    throw error;
  }
}

export function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === "" ? undefined : value;
}

/**
 * A moment typed in a form as `дд.мм.гггг ЧЧ:ММ` (or `дд.мм.гггг`: its midnight) in the business
 * time zone, as an ISO instant; anything else passes as typed, for the service to refuse.
 */
export function instantOf(value: string | undefined, timeZone: string): string | undefined {
  if (value === undefined) return undefined;
  return parseRuDateTime(value, timeZone) ?? value;
}
