// Companies: the list and the creation form.
import { quoted } from "../format";
import { type FormPage, nonEmpty, type PageKit, page } from "../kit";
import type { PageRoute } from "../page-route";
import { CompaniesPage } from "./view";

export function companyRoutes(kit: PageKit): PageRoute[] {
  const { companies } = kit.deps.admin;
  const { actorOf, signedInFrame, listWithForm } = kit;

  // On a refused post, the page again with the service's message and what was typed.
  const companiesPage: FormPage = (session, status = 200, error = null, values = {}) =>
    page(
      <CompaniesPage
        frame={signedInFrame(session, "Компании", "companies")}
        companies={companies.list()}
        error={error}
        values={values}
      />,
      status,
    );

  return listWithForm(
    "/admin/companies",
    companiesPage,
    (form, ctx) =>
      companies.create(
        { name: form.name ?? "", inn: form.inn ?? "", kpp: nonEmpty(form.kpp) ?? null },
        actorOf(ctx),
      ),
    (company) => `Компания ${quoted(company.name)} создана`,
    { list: "Admin pages: companies", create: "Admin pages: create a company" },
  );
}
