// The bank accounts page: the form of a new account, and the overview of every account (its
// balance, the coverage of the last 90 days, the newest statement, its sync, its bank login: its
// state, the bank's consent, a new login, the accounts the bank shows through it); and one
// account's page.
import type { SyncView } from "../../../sync/model";
import type { BankAccountView, CompanyView } from "../../model";
import { bankName, formatDateTime } from "../format";
import {
  attr,
  Badge,
  ErrorBox,
  type FormValues,
  Layout,
  Options,
  PostForm,
  type SignedInFrame,
} from "../layout";
import { AliasField, CompanyField, NumberAndBikFields } from "./account-fields";
import { BankLoginFields, takesLogin } from "./bank-login-form";
import { DirectBankAccountForm } from "./directbank";
import {
  type AccountOverview,
  BalanceCell,
  CoverageLegend,
  CoverageStrip,
  NewestStatement,
} from "./overview";
import { SyncCell } from "./sync-view";

export function AccountsPage({
  frame,
  companies,
  accounts,
  syncOf,
  banks,
  error,
  values,
}: {
  frame: SignedInFrame;
  companies: CompanyView[];
  accounts: AccountOverview[];
  syncOf: (bankAccountId: string) => SyncView;
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
            <CompanyField companies={companies} values={values} />
            <label>
              Банк
              <select name="bank" required>
                {/* A DirectBank bank has a form of its own below: its settings file and a login the bank
                    is asked to accept before the account is added. */}
                <Options
                  items={banks.filter((b) => b !== "directbank").map((b) => [b, bankName(b)])}
                  selected={values.bank}
                />
              </select>
            </label>
            <NumberAndBikFields values={values} />
            <label>
              Валюта
              <input name="currency" value={attr(values.currency ?? "RUB")} maxlength="3" />
            </label>
            <AliasField values={values} />
            <label>
              Операций в день (только тестовый банк)
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
            <BankLoginFields selected={values.login_kind} />
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
        <table id="accounts">
          <thead>
            <tr>
              <th>Счёт</th>
              <th>Банк</th>
              <th>Остаток</th>
              <th>Выписки за 90 дней</th>
              <th>Доступ к банку</th>
            </tr>
          </thead>
          <tbody>
            {accounts.map((o) => (
              <AccountRow
                overview={o}
                company={companyName.get(o.account.company_id)}
                sync={o.account.bank === "file" ? null : syncOf(o.account.bank_account_id)}
                frame={frame}
              />
            ))}
          </tbody>
        </table>
        {accounts.length === 0 ? <p class="muted">Счетов пока нет.</p> : <CoverageLegend />}
      </section>
    </Layout>
  );
}

/** The account's name as the pages show it: its alias, its masked number (never split). */
function AccountName({ account, href }: { account: BankAccountView; href?: string }) {
  return (
    <>
      {href ? (
        <a href={href} class="strong" safe>
          {account.alias}
        </a>
      ) : (
        <span class="strong" safe>
          {account.alias}
        </span>
      )}{" "}
      <span class="mono nowrap" safe>
        {account.account_number_masked}
      </span>
    </>
  );
}

/** The bank and what kind of account it is there. */
function bankLine(a: BankAccountView): string {
  if (a.sandbox) return `${bankName(a.bank)}, ${a.sandbox.ops_per_day} оп. в день`;
  return a.environment === "sandbox" ? `${bankName(a.bank)}, песочница банка` : bankName(a.bank);
}

function AccountRow({
  overview: o,
  company,
  sync,
  frame,
}: {
  overview: AccountOverview;
  company: string | undefined;
  /** null: the account cannot sync (a bank's files). */
  sync: SyncView | null;
  frame: SignedInFrame;
}) {
  const a = o.account;
  const page = `/admin/accounts/${a.bank_account_id}`;
  return (
    <tr data-account-id={a.bank_account_id}>
      <td>
        <AccountName account={a} href={page} />
        <div class="small muted" safe>
          {company ?? ""}
        </div>
        <div class="small">
          <a href={`${page}/operations`}>Операции</a>
        </div>
      </td>
      <td>
        <div safe>{bankLine(a)}</div>
        <div class="small muted mono" safe>
          {`БИК ${a.bik}`}
        </div>
      </td>
      <td>
        <BalanceCell
          balance={o.balance}
          accountId={a.bank_account_id}
          csrf={frame.csrf}
          timeZone={frame.timeZone}
          back="/admin/accounts"
        />
      </td>
      <td>
        <CoverageStrip overview={o} />
        <NewestStatement statement={o.newest} timeZone={frame.timeZone} />
        {sync ? <SyncCell sync={sync} csrf={frame.csrf} timeZone={frame.timeZone} /> : ""}
      </td>
      <td class="small">
        <BankAccess account={a} csrf={frame.csrf} />
      </td>
    </tr>
  );
}

/** One account: its balance, the coverage of the last 90 days, its newest statement, its bank login. */
export function AccountPage({
  frame,
  overview: o,
  company,
  sync,
}: {
  frame: SignedInFrame;
  overview: AccountOverview;
  company: CompanyView | undefined;
  /** null: the account cannot sync (a bank's files). */
  sync: SyncView | null;
}) {
  const a = o.account;
  const page = `/admin/accounts/${a.bank_account_id}`;
  return (
    <Layout frame={frame}>
      <h1>
        <AccountName account={a} />
      </h1>
      <section class="card" id="account">
        <p
          safe
        >{`${company?.name ?? ""} · ${bankLine(a)} · БИК ${a.bik} · ${a.currency === "RUB" ? "рублёвый" : `валюта ${a.currency}`}`}</p>
        <p class="small muted">
          Добавлен {formatDateTime(a.created_at, frame.timeZone)} · идентификатор для API:{" "}
          <span class="mono" safe>
            {a.bank_account_id}
          </span>
        </p>
        <p>
          <a class="button" href={`${page}/operations`}>
            Операции счёта
          </a>{" "}
          <a class="button secondary" href={`/admin/statements?bank_account_id=${a.bank_account_id}`}>
            Выписки счёта
          </a>
        </p>
      </section>
      <section class="card" id="balance">
        <h2>Остаток</h2>
        <BalanceCell
          balance={o.balance}
          accountId={a.bank_account_id}
          csrf={frame.csrf}
          timeZone={frame.timeZone}
          back={page}
        />
      </section>
      <section class="card" id="coverage">
        <h2>Выписки за 90 дней</h2>
        <CoverageStrip overview={o} />
        <CoverageLegend />
        <NewestStatement statement={o.newest} timeZone={frame.timeZone} />
      </section>
      {sync ? (
        <section class="card" id="sync">
          <h2>Синхронизация</h2>
          <SyncCell sync={sync} csrf={frame.csrf} timeZone={frame.timeZone} />
        </section>
      ) : (
        ""
      )}
      <section class="card" id="bank-access">
        <h2>Доступ к банку</h2>
        <BankAccess account={a} csrf={frame.csrf} />
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
  if (a.credentials_status === null) {
    if (!takesLogin(a.bank) || a.environment === "sandbox") {
      return (
        <>
          <span class="muted">не требуется</span> <DiscoverLink account={a} />
        </>
      );
    }
    return (
      <>
        <Badge kind="warn" text="не задан" />
        <ReplaceLogin account={a} csrf={csrf} summary="Задать доступ" />
      </>
    );
  }
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
      <ReplaceLogin account={a} csrf={csrf} summary="Заменить доступ" />
    </>
  );
}

/** A new login for the account: the fields of its bank's logins. */
function ReplaceLogin({
  account: a,
  csrf,
  summary,
}: {
  account: BankAccountView;
  csrf: string;
  summary: string;
}) {
  return (
    <details>
      <summary safe>{summary}</summary>
      <PostForm action={`/admin/accounts/${a.bank_account_id}/credentials`} csrf={csrf} class="stack">
        <BankLoginFields bank={a.bank} />
        <button type="submit" class="secondary">
          Сохранить
        </button>
      </PostForm>
    </details>
  );
}

function DiscoverLink({ account }: { account: BankAccountView }) {
  return account.bank === "tochka" || account.bank === "directbank" ? (
    <a href={`/admin/accounts/${account.bank_account_id}/discover`}>Счета в банке</a>
  ) : (
    ""
  );
}
