// Bank accounts: the list and the form of a new account (its bank login typed as JSON).
import { validationError } from "../../../core/errors";
import { type FormPage, nonEmpty, type PageKit, page } from "../kit";
import type { PageRoute } from "../page-route";
import { directbankAccountRoute } from "./directbank";
import { AccountsPage } from "./view";

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

export function accountRoutes(kit: PageKit): PageRoute[] {
  const { companies, accounts } = kit.deps.admin;
  const { actorOf, signedInFrame, listWithForm } = kit;

  // On a refused post, the page again with the service's message and what was typed.
  const accountsPage: FormPage = (session, status = 200, error = null, values = {}) =>
    page(
      <AccountsPage
        frame={signedInFrame(session, "Счета", "accounts")}
        companies={companies.list()}
        accounts={accounts.list()}
        banks={kit.deps.banks()}
        error={error}
        values={values}
      />,
      status,
    );

  const routes = listWithForm(
    "/admin/accounts",
    accountsPage,
    (form, ctx) => {
      const ops = nonEmpty(form.ops_per_day);
      const environment = form.environment === "sandbox" ? "sandbox" : "production";
      const credentials = credentialsOf(form.credentials);
      return accounts.create(
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
  );
  return [...routes, directbankAccountRoute(kit, accountsPage)];
}
