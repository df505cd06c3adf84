// The companies page: the creation form and the list.
import type { CompanyView } from "../../model";
import { formatDateTime } from "../format";
import { attr, ErrorBox, type FormValues, Layout, PostForm, type SignedInFrame } from "../layout";

export function CompaniesPage({
  frame,
  companies,
  error,
  values,
}: {
  frame: SignedInFrame;
  companies: CompanyView[];
  error: string | null;
  values: FormValues;
}) {
  return (
    <Layout frame={frame}>
      <h1>Компании</h1>
      <section class="card">
        <h2>Новая компания</h2>
        <ErrorBox message={error} />
        <PostForm action="/admin/companies" csrf={frame.csrf} class="grid">
          <label>
            Название
            <input name="name" required maxlength="256" value={attr(values.name)} />
          </label>
          <label>
            ИНН
            <input name="inn" required pattern="\d{10}|\d{12}" inputmode="numeric" value={attr(values.inn)} />
          </label>
          <label>
            КПП (необязательно)
            <input name="kpp" pattern="\d{4}[0-9A-Z]{2}\d{3}" value={attr(values.kpp)} />
          </label>
          <div>
            <button type="submit">Создать</button>
          </div>
        </PostForm>
      </section>
      <section class="card">
        <h2>Все компании</h2>
        <table>
          <thead>
            <tr>
              <th>Название</th>
              <th>ИНН</th>
              <th>КПП</th>
              <th>Создана</th>
            </tr>
          </thead>
          <tbody>
            {companies.map((c) => (
              <tr data-company-id={c.company_id}>
                <td safe>{c.name}</td>
                <td class="mono" safe>
                  {c.inn}
                </td>
                <td class="mono" safe>
                  {c.kpp ?? ""}
                </td>
                <td class="small" safe>
                  {formatDateTime(c.created_at, frame.timeZone)}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        {companies.length === 0 ? <p class="muted">Компаний пока нет.</p> : ""}
      </section>
    </Layout>
  );
}
