// Pages of the bank connections (the bank's consent, account discovery) and of the payment
// documents waiting for a signature in the bank.

import type { OperatorPaymentView } from "../../../payments/service";
import type { BankAccountView, DiscoveredAccountsView } from "../../model";
import { Badge, ErrorBox, type Frame, formatTime, Layout, PostForm } from "../layout";

const accountLabel = (a: BankAccountView) => `${a.alias} (${a.account_number_masked})`;

/** Before the bank's page: where the operator goes and what the customer approves there. */
export function ConsentPage({
  frame,
  account,
  url,
}: {
  frame: Frame;
  account: BankAccountView;
  url: string;
}) {
  return (
    <Layout frame={frame}>
      <h1>Подключение к банку</h1>
      <section class="card">
        <p safe>{`Счёт ${accountLabel(account)}, банк ${account.bank}.`}</p>
        <p>
          На странице банка владелец счёта подтверждает доступ svc к выпискам, остаткам и созданию платежей на
          подпись. Подписывает платежи по-прежнему только он, в интернет-банке. После подтверждения банк
          вернёт вас сюда.
        </p>
        <p>
          <a class="button" href={url} rel="noreferrer">
            Перейти в банк
          </a>
        </p>
      </section>
    </Layout>
  );
}

/** The customer's accounts the bank shows through a login; the ones not added yet can be chosen. */
export function DiscoverPage({
  frame,
  account,
  found,
}: {
  frame: Frame & { csrf: string };
  account: BankAccountView;
  found: DiscoveredAccountsView["accounts"];
}) {
  const addable = found.filter((a) => a.bank_account_id === null);
  return (
    <Layout frame={frame}>
      <h1>Счета в банке</h1>
      <section class="card">
        <p
          safe
        >{`Счета, которые банк ${account.bank} показывает через доступ счёта ${accountLabel(account)}.`}</p>
        <PostForm action={`/admin/accounts/${account.bank_account_id}/import`} csrf={frame.csrf}>
          <table>
            <thead>
              <tr>
                <th>Добавить</th>
                <th>Счёт</th>
                <th>БИК</th>
                <th>Валюта</th>
                <th>Состояние в банке</th>
                <th>В svc</th>
              </tr>
            </thead>
            <tbody>
              {found.map((a) => (
                <tr>
                  <td>
                    {a.bank_account_id === null ? (
                      <input type="checkbox" name={`add_${a.account_number}_${a.bik}`} />
                    ) : (
                      ""
                    )}
                  </td>
                  <td class="mono" safe>
                    {a.account_number}
                  </td>
                  <td class="mono" safe>
                    {a.bik}
                  </td>
                  <td safe>{a.currency}</td>
                  <td safe>{a.status}</td>
                  <td>{a.bank_account_id === null ? "" : <Badge kind="ok" text="добавлен" />}</td>
                </tr>
              ))}
            </tbody>
          </table>
          {found.length === 0 ? <p class="muted">Банк не показал ни одного счёта.</p> : ""}
          {addable.length > 0 ? <button type="submit">Добавить выбранные</button> : ""}
        </PostForm>
      </section>
    </Layout>
  );
}

const PAYMENT_STATUS: Record<string, [kind: "ok" | "bad" | "warn" | "plain", text: string]> = {
  draft: ["plain", "черновик"],
  submitting: ["warn", "отправляется"],
  submitted: ["warn", "ждёт подписи в банке"],
  signed_and_paid: ["ok", "подписан и оплачен"],
  canceled: ["bad", "отменён"],
  rejected: ["bad", "отклонён"],
};

/** Payment documents, newest first; those waiting for a signature link to the bank's page. */
export function PaymentsPage({
  frame,
  items,
  accounts,
  error,
}: {
  frame: Frame;
  items: OperatorPaymentView[];
  accounts: BankAccountView[];
  error: string | null;
}) {
  const accountOf = new Map(accounts.map((a) => [a.bank_account_id, a]));
  return (
    <Layout frame={frame}>
      <h1>Платежи</h1>
      <ErrorBox message={error} />
      <section class="card">
        <p class="muted">
          Платёжные поручения, загруженные учётной системой. Отправленные в банк ждут подписи владельца счёта
          в интернет-банке; ссылка «Подписать в банке» ведёт на страницу документа в банке.
        </p>
        <table>
          <thead>
            <tr>
              <th>Счёт</th>
              <th>№</th>
              <th>Дата</th>
              <th>Получатель</th>
              <th>Сумма</th>
              <th>Состояние</th>
              <th>В банке</th>
            </tr>
          </thead>
          <tbody>
            {items.map((item) => {
              const account = accountOf.get(item.bank_account_id);
              const [kind, text] = PAYMENT_STATUS[item.status] ?? ["plain", item.status];
              return (
                <tr>
                  <td safe>{account ? accountLabel(account) : item.bank_account_id}</td>
                  <td safe>{item.doc_number}</td>
                  <td safe>{item.doc_date}</td>
                  <td safe>{item.payee_name}</td>
                  <td class="num" safe>
                    {`${item.amount.toFixed(2)} ${item.currency}`}
                  </td>
                  <td>
                    <Badge kind={kind} text={text} />
                    {item.error ? (
                      <div class="small" safe>
                        {item.error.message}
                      </div>
                    ) : (
                      ""
                    )}
                  </td>
                  <td class="small">
                    {item.sign_url ? (
                      <a href={item.sign_url} rel="noreferrer" target="_blank">
                        Подписать в банке
                      </a>
                    ) : (
                      ""
                    )}
                    {item.bank_reference ? (
                      <div class="mono small" safe>
                        {item.bank_reference}
                      </div>
                    ) : (
                      ""
                    )}
                    {item.submitted_at ? (
                      <div class="small" safe>
                        {formatTime(item.submitted_at)}
                      </div>
                    ) : (
                      ""
                    )}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
        {items.length === 0 ? <p class="muted">Платежей пока нет.</p> : ""}
      </section>
    </Layout>
  );
}
