// The bank accounts page: the form of a new account, and the list with each account's bank login
// (its state, the bank's consent, a new login, the accounts the bank shows through it).
import type { BankAccountView, CompanyView } from "../../model";
import {
  attr,
  Badge,
  ErrorBox,
  type FormValues,
  formatTime,
  Layout,
  Options,
  PostForm,
  type SignedInFrame,
} from "../layout";
import { DirectBankAccountForm } from "./directbank";

export function AccountsPage({
  frame,
  companies,
  accounts,
  banks,
  error,
  values,
}: {
  frame: SignedInFrame;
  companies: CompanyView[];
  accounts: BankAccountView[];
  banks: string[];
  error: string | null;
  values: FormValues;
}) {
  const companyName = new Map(companies.map((c) => [c.company_id, c.name]));
  return (
    <Layout frame={frame}>
      <h1>Банковские счета</h1>
      <section class="card">
        <h2>Новый счёт</h2>
        <ErrorBox message={error} />
        {companies.length === 0 ? (
          <p class="muted">
            Сначала создайте <a href="/admin/companies">компанию</a>.
          </p>
        ) : (
          <PostForm action="/admin/accounts" csrf={frame.csrf} class="grid">
            <label>
              Компания
              <select name="company_id" required>
                <Options
                  items={companies.map((c) => [c.company_id, `${c.name} (ИНН ${c.inn})`])}
                  selected={values.company_id}
                />
              </select>
            </label>
            <label>
              Банк
              <select name="bank" required>
                <Options items={banks.map((b) => [b, b])} selected={values.bank} />
              </select>
            </label>
            <label>
              Номер счёта (20 цифр)
              <input
                name="account_number"
                required
                pattern="\d{20}"
                inputmode="numeric"
                value={attr(values.account_number)}
              />
            </label>
            <label>
              БИК (9 цифр)
              <input name="bik" required pattern="\d{9}" inputmode="numeric" value={attr(values.bik)} />
            </label>
            <label>
              Валюта
              <input name="currency" value={attr(values.currency ?? "RUB")} maxlength="3" />
            </label>
            <label>
              Псевдоним (по умолчанию последние 4 цифры)
              <input name="alias" pattern="[A-Za-z0-9_\-]{1,32}" value={attr(values.alias)} />
            </label>
            <label>
              Операций в день (только sandbox)
              <input name="ops_per_day" type="number" min="1" max="5000" value={attr(values.ops_per_day)} />
            </label>
            <label>
              Среда банка
              <select name="environment">
                <Options
                  items={[
                    ["production", "рабочая"],
                    ["sandbox", "песочница банка"],
                  ]}
                  selected={values.environment}
                />
              </select>
            </label>
            <label>
              Доступ к банку (JSON; для Точки {'{"kind":"jwt","token":"…"}'} или{" "}
              {'{"kind":"oauth","client_id":"…","client_secret":"…"}'})
              <textarea name="credentials" rows="2"></textarea>
            </label>
            <div>
              <button type="submit">Добавить счёт</button>
            </div>
          </PostForm>
        )}
        {companies.length === 0 ? (
          ""
        ) : (
          <DirectBankAccountForm companies={companies} csrf={frame.csrf} values={values} />
        )}
      </section>
      <section class="card">
        <h2>Все счета</h2>
        <table>
          <thead>
            <tr>
              <th>Компания</th>
              <th>Псевдоним</th>
              <th>Счёт</th>
              <th>Банк</th>
              <th>БИК</th>
              <th>Валюта</th>
              <th>Доступ к банку</th>
              <th>Создан</th>
              <th>bank_account_id</th>
            </tr>
          </thead>
          <tbody>
            {accounts.map((a) => (
              <tr>
                <td safe>{companyName.get(a.company_id) ?? a.company_id}</td>
                <td safe>{a.alias}</td>
                <td class="mono" safe>
                  {a.account_number_masked}
                </td>
                <td safe>
                  {a.sandbox
                    ? `${a.bank} (${a.sandbox.ops_per_day} оп./день)`
                    : a.environment === "sandbox"
                      ? `${a.bank} (песочница)`
                      : a.bank}
                </td>
                <td class="mono" safe>
                  {a.bik}
                </td>
                <td safe>{a.currency}</td>
                <td class="small">
                  <BankAccess account={a} csrf={frame.csrf} />
                </td>
                <td class="small" safe>
                  {formatTime(a.created_at)}
                </td>
                <td class="mono small" safe>
                  {a.bank_account_id}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        {accounts.length === 0 ? <p class="muted">Счетов пока нет.</p> : ""}
      </section>
    </Layout>
  );
}

const ACCESS: Record<string, [kind: "ok" | "bad" | "warn", text: string]> = {
  active: ["ok", "действует"],
  consent_required: ["warn", "ждёт подтверждения в банке"],
  renewal_needed: ["bad", "нужно обновить"],
};

/** The account's bank login: its state, the bank's message, and what the operator can do. */
function BankAccess({ account: a, csrf }: { account: BankAccountView; csrf: string }) {
  if (a.credentials_status === null)
    return a.environment === "sandbox" && !a.sandbox ? <DiscoverLink account={a} /> : "";
  const [kind, text] = ACCESS[a.credentials_status] ?? ["warn", a.credentials_status];
  return (
    <>
      <Badge kind={kind} text={text} />
      {a.credentials_message ? <div safe>{a.credentials_message}</div> : ""}
      {a.credentials_status !== "active" ? (
        <PostForm action={`/admin/accounts/${a.bank_account_id}/bank-consent`} csrf={csrf}>
          <button type="submit" class="secondary">
            Подключить в банке (OAuth)
          </button>
        </PostForm>
      ) : (
        <DiscoverLink account={a} />
      )}
      <details>
        <summary>Заменить доступ</summary>
        <PostForm action={`/admin/accounts/${a.bank_account_id}/credentials`} csrf={csrf}>
          <textarea name="credentials" rows="2"></textarea>
          <button type="submit" class="secondary">
            Сохранить
          </button>
        </PostForm>
      </details>
    </>
  );
}

function DiscoverLink({ account }: { account: BankAccountView }) {
  return account.bank === "tochka" || account.bank === "directbank" ? (
    <a href={`/admin/accounts/${account.bank_account_id}/discover`}>Счета в банке</a>
  ) : (
    ""
  );
}
