// API tokens: the list, the creation form per purpose, editing and revocation.
import type { TokenPurpose } from "../../../auth/tokens";
import { ApiError } from "../../../core/errors";
import { isUuid } from "../../../core/ids";
import type { TokenGrantInput } from "../../model";
import { attempt, instantOf, nonEmpty, type Outcome, type PageKit, page, redirect } from "../kit";
import { ConfirmPage, type FormValues } from "../layout";
import { get, type PageRoute, pageDoc, post } from "../page-route";
import type { AdminSession } from "../session";
import { randomSecret } from "../session";
import { EditTokenPage, NewTokenPage } from "./form-view";
import { TokenCreatedPage, TokensPage } from "./view";

export function tokenRoutes(kit: PageKit): PageRoute[] {
  const { admin } = kit.deps;
  const deps = kit.deps;
  const { sessions, actorOf, signedInFrame, view, action, flashThen } = kit;

  function newTokenPage(
    session: AdminSession,
    companyId: string,
    purpose: TokenPurpose,
    formId: string,
    status = 200,
    error: string | null = null,
    values: FormValues = { scope_read_statements: "on" },
  ): Outcome {
    const company = admin.companies.list().find((c) => c.company_id === companyId);
    if (!company) throw new ApiError("not_found", "Компания не найдена");
    return page(
      <NewTokenPage
        frame={signedInFrame(session, "Новый токен", "tokens")}
        company={company}
        purpose={purpose}
        accounts={admin.accounts.list(company.company_id)}
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
    if (!isUuid(id)) throw new ApiError("not_found", "Токен не найден");
    const token = admin.tokens.view(id);
    return page(
      <EditTokenPage
        frame={signedInFrame(session, "Токен", "tokens")}
        token={token}
        company={admin.companies.list().find((c) => c.company_id === token.company_id)}
        accounts={admin.accounts.list(token.company_id)}
        error={error}
        submitted={submitted}
      />,
      status,
    );
  }

  return [
    get(
      "/admin/tokens/:id/directbank-settings",
      (ctx) => {
        const session = kit.sessionOf(ctx);
        if (!session) return kit.send(ctx, redirect("/admin/login"));
        try {
          const id = ctx.params.id ?? "";
          if (!isUuid(id)) throw new ApiError("not_found", "Токен не найден");
          const xml = deps.directbankSettings(id, ctx.query.bank_account_id || undefined);
          // The standard's files carry a BOM.
          return new Response(`\uFEFF${xml}`, {
            headers: {
              "content-type": "application/xml; charset=utf-8",
              "content-disposition": 'attachment; filename="directbank-settings.xml"',
            },
          });
        } catch (error) {
          return kit.run(ctx, session, () => {
            throw error;
          });
        }
      },
      { detail: pageDoc("Admin pages: the 1C:DirectBank settings file of a token and account") },
    ),
    get(
      "/admin/tokens",
      view((session) =>
        page(
          <TokensPage
            frame={signedInFrame(session, "Токены", "tokens")}
            tokens={admin.tokens.list()}
            companies={admin.companies.list()}
            accounts={admin.accounts.list()}
            now={deps.clock.now()}
          />,
        ),
      ),
      { detail: pageDoc("Admin pages: tokens") },
    ),
    get(
      "/admin/tokens/new",
      view((session, ctx) =>
        newTokenPage(session, ctx.query.company_id ?? "", purposeOf(ctx.query.purpose), randomSecret()),
      ),
      { detail: pageDoc("Admin pages: token creation form (per purpose)") },
    ),
    post(
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
          admin.tokens.create(
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
              expires_at: instantOf(nonEmpty(form.expires_at), deps.timezone) ?? null,
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
        detail: pageDoc("Admin pages: create a token (the raw value is shown on this response only)", "form"),
      },
    ),
    get(
      "/admin/tokens/:id",
      view((session, ctx) => editTokenPage(session, ctx.params.id ?? "")),
      { detail: pageDoc("Admin pages: edit a token") },
    ),
    post(
      "/admin/tokens/:id",
      action((session, form, ctx) => {
        const id = ctx.params.id ?? "";
        const current = isUuid(id) ? admin.tokens.view(id) : null;
        if (!current) throw new ApiError("not_found", "Токен не найден");
        const sendScope = form.scope_send_payments === "on";
        const result = attempt(() =>
          admin.tokens.patch(
            id,
            {
              name: form.name ?? current.name,
              scope_read_statements: form.scope_read_statements === "on",
              // The agent form has no such field; a forged one still reaches the service's refusal.
              scope_send_payments: current.purpose === "mcp" && !sendScope ? undefined : sendScope,
              accounts: grantsOf(form),
              allowed_ips: ipsOf(form.allowed_ips),
              rate_limit_per_minute: rateLimitOf(form.rate_limit_per_minute),
              expires_at: instantOf(nonEmpty(form.expires_at), deps.timezone) ?? null,
            },
            actorOf(ctx),
          ),
        );
        if ("error" in result)
          return editTokenPage(session, id, result.error.status, result.error.message, form);
        return flashThen(session, "Изменения сохранены", `/admin/tokens/${id}`);
      }),
      { detail: pageDoc("Admin pages: save a token", "form") },
    ),
    post(
      "/admin/tokens/:id/revoke",
      action((session, form, ctx) => {
        const id = ctx.params.id ?? "";
        if (!isUuid(id)) throw new ApiError("not_found", "Токен не найден");
        if (form.confirm !== "yes") {
          const current = admin.tokens.view(id);
          return page(
            <ConfirmPage
              frame={signedInFrame(session, "Отозвать токен", "tokens")}
              heading="Отозвать токен?"
              text={`Токен ${current.token_prefix}… (${current.name}) перестанет действовать со следующего запроса.`}
              action={`/admin/tokens/${id}/revoke`}
              confirmLabel="Да, отозвать"
              back="/admin/tokens"
            />,
          );
        }
        const token = admin.tokens.revoke(id, actorOf(ctx));
        return flashThen(session, `Токен ${token.token_prefix}… (${token.name}) отозван`, "/admin/tokens");
      }),
      { detail: pageDoc("Admin pages: revoke a token (without confirm=yes: the confirmation page)", "form") },
    ),
  ];
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
