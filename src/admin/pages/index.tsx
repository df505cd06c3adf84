// The admin web pages under /admin: server-rendered HTML over the same AdminService and
// StatementService as the admin API, so every change is validated and audited the same way.
//
// Security: sign-in with SVC_ADMIN_TOKEN (throttled per client address) opens a server-side
// session (see session.ts) carried by an HttpOnly, SameSite=Strict cookie on Path=/admin, Secure
// when the browser came over https. Every form post must come from our own origin and carry the
// session's anti-forgery token. Without a session, every page redirects (303) to /admin/login.
// Without SVC_ADMIN_TOKEN there are no pages at all: 404, like the admin API.
import { Elysia, NotFoundError } from "elysia";
import { isInstant } from "../../audit/audit-export";
import type { AuditLog } from "../../audit/audit-log";
import type { IpRange } from "../../auth/ip";
import { secretEquals, type TokenPurpose } from "../../auth/tokens";
import type { Clock } from "../../core/clock";
import { ApiError } from "../../core/errors";
import type { Logger } from "../../core/logger";
import { bodyPolicyOption, DEFAULT_BODY_POLICY, MB } from "../../http/body-policy";
import type { RouteDoc } from "../../http/docs";
import { type MultipartForm, readMultipart } from "../../http/multipart";
import { type RequestState, withRequestState } from "../../http/request-state";
import { checkedDownload, type DownloadDeps, downloadResponse } from "../../statements/export/download";
import type { StatementStatus } from "../../statements/repository";
import type { StatementService, StatementView } from "../../statements/service";
import type { AdminActor, AdminService, TokenGrantInput } from "../service";
import { APP_CSS, APP_JS } from "./assets";
import { buildChart, chartSince } from "./chart";
import type { Frame, NavKey } from "./layout";
import {
  cameOverHttps,
  clearedSessionCookie,
  readCookie,
  SESSION_COOKIE,
  sameOrigin,
  securityHeaders,
  sessionCookie,
} from "./security";
import { type AdminSession, AdminSessionStore, randomSecret, SignInThrottle } from "./session";
import { type AuditFilters, AuditPage, StatementsPage } from "./views/activity";
import { AccountsPage, CompaniesPage, type FormValues, LoginPage, MessagePage } from "./views/basics";
import { EditTokenPage, NewTokenPage, TokenCreatedPage, TokensPage } from "./views/tokens";

type SocketIp = (
  request: Request,
  server: { requestIP?(r: Request): { address: string } | null } | null,
) => string | null;

export interface AdminPagesDeps {
  admin: AdminService;
  statements: StatementService;
  audit: AuditLog;
  clock: Clock;
  logger: Logger;
  adminToken: string | null;
  trustedProxies: IpRange[];
  socketIp: SocketIp;
  banks: () => string[];
  /** What a statement download needs (the same as the integration API's). */
  download: DownloadDeps;
}

/** The bank's statement file, as the integration API takes it (decisions §11). */
const STATEMENT_FILE_LIMIT = 50 * MB;

/** What Elysia hands a route; only these parts are used. */

interface RouteContext {
  request: Request;
  requestState: RequestState;
  body: unknown;
  params: Record<string, string>;
  query: Record<string, string | undefined>;
  set: { status?: number | string; headers: Record<string, string | number> };
  server: unknown;
}

type Outcome =
  | { kind: "page"; status: number; html: string; headers?: Record<string, string> }
  | { kind: "redirect"; location: string; cookie?: string };

const LANDING = "/admin/tokens";
const ASSETS: Record<string, { type: string; body: string }> = {
  "app.css": { type: "text/css; charset=utf-8", body: APP_CSS },
  "app.js": { type: "text/javascript; charset=utf-8", body: APP_JS },
};
const PAGE_SIZE = 50;
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const DATETIME_LOCAL_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?$/;
const STATUSES: StatementStatus[] = ["processing", "ready", "failed"];

/** OpenAPI entry of a page: browsers only, documented so that the route list stays complete. */
function pageDoc(summary: string, kind: "page" | "form" | "asset" = "page"): RouteDoc {
  const html = { "text/html": { schema: { type: "string" } } };
  const responses: Record<string, { description: string; content?: object }> =
    kind === "asset"
      ? { 200: { description: "Static file" } }
      : {
          200: { description: "HTML page", content: html },
          303: { description: "Redirect: to /admin/login without a session; after a successful form" },
        };
  if (kind === "form") {
    responses[400] = { description: "The form again, with the service's validation message", content: html };
    responses[403] = {
      description: "Refused: missing or wrong CSRF token, or another origin",
      content: html,
    };
  }
  return {
    summary,
    tags: ["admin pages"],
    description: "Server-rendered HTML for browsers (session cookie from the sign-in form); not an API.",
    responses,
    security: [],
  } as RouteDoc;
}

const page = (html: JSX.Element, status = 200, headers?: Record<string, string>): Outcome => ({
  kind: "page",
  status,
  html: html as string,
  headers,
});
const redirect = (location: string, cookie?: string): Outcome => ({ kind: "redirect", location, cookie });

export function adminPages(deps: AdminPagesDeps) {
  const adminToken = deps.adminToken;
  // No admin token configured: no pages, so /admin/... is the HTTP core's 404 like the admin API.
  if (adminToken === null) return new Elysia();

  const { admin, statements, logger } = deps;
  const sessions = new AdminSessionStore(deps.clock);
  const throttle = new SignInThrottle(deps.clock);

  const https = (ctx: RouteContext) =>
    cameOverHttps(ctx.request, deps.socketIp(ctx.request, ctx.server as never), deps.trustedProxies);
  const actorOf = ({ requestState: state }: RouteContext): AdminActor => ({
    requestId: state.requestId,
    ip: state.clientIp,
  });
  /**
   * A refused sign-in in the audit log (address and time; never what was typed), so an operator
   * sees a guessing attempt on the audit page. The page answers even if the entry cannot be written.
   */
  const auditSignIn = (ctx: RouteContext, outcome: "invalid_token" | "rate_limited") => {
    try {
      admin.recordAction("admin.ui.sign_in", "admin-ui", actorOf(ctx), undefined, outcome);
    } catch (e) {
      logger.error("audit write failed", {
        request_id: ctx.requestState.requestId,
        action: "admin.ui.sign_in",
        error: e instanceof Error ? e.message : String(e),
      });
    }
  };
  const sessionOf = (ctx: RouteContext): AdminSession | null =>
    sessions.touch(readCookie(ctx.request.headers.get("cookie"), SESSION_COOKIE));

  function frame(session: AdminSession | null, title: string, active: NavKey | null): Frame {
    const flash = session ? session.flash : [];
    if (session) session.flash = [];
    return { title, active, csrf: session?.csrf ?? null, flash };
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

  /** Runs a page; an ApiError nobody handled becomes a message page with its status. */
  function run(ctx: RouteContext, session: AdminSession | null, body: () => Outcome): string {
    try {
      return send(ctx, body());
    } catch (error) {
      const f = session ? signedInFrame(session, "Ошибка", null) : frame(null, "Ошибка", null);
      if (error instanceof ApiError) {
        return send(ctx, page(<MessagePage frame={f} heading="Ошибка" text={error.message} />, error.status));
      }
      const requestId = ctx.requestState.requestId;
      logger.error("admin page failed", {
        request_id: requestId,
        error: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
        stack: error instanceof Error ? error.stack : undefined,
      });
      const text = `Внутренняя ошибка сервиса; номер запроса ${requestId}`;
      return send(ctx, page(<MessagePage frame={f} heading="Ошибка" text={text} />, 500));
    }
  }

  /** A page for signed-in administrators; anyone else is sent to the sign-in form. */
  const view =
    (handler: (session: AdminSession, ctx: RouteContext) => Outcome) =>
    (ctx: RouteContext): string => {
      const session = sessionOf(ctx);
      if (!session) return send(ctx, redirect("/admin/login"));
      return run(ctx, session, () => handler(session, ctx));
    };

  /** A form post: signed in, same origin, and the session's anti-forgery token; else 403 and
   *  nothing is done. */
  const action =
    (handler: (session: AdminSession, form: FormValues, ctx: RouteContext) => Outcome) =>
    (ctx: RouteContext): string => {
      const session = sessionOf(ctx);
      if (!session) return send(ctx, redirect("/admin/login"));
      return run(ctx, session, () =>
        checked(ctx, session, formOf(ctx.body), (form) => handler(session, form, ctx)),
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
      ) => Outcome,
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
    then: (form: FormValues) => Outcome,
  ): Outcome {
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

  /** A statement made from the statements page (ordered or imported): audited, then the list again. */
  function statementAction(
    session: AdminSession,
    ctx: RouteContext,
    action: string,
    input: Record<string, unknown>,
    make: () => StatementView,
    done: (view: StatementView) => string,
    values: FormValues,
  ): Outcome {
    const result = attempt(() =>
      admin.audited(action, actorOf(ctx), input, make, (view) => view.statement_id),
    );
    if ("error" in result)
      return statementsPage(session, {}, result.error.status, result.error.message, values);
    return flashThen(session, done(result.ok), "/admin/statements");
  }

  const flashThen = (session: AdminSession, text: string, location: string, kind: "ok" | "error" = "ok") => {
    session.flash.push({ kind, text });
    return redirect(location);
  };

  // ---- pages

  const companiesPage = (
    session: AdminSession,
    status = 200,
    error: string | null = null,
    values: FormValues = {},
  ) =>
    page(
      <CompaniesPage
        frame={signedInFrame(session, "Компании", "companies")}
        companies={admin.listCompanies()}
        error={error}
        values={values}
      />,
      status,
    );

  const accountsPage = (
    session: AdminSession,
    status = 200,
    error: string | null = null,
    values: FormValues = {},
  ) =>
    page(
      <AccountsPage
        frame={signedInFrame(session, "Счета", "accounts")}
        companies={admin.listCompanies()}
        accounts={admin.listBankAccounts()}
        banks={deps.banks()}
        error={error}
        values={values}
      />,
      status,
    );

  function newTokenPage(
    session: AdminSession,
    companyId: string,
    purpose: TokenPurpose,
    formId: string,
    status = 200,
    error: string | null = null,
    values: FormValues = { scope_read_statements: "on" },
  ): Outcome {
    const company = admin.listCompanies().find((c) => c.company_id === companyId);
    if (!company) throw new ApiError("not_found", "Компания не найдена");
    return page(
      <NewTokenPage
        frame={signedInFrame(session, "Новый токен", "tokens")}
        company={company}
        purpose={purpose}
        accounts={admin.listBankAccounts(company.company_id)}
        formId={formId}
        error={error}
        values={values}
      />,
      status,
    );
  }

  /** The edit form; after a refused save, with what was typed rather than what is stored. */
  function editTokenPage(
    session: AdminSession,
    id: string,
    status = 200,
    error: string | null = null,
    submitted: FormValues | null = null,
  ): Outcome {
    if (!UUID_RE.test(id)) throw new ApiError("not_found", "Токен не найден");
    const token = admin.tokenView(id);
    return page(
      <EditTokenPage
        frame={signedInFrame(session, "Токен", "tokens")}
        token={token}
        company={admin.listCompanies().find((c) => c.company_id === token.company_id)}
        accounts={admin.listBankAccounts(token.company_id)}
        error={error}
        submitted={submitted}
      />,
      status,
    );
  }

  function statementsPage(
    session: AdminSession,
    query: Record<string, string | undefined>,
    status = 200,
    error: string | null = null,
    values: FormValues = {},
  ): Outcome {
    const accounts = admin.listBankAccounts();
    const filters = {
      bank_account_id: nonEmpty(query.bank_account_id),
      status: STATUSES.find((s) => s === query.status),
      cursor: nonEmpty(query.cursor),
    };
    let listed: {
      statements: Parameters<typeof StatementsPage>[0]["statements"];
      next_cursor: string | null;
    } = {
      statements: [],
      next_cursor: null,
    };
    const result = attempt(() =>
      statements.page({
        accountIds: filters.bank_account_id
          ? accounts
              .filter((a) => a.bank_account_id === filters.bank_account_id)
              .map((a) => a.bank_account_id)
          : accounts.map((a) => a.bank_account_id),
        status: filters.status,
        limit: PAGE_SIZE,
        cursor: filters.cursor,
      }),
    );
    if ("error" in result) {
      status = result.error.status;
      error = result.error.message;
    } else listed = result.ok;
    return page(
      <StatementsPage
        frame={signedInFrame(session, "Выписки", "statements")}
        accounts={accounts}
        statements={listed.statements}
        nextCursor={listed.next_cursor}
        filters={filters}
        error={error}
        values={values}
        today={statements.today()}
        companies={admin.listCompanies()}
      />,
      status,
    );
  }

  function auditPage(session: AdminSession, query: Record<string, string | undefined>): Outcome {
    const tokens = admin.listTokens();
    const filters: AuditFilters = {
      api_token_id: nonEmpty(query.api_token_id),
      action: nonEmpty(query.action?.trim()),
      since: nonEmpty(query.since),
      until: nonEmpty(query.until),
      cursor: nonEmpty(query.cursor),
    };
    const result = attempt(() =>
      admin.auditLog({
        api_token_id: filters.api_token_id,
        action: filters.action,
        since: asUtc(filters.since),
        until: asUtc(filters.until),
        cursor: filters.cursor,
        limit: PAGE_SIZE,
      }),
    );
    const now = deps.clock.now();
    const byId = new Map(tokens.map((tk) => [tk.api_token_id, tk]));
    const chart = buildChart(now, deps.audit.agentCallsPerHour(chartSince(now)), (id) => {
      if (id === null) return "без токена";
      const tk = byId.get(id);
      return tk ? `${tk.token_prefix}… ${tk.name}` : id;
    });
    const ok = "ok" in result ? result.ok : { entries: [], next_cursor: null };
    return page(
      <AuditPage
        frame={signedInFrame(session, "Журнал аудита", "audit")}
        chart={chart}
        tokens={tokens}
        entries={ok.entries}
        nextCursor={ok.next_cursor}
        filters={filters}
        error={"error" in result ? result.error.message : null}
        names={objectNames(tokens)}
      />,
      "error" in result ? result.error.status : 200,
    );
  }

  /** Tokens, accounts and companies by id, as the audit page names an entry's object. */
  function objectNames(tokens: ReturnType<typeof admin.listTokens>): Map<string, string> {
    const names = new Map<string, string>();
    for (const c of admin.listCompanies()) names.set(c.company_id, `компания ${c.name}`);
    for (const a of admin.listBankAccounts())
      names.set(a.bank_account_id, `счёт ${a.alias} ${a.account_number_masked}`);
    for (const tk of tokens) names.set(tk.api_token_id, `токен ${tk.token_prefix}… ${tk.name}`);
    return names;
  }

  const loginPage = (status: number, error: string | null, headers?: Record<string, string>): Outcome =>
    page(<LoginPage frame={frame(null, "Вход", null)} error={error} />, status, headers);

  return (
    new Elysia()
      .use(withRequestState)
      .use(bodyPolicyOption)
      // The one page that takes a file streams it (outside the guard below: one policy a route).
      .post(
        "/admin/statements/import",
        uploadAction(STATEMENT_FILE_LIMIT, (session, form, files, ctx) => {
          const input = { bank_account_id: form.bank_account_id ?? "" };
          const file = files.get("file");
          return statementAction(
            session,
            ctx,
            "admin.statement.import",
            { ...input, filename: file?.filename, bytes: file?.bytes.byteLength },
            () => {
              if (!file || file.bytes.byteLength === 0) {
                throw new ApiError("validation_error", "Выберите файл выписки (kl_to_1c.txt)", {
                  field: "file",
                });
              }
              return statements.importFileFromUi(input.bank_account_id, file.bytes);
            },
            (v) => `Выписка загружена: ${v.date_from} — ${v.date_to}, операций: ${v.operations_count ?? 0}`,
            input,
          );
        }),
        {
          bodyPolicy: { kind: "stream", limit: STATEMENT_FILE_LIMIT },
          detail: pageDoc("Admin pages: import a statement from the bank's 1C file", "form"),
        },
      )
      // HTML forms (and JSON, as ever); a body that cannot be read is refused by the page itself
      // (the form's anti-forgery check), as a page, not as the API's envelope.
      .guard({ bodyPolicy: { kind: "form", limit: DEFAULT_BODY_POLICY.limit, invalid: "route" } }, (pages) =>
        pages
          .get(
            "/admin/assets/:name",
            ({ params, set }) => {
              const asset = Object.hasOwn(ASSETS, params.name) ? ASSETS[params.name] : undefined;
              if (!asset) throw new ApiError("not_found");
              Object.assign(set.headers, securityHeaders(), { "content-type": asset.type });
              return asset.body;
            },
            {
              detail: pageDoc("The stylesheet and the script of the admin pages (app.css, app.js)", "asset"),
            },
          )
          .get(
            "/admin",
            view(() => redirect(LANDING)),
            { detail: pageDoc("Admin pages: start (redirects to the token list)") },
          )

          // ---- sign-in and sign-out
          .get(
            "/admin/login",
            (ctx) => {
              if (sessionOf(ctx)) return send(ctx, redirect(LANDING));
              return run(ctx, null, () => loginPage(200, null));
            },
            { detail: pageDoc("Admin pages: sign-in form") },
          )
          .post(
            "/admin/login",
            (ctx) =>
              run(ctx, null, () => {
                if (!sameOrigin(ctx.request, https(ctx))) {
                  return loginPage(403, "Запрос отклонён: форма отправлена с другого сайта.");
                }
                const ipKey = ctx.requestState.clientIp ?? "unknown";
                const wait = throttle.retryAfter(ipKey);
                if (wait !== null) {
                  auditSignIn(ctx, "rate_limited");
                  return loginPage(429, `Слишком много неудачных попыток входа. Повторите через ${wait} с.`, {
                    "retry-after": String(wait),
                  });
                }
                const presented = formOf(ctx.body)?.token ?? "";
                if (presented.length === 0 || !secretEquals(presented, adminToken)) {
                  throttle.fail(ipKey);
                  logger.warn("admin sign-in failed", {
                    request_id: ctx.requestState.requestId,
                    ip: ipKey,
                  });
                  auditSignIn(ctx, "invalid_token");
                  return loginPage(401, "Неверный токен администратора.");
                }
                const previous = readCookie(ctx.request.headers.get("cookie"), SESSION_COOKIE);
                if (previous !== null) sessions.destroy(previous);
                const session = sessions.create();
                admin.recordAction("admin.ui.sign_in", "admin-ui", actorOf(ctx));
                return redirect(LANDING, sessionCookie(session.id, https(ctx)));
              }),
            {
              detail: pageDoc(
                "Admin pages: sign in with SVC_ADMIN_TOKEN (401 wrong token, 429 throttled)",
                "form",
              ),
            },
          )
          .post(
            "/admin/logout",
            action((session, _form, ctx) => {
              sessions.destroy(session.id);
              admin.recordAction("admin.ui.sign_out", "admin-ui", actorOf(ctx));
              return redirect("/admin/login", clearedSessionCookie(https(ctx)));
            }),
            { detail: pageDoc("Admin pages: sign out", "form") },
          )

          // ---- companies and accounts
          .get(
            "/admin/companies",
            view((session) => companiesPage(session)),
            { detail: pageDoc("Admin pages: companies") },
          )
          .post(
            "/admin/companies",
            action((session, form, ctx) => {
              const result = attempt(() =>
                admin.createCompany(
                  { name: form.name ?? "", inn: form.inn ?? "", kpp: nonEmpty(form.kpp) ?? null },
                  actorOf(ctx),
                ),
              );
              if ("error" in result)
                return companiesPage(session, result.error.status, result.error.message, form);
              return flashThen(session, `Компания «${result.ok.name}» создана`, "/admin/companies");
            }),
            { detail: pageDoc("Admin pages: create a company", "form") },
          )
          .get(
            "/admin/accounts",
            view((session) => accountsPage(session)),
            { detail: pageDoc("Admin pages: bank accounts") },
          )
          .post(
            "/admin/accounts",
            action((session, form, ctx) => {
              const ops = nonEmpty(form.ops_per_day);
              const result = attempt(() =>
                admin.createBankAccount(
                  {
                    company_id: form.company_id ?? "",
                    bank: form.bank ?? "",
                    account_number: (form.account_number ?? "").trim(),
                    bik: (form.bik ?? "").trim(),
                    currency: nonEmpty(form.currency?.trim()),
                    alias: nonEmpty(form.alias?.trim()),
                    sandbox: ops === undefined ? undefined : { ops_per_day: Number(ops) },
                  },
                  actorOf(ctx),
                ),
              );
              if ("error" in result)
                return accountsPage(session, result.error.status, result.error.message, form);
              return flashThen(
                session,
                `Счёт ${result.ok.alias} (${result.ok.account_number_masked}) добавлен`,
                "/admin/accounts",
              );
            }),
            { detail: pageDoc("Admin pages: add a bank account", "form") },
          )

          // ---- tokens
          .get(
            "/admin/tokens",
            view((session) =>
              page(
                <TokensPage
                  frame={signedInFrame(session, "Токены", "tokens")}
                  tokens={admin.listTokens()}
                  companies={admin.listCompanies()}
                  accounts={admin.listBankAccounts()}
                  now={deps.clock.now()}
                />,
              ),
            ),
            { detail: pageDoc("Admin pages: tokens") },
          )
          .get(
            "/admin/tokens/new",
            view((session, ctx) =>
              newTokenPage(session, ctx.query.company_id ?? "", purposeOf(ctx.query.purpose), randomSecret()),
            ),
            { detail: pageDoc("Admin pages: token creation form (per purpose)") },
          )
          .post(
            "/admin/tokens",
            action((session, form, ctx) => {
              const formId = form.form_id ?? randomSecret();
              if (form.form_id !== undefined && session.usedForms.has(form.form_id)) {
                return flashThen(
                  session,
                  "Этот токен уже создан; его значение показывается только один раз.",
                  "/admin/tokens",
                  "error",
                );
              }
              const purpose = form.purpose;
              if (purpose !== "integration" && purpose !== "mcp")
                throw new ApiError("validation_error", "Неверное назначение токена");
              const companyId = form.company_id ?? "";
              const result = attempt(() =>
                admin.createToken(
                  {
                    company_id: companyId,
                    name: form.name ?? "",
                    purpose,
                    mode: form.mode === "test" ? "test" : "live",
                    scope_read_statements: form.scope_read_statements === "on",
                    scope_send_payments: form.scope_send_payments === "on",
                    accounts: grantsOf(form),
                    allowed_ips: ipsOf(form.allowed_ips),
                    rate_limit_per_minute: rateLimitOf(form.rate_limit_per_minute),
                    expires_at: asUtc(nonEmpty(form.expires_at)) ?? null,
                  },
                  actorOf(ctx),
                ),
              );
              if ("error" in result) {
                return newTokenPage(
                  session,
                  companyId,
                  purpose,
                  formId,
                  result.error.status,
                  result.error.message,
                  form,
                );
              }
              if (form.form_id !== undefined) sessions.useForm(session, form.form_id);
              const { token: raw, ...view } = result.ok;
              return page(
                <TokenCreatedPage
                  frame={signedInFrame(session, "Токен создан", "tokens")}
                  token={view}
                  raw={raw}
                />,
              );
            }),
            {
              detail: pageDoc(
                "Admin pages: create a token (the raw value is shown on this response only)",
                "form",
              ),
            },
          )
          .get(
            "/admin/tokens/:id",
            view((session, ctx) => editTokenPage(session, ctx.params.id ?? "")),
            { detail: pageDoc("Admin pages: edit a token") },
          )
          .post(
            "/admin/tokens/:id",
            action((session, form, ctx) => {
              const id = ctx.params.id ?? "";
              const current = UUID_RE.test(id) ? admin.tokenView(id) : null;
              if (!current) throw new ApiError("not_found", "Токен не найден");
              const sendScope = form.scope_send_payments === "on";
              const result = attempt(() =>
                admin.patchToken(
                  id,
                  {
                    name: form.name ?? current.name,
                    scope_read_statements: form.scope_read_statements === "on",
                    // The agent form has no such field; a forged one still reaches the service's refusal.
                    scope_send_payments: current.purpose === "mcp" && !sendScope ? undefined : sendScope,
                    accounts: grantsOf(form),
                    allowed_ips: ipsOf(form.allowed_ips),
                    rate_limit_per_minute: rateLimitOf(form.rate_limit_per_minute),
                    expires_at: asUtc(nonEmpty(form.expires_at)) ?? null,
                  },
                  actorOf(ctx),
                ),
              );
              if ("error" in result)
                return editTokenPage(session, id, result.error.status, result.error.message, form);
              return flashThen(session, "Изменения сохранены", `/admin/tokens/${id}`);
            }),
            { detail: pageDoc("Admin pages: save a token", "form") },
          )
          .post(
            "/admin/tokens/:id/revoke",
            action((session, _form, ctx) => {
              const id = ctx.params.id ?? "";
              if (!UUID_RE.test(id)) throw new ApiError("not_found", "Токен не найден");
              const token = admin.revokeToken(id, actorOf(ctx));
              return flashThen(
                session,
                `Токен ${token.token_prefix}… (${token.name}) отозван`,
                "/admin/tokens",
              );
            }),
            { detail: pageDoc("Admin pages: revoke a token", "form") },
          )

          // ---- statements and the audit log
          .get(
            "/admin/statements",
            view((session, ctx) => statementsPage(session, ctx.query)),
            { detail: pageDoc("Admin pages: statements of every source") },
          )
          .post(
            "/admin/statements",
            action((session, form, ctx) => {
              const input = {
                bank_account_id: form.bank_account_id ?? "",
                date_from: form.date_from ?? "",
                date_to: form.date_to ?? "",
              };
              return statementAction(
                session,
                ctx,
                "admin.statement.order",
                input,
                () => statements.orderFromUi(input.bank_account_id, input.date_from, input.date_to),
                (v) => `Выписка заказана: ${v.date_from} — ${v.date_to}, статус ${v.status}`,
                form,
              );
            }),
            { detail: pageDoc("Admin pages: order a statement via the UI", "form") },
          )
          .get(
            "/admin/audit-log",
            view((session, ctx) => auditPage(session, ctx.query)),
            { detail: pageDoc("Admin pages: audit log with the chart of agent calls") },
          )
          // Any other page address: a page saying so (the admin API keeps its JSON envelope).
          .get(
            "/admin/*",
            (ctx) => {
              // The admin API's own answer: 404, or 405 where the path exists for other methods.
              if (/^\/admin\/api(\/|$)/.test(new URL(ctx.request.url).pathname)) throw new NotFoundError();
              return run(ctx, sessionOf(ctx), () => {
                throw new ApiError("not_found", "Такой страницы нет");
              });
            },
            { detail: pageDoc("Admin pages: any other address (a page saying there is no such page)") },
          )
          .get(
            "/admin/statements/:id/export",
            (ctx) => {
              const session = sessionOf(ctx);
              if (!session) return send(ctx, redirect("/admin/login"));
              const id = ctx.params.id ?? "";
              try {
                if (!UUID_RE.test(id)) throw new ApiError("not_found", "Выписка не найдена");
                const download = checkedDownload({
                  format: ctx.query.format ?? "",
                  version: ctx.query.version,
                  bom: ctx.query.bom,
                });
                const { row, account } = statements.forOperator(id);
                return downloadResponse(deps.download, row, account, download, ctx.requestState.requestId);
              } catch (error) {
                return run(ctx, session, () => {
                  throw error;
                });
              }
            },
            { detail: pageDoc("Admin pages: download a ready statement (1C, CSV or JSON)") },
          )
          .get(
            "/admin/audit-log/export",
            (ctx) => {
              const session = sessionOf(ctx);
              if (!session) return send(ctx, redirect("/admin/login"));
              const format = ctx.query.format;
              const since = asUtc(nonEmpty(ctx.query.since));
              const until = asUtc(nonEmpty(ctx.query.until));
              const bad =
                format !== "csv" && format !== "jsonl"
                  ? "Формат выгрузки: csv или jsonl"
                  : [since, until].some((v) => v !== undefined && !isInstant(v))
                    ? "Неверная дата периода"
                    : null;
              if (bad || (format !== "csv" && format !== "jsonl")) {
                const f = signedInFrame(session, "Ошибка", null);
                return send(ctx, page(<MessagePage frame={f} heading="Ошибка" text={bad ?? ""} />, 400));
              }
              const name = `audit_${(since ?? "start").slice(0, 10)}_${(until ?? "now").slice(0, 10)}.${format}`;
              return new Response(deps.audit.exportStream({ since, until }, format), {
                headers: {
                  "content-type":
                    format === "csv" ? "text/csv; charset=utf-8" : "application/x-ndjson; charset=utf-8",
                  "content-disposition": `attachment; filename="${name}"`,
                  "cache-control": "no-store",
                },
              });
            },
            { detail: pageDoc("Admin pages: the audit log of a period as CSV or JSON Lines") },
          ),
      )
  );
}

// ---- form and query helpers

/** A form post's fields; null for anything that is not a flat object of strings. */
function formOf(body: unknown): FormValues | null {
  if (body === null || typeof body !== "object" || Array.isArray(body)) return null;
  const values = body as Record<string, unknown>;
  for (const v of Object.values(values)) if (typeof v !== "string") return null;
  return values as FormValues;
}

function attempt<T>(fn: () => T): { ok: T } | { error: ApiError } {
  try {
    return { ok: fn() };
  } catch (error) {
    if (error instanceof ApiError) return { error };
    throw error;
  }
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === "" ? undefined : value;
}

function purposeOf(value: string | undefined): TokenPurpose {
  return value === "mcp" ? "mcp" : "integration";
}

/** `read:<account id>` and `send:<account id>` checkboxes, as the service's grant list. Every
 *  posted account goes to the service, which checks it (company, purpose) like the API does. */
function grantsOf(form: FormValues): TokenGrantInput[] {
  const grants = new Map<string, TokenGrantInput>();
  for (const [key, value] of Object.entries(form)) {
    const m = /^(read|send):(.+)$/.exec(key);
    if (!m || value !== "on") continue;
    const id = m[2]!;
    const grant = grants.get(id) ?? {
      bank_account_id: id,
      allow_read_statements: false,
      allow_send_payments: false,
    };
    if (m[1] === "read") grant.allow_read_statements = true;
    else grant.allow_send_payments = true;
    grants.set(id, grant);
  }
  return [...grants.values()];
}

function ipsOf(text: string | undefined): string[] {
  return (text ?? "")
    .split(/[\s,]+/)
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

/** Empty means the purpose's default; anything else goes to the service's 1..10000 check. */
function rateLimitOf(text: string | undefined): number | null {
  const value = nonEmpty(text?.trim());
  return value === undefined ? null : Number(value);
}

/** A `datetime-local` value carries no zone; the pages mean UTC. Anything else passes as is. */
function asUtc(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  return DATETIME_LOCAL_RE.test(value) ? `${value}Z` : value;
}
