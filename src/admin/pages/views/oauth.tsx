// The operator's consent to an agent host's sign-in: who asks (the client's name and where the
// answer goes), what for (the scope), and which company's accounts it may read.
import type { BankAccountView, CompanyView } from "../../service";
import { ErrorBox, type Frame, Layout, PostForm } from "../layout";

export interface ConsentRequestView {
  request_id: string;
  client_id: string;
  client_name: string;
  redirect_host: string;
  scope: string;
}

export function OAuthConsentPage({
  frame,
  request,
  companies,
  accounts,
  error,
}: {
  frame: Frame & { csrf: string };
  request: ConsentRequestView;
  companies: CompanyView[];
  accounts: BankAccountView[];
  error: string | null;
}) {
  return (
    <Layout frame={frame}>
      <h1>Доступ для агента</h1>
      <section class="card">
        <ErrorBox message={error} />
        <p>
          Приложение <b safe>{request.client_name}</b> просит доступ к банковским данным.
        </p>
        <table>
          <tbody>
            <tr>
              <th>Приложение</th>
              <td class="mono small" safe>
                {request.client_id}
              </td>
            </tr>
            <tr>
              <th>Ответ уйдёт на</th>
              <td class="mono" safe>
                {request.redirect_host}
              </td>
            </tr>
            <tr>
              <th>Права</th>
              <td safe>
                {request.scope === ""
                  ? "нет"
                  : `${request.scope}: только чтение выписок, остатков и операций`}
              </td>
            </tr>
          </tbody>
        </table>
        <p class="muted">
          Агент сможет только читать данные выбранных счетов; платить и менять что-либо он не может. Доступ
          можно отозвать на странице «Токены» или через API.
        </p>
        <PostForm action={`/admin/oauth/consent/${request.request_id}`} csrf={frame.csrf}>
          <label>
            Компания
            <select name="company_id" required>
              {companies.map((c) => (
                <option value={c.company_id} safe>{`${c.name} (ИНН ${c.inn})`}</option>
              ))}
            </select>
          </label>
          <fieldset>
            <legend>Счета</legend>
            {accounts.map((a) => {
              const company = companies.find((c) => c.company_id === a.company_id);
              return (
                <label class="check">
                  <input type="checkbox" name={`account_${a.bank_account_id}`} />
                  <span safe>{`${a.alias} ${a.account_number_masked} (${company?.name ?? ""})`}</span>
                </label>
              );
            })}
          </fieldset>
          <div>
            <button type="submit" name="decision" value="approve">
              Разрешить
            </button>{" "}
            <button type="submit" name="decision" value="deny" class="secondary">
              Отказать
            </button>
          </div>
        </PostForm>
      </section>
    </Layout>
  );
}
