// The operator's consent to an agent host's sign-in: who asks (the client's name, which is only its
// own claim, its id and where the answer goes), what for (the scope), and which company's accounts
// it may read.
import type { BankAccountView, CompanyView } from "../../model";
import { formatDateTime } from "../format";
import { Badge, ErrorBox, type Frame, Layout, Pager, PostForm, RevokeForm } from "../layout";

export interface ConsentRequestView {
  request_id: string;
  client_id: string;
  client_name: string;
  client_kind: "registered" | "metadata_document";
  redirect_host: string;
  scope: string;
}

export function OAuthConsentPage({
  frame,
  request,
  companies,
  company,
  accounts,
  error,
}: {
  frame: Frame & { csrf: string };
  request: ConsentRequestView;
  companies: CompanyView[];
  /** The company whose accounts are offered (another one is chosen by reloading the page). */
  company: CompanyView | null;
  /** The chosen company's accounts only. */
  accounts: BankAccountView[];
  error: string | null;
}) {
  return (
    <Layout frame={frame}>
      <h1>Доступ для агента</h1>
      <section class="card">
        <ErrorBox message={error} />
        <p>
          Приложение, назвавшее себя <b safe>{request.client_name}</b>, просит доступ к банковским данным.
        </p>
        <p class="flash warn">
          svc не проверял это имя: его указало само приложение
          {request.client_kind === "registered"
            ? ", зарегистрировавшись без чьего-либо участия. "
            : " в описании по своему адресу. "}
          Узнать его можно только по адресу, куда уйдёт ответ: разрешайте, только если этот адрес вам знаком и
          вход начали вы сами.
        </p>
        <table>
          <tbody>
            <tr>
              <th>Идентификатор приложения</th>
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
              <td>
                {request.scope === "" ? (
                  "нет"
                ) : (
                  <>
                    <code safe>{request.scope}</code>: только чтение выписок, остатков и операций
                  </>
                )}
              </td>
            </tr>
          </tbody>
        </table>
        <p class="muted">
          Агент сможет только читать данные выбранных счетов; платить и менять что-либо он не может. Доступ
          можно отозвать на странице <a href="/admin/oauth">«Приложения»</a> или через API.
        </p>
        {companies.length > 1 ? (
          <form method="get" action={`/admin/oauth/consent/${request.request_id}`}>
            <label>
              Компания
              <select name="company_id">
                {companies.map((c) => (
                  <option value={c.company_id} selected={c.company_id === company?.company_id} safe>
                    {`${c.name} (ИНН ${c.inn})`}
                  </option>
                ))}
              </select>
            </label>{" "}
            <button type="submit" class="secondary">
              Показать счета компании
            </button>
          </form>
        ) : (
          ""
        )}
        <PostForm action={`/admin/oauth/consent/${request.request_id}`} csrf={frame.csrf}>
          <input type="hidden" name="company_id" value={company?.company_id ?? ""} />
          <fieldset>
            <legend safe>{company ? `Счета компании ${company.name}` : "Счета"}</legend>
            {accounts.map((a) => (
              <label class="check">
                <input type="checkbox" name={`account_${a.bank_account_id}`} />
                <span safe>{`${a.alias} ${a.account_number_masked}`}</span>
              </label>
            ))}
            {accounts.length === 0 ? <p class="muted">У этой компании нет счетов.</p> : ""}
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

export interface ConnectedAppView {
  grant_id: string;
  client_id: string;
  client_name: string;
  company_id: string;
  accounts: string[];
  scope: string;
  created_at: string;
  revoked_at: string | null;
}

/** Agent hosts signed in with OAuth: which company's accounts each may read; revoke. */
export function ConnectedAppsPage({
  frame,
  grants,
  cursor,
  nextCursor,
  error,
  companies,
  accounts,
}: {
  frame: Frame & { csrf: string };
  grants: ConnectedAppView[];
  /** The page shown (none: the first). */
  cursor: string | undefined;
  nextCursor: string | null;
  error: string | null;
  companies: CompanyView[];
  accounts: BankAccountView[];
}) {
  const companyName = new Map(companies.map((c) => [c.company_id, c.name]));
  const accountName = new Map(
    accounts.map((a) => [a.bank_account_id, `${a.alias} ${a.account_number_masked}`]),
  );
  return (
    <Layout frame={frame}>
      <h1>Подключённые приложения</h1>
      <section class="card">
        <ErrorBox message={error} />
        <p class="muted">
          Агенты (Claude, ChatGPT и другие), вошедшие через OAuth на <code>/mcp</code>. Отзыв действует со
          следующего запроса.
        </p>
        <table>
          <thead>
            <tr>
              <th>Приложение</th>
              <th>Компания</th>
              <th>Счета</th>
              <th>Права</th>
              <th>С</th>
              <th>Состояние</th>
            </tr>
          </thead>
          <tbody>
            {grants.map((g) => (
              <tr>
                <td>
                  <div safe>{g.client_name}</div>
                  <div class="mono small" safe>
                    {g.client_id}
                  </div>
                </td>
                <td safe>{companyName.get(g.company_id) ?? g.company_id}</td>
                <td class="small" safe>
                  {g.accounts.map((a) => accountName.get(a) ?? a).join(", ")}
                </td>
                <td class="small">
                  {g.scope === "" ? (
                    "нет"
                  ) : (
                    <span class="mono nowrap" safe>
                      {g.scope}
                    </span>
                  )}
                </td>
                <td class="small" safe>
                  {formatDateTime(g.created_at, frame.timeZone)}
                </td>
                <td>
                  {g.revoked_at !== null ? (
                    <Badge kind="bad" text="отозван" />
                  ) : (
                    <RevokeForm
                      action={`/admin/oauth/grants/${g.grant_id}/revoke`}
                      csrf={frame.csrf}
                      kind="secondary"
                    />
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        {grants.length === 0 ? <p class="muted">Подключений пока нет.</p> : ""}
        <Pager path="/admin/oauth" filters={{ cursor }} nextCursor={nextCursor} />
      </section>
    </Layout>
  );
}
