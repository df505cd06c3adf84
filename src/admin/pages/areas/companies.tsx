// Companies and their bank accounts.

import { validationError } from "../../../core/errors";
import { attempt, nonEmpty, type Outcome, type PageKit, page } from "../kit";
import { get, type PageRoute, pageDoc, post, type RouteContext } from "../page-route";
import type { AdminSession } from "../session";
import { AccountsPage, CompaniesPage, type FormValues } from "../views/basics";

/** The login typed in the form as JSON (the service checks its shape); undefined when empty. */
function credentialsOf(text: string | undefined): Record<string, unknown> | undefined {
  if (nonEmpty(text?.trim()) === undefined) return undefined;
  try {
    const value = JSON.parse(text!);
    if (typeof value === "object" && value !== null && !Array.isArray(value)) return value;
  } catch {
    // the message below
  }
  throw validationError("credentials", "Доступ к банку: объект JSON");
}

type FormPage = (
  session: AdminSession,
  status?: number,
  error?: string | null,
  values?: FormValues,
) => Outcome;

export function companyRoutes(kit: PageKit): PageRoute[] {
  const { admin } = kit.deps;
  const deps = kit.deps;
  const { actorOf, signedInFrame, view, action, flashThen } = kit;

  // On a refused post, the page again with the service's message and what was typed.
  const companiesPage: FormPage = (session, status = 200, error = null, values = {}) =>
    page(
      <CompaniesPage
        frame={signedInFrame(session, "Компании", "companies")}
        companies={admin.companies.list()}
        error={error}
        values={values}
      />,
      status,
    );

  const accountsPage: FormPage = (session, status = 200, error = null, values = {}) =>
    page(
      <AccountsPage
        frame={signedInFrame(session, "Счета", "accounts")}
        companies={admin.companies.list()}
        accounts={admin.accounts.list()}
        banks={deps.banks()}
        error={error}
        values={values}
      />,
      status,
    );

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

  return [
    ...listWithForm(
      "/admin/companies",
      companiesPage,
      (form, ctx) =>
        admin.companies.create(
          { name: form.name ?? "", inn: form.inn ?? "", kpp: nonEmpty(form.kpp) ?? null },
          actorOf(ctx),
        ),
      (company) => `Компания «${company.name}» создана`,
      { list: "Admin pages: companies", create: "Admin pages: create a company" },
    ),
    ...listWithForm(
      "/admin/accounts",
      accountsPage,
      (form, ctx) => {
        const ops = nonEmpty(form.ops_per_day);
        const environment = form.environment === "sandbox" ? "sandbox" : "production";
        const credentials = credentialsOf(form.credentials);
        return admin.accounts.create(
          {
            environment,
            credentials,
            company_id: form.company_id ?? "",
            bank: form.bank ?? "",
            account_number: (form.account_number ?? "").trim(),
            bik: (form.bik ?? "").trim(),
            currency: nonEmpty(form.currency?.trim()),
            alias: nonEmpty(form.alias?.trim()),
            sandbox: ops === undefined ? undefined : { ops_per_day: Number(ops) },
          },
          actorOf(ctx),
        );
      },
      (account) => `Счёт ${account.alias} (${account.account_number_masked}) добавлен`,
      { list: "Admin pages: bank accounts", create: "Admin pages: add a bank account" },
    ),
  ];
}
