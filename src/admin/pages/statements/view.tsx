// The statements page: ordering one, importing the bank's file, and the list with its filters.
import type { StatementView } from "../../../statements/service";
import type { BankAccountView } from "../../model";
import { STATUS_BADGE, STATUS_LABEL } from "../accounts/overview";
import { bankName, formatDate, formatDateTime, formatPeriod } from "../format";
import {
  Badge,
  ErrorBox,
  type FormValues,
  Layout,
  Options,
  Pager,
  PostForm,
  RuDateInput,
  type SignedInFrame,
} from "../layout";

const SOURCE_LABEL = {
  integration: "интеграция",
  ui: "вручную",
  import: "из файла банка",
  sync: "синхронизация",
} as const;

export function StatementsPage({
  frame,
  accounts,
  statements,
  nextCursor,
  filters,
  error,
  values,
  today,
  companies,
}: {
  frame: SignedInFrame;
  /** The companies, to say whose each account is. */
  companies: { company_id: string; name: string }[];
  accounts: BankAccountView[];
  statements: StatementView[];
  nextCursor: string | null;
  filters: { bank_account_id?: string; status?: string; cursor?: string };
  error: string | null;
  values: FormValues;
  today: string;
}) {
  const accountById = new Map(accounts.map((a) => [a.bank_account_id, a]));
  const companyName = new Map(companies.map((c) => [c.company_id, c.name]));
  const accountItems = accounts.map((a): [string, string] => [
    a.bank_account_id,
    `${companyName.get(a.company_id) ?? a.company_id}: ${a.alias} ${a.account_number_masked} (${bankName(a.bank)})`,
  ]);
  const fileAccounts = accountItems.filter(([id]) => accountById.get(id)?.bank === "file");
  return (
    <Layout frame={frame}>
      <h1>Выписки</h1>
      <section class="card">
        <h2>Заказать выписку</h2>
        <ErrorBox message={error} />
        {accounts.length === 0 ? (
          <p class="muted">
            Сначала добавьте <a href="/admin/accounts">счёт</a>.
          </p>
        ) : (
          <PostForm action="/admin/statements" csrf={frame.csrf} class="grid">
            <label>
              Счёт
              <select name="bank_account_id" required>
                <Options items={accountItems} selected={values.bank_account_id} />
              </select>
            </label>
            <label>
              С даты
              <RuDateInput name="date_from" required value={values.date_from} />
            </label>
            <label>
              По дату (включительно, не больше 31 дня)
              <RuDateInput name="date_to" required value={values.date_to ?? formatDate(today)} />
            </label>
            <div>
              <button type="submit">Заказать</button>
            </div>
          </PostForm>
        )}
      </section>
      {fileAccounts.length > 0 ? (
        <section class="card">
          <h2>Загрузить выписку из файла банка</h2>
          <p class="muted">
            Для счетов банка «Файлы выписок 1С»: файл обмена 1С (kl_to_1c.txt), который выгружает
            интернет-банк; 1.02 или 1.03, Windows или DOS, до 50 МБ.
          </p>
          <PostForm
            action="/admin/statements/import"
            csrf={frame.csrf}
            class="grid"
            enctype="multipart/form-data"
          >
            <label>
              Счёт
              <select name="bank_account_id" required>
                <Options items={fileAccounts} selected={values.bank_account_id} />
              </select>
            </label>
            <label>
              Файл
              <input name="file" type="file" required accept=".txt" />
            </label>
            <div>
              <button type="submit">Загрузить</button>
            </div>
          </PostForm>
        </section>
      ) : (
        ""
      )}
      <section class="card">
        <h2>Все выписки</h2>
        <form method="get" action="/admin/statements" class="grid">
          <label>
            Счёт
            <select name="bank_account_id">
              <Options
                items={[["", "все счета"], ...accountItems]}
                selected={filters.bank_account_id ?? ""}
              />
            </select>
          </label>
          <label>
            Статус
            <select name="status">
              <Options
                items={[
                  ["", "любой"],
                  ["processing", STATUS_LABEL.processing],
                  ["ready", STATUS_LABEL.ready],
                  ["failed", STATUS_LABEL.failed],
                ]}
                selected={filters.status ?? ""}
              />
            </select>
          </label>
          <div>
            <button type="submit" class="secondary">
              Показать
            </button>
          </div>
        </form>
        <table id="statements">
          <thead>
            <tr>
              <th>Заказана</th>
              <th>Счёт</th>
              <th>Период</th>
              <th>Статус</th>
              <th>Источник</th>
              <th>Операций</th>
              <th>Получена</th>
              <th>Скачать</th>
            </tr>
          </thead>
          <tbody>
            {statements.map((s) => (
              <tr data-statement-id={s.statement_id}>
                <td class="small" safe>
                  {formatDateTime(s.created_at, frame.timeZone)}
                </td>
                <td>
                  <span safe>{accountById.get(s.bank_account_id)?.alias ?? ""}</span>{" "}
                  <span class="mono nowrap" safe>
                    {s.account_number_masked}
                  </span>
                </td>
                <td class="period" safe>
                  {formatPeriod(s.date_from, s.date_to)}
                </td>
                <td>
                  <Badge kind={STATUS_BADGE[s.status]} text={STATUS_LABEL[s.status]} />
                  {s.error ? (
                    <div class="small muted" safe>
                      {s.error.message}
                    </div>
                  ) : (
                    ""
                  )}
                </td>
                <td safe>
                  {s.external_id ? `${SOURCE_LABEL[s.source]} (${s.external_id})` : SOURCE_LABEL[s.source]}
                </td>
                <td class="num" safe>
                  {s.operations_count === undefined ? "" : String(s.operations_count)}
                </td>
                <td class="small" safe>
                  {formatDateTime(s.fetched_at, frame.timeZone)}
                </td>
                <td class="actions">
                  {s.status === "ready" ? (
                    <>
                      <a href={`/admin/statements/${s.statement_id}/export?format=1c`}>1С</a> ·{" "}
                      <a href={`/admin/statements/${s.statement_id}/export?format=csv&bom=1`}>CSV</a> ·{" "}
                      <a href={`/admin/statements/${s.statement_id}/export?format=json`}>JSON</a>
                    </>
                  ) : (
                    ""
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        {statements.length === 0 ? <p class="muted">Выписок нет.</p> : ""}
        <Pager path="/admin/statements" filters={filters} nextCursor={nextCursor} />
      </section>
    </Layout>
  );
}
