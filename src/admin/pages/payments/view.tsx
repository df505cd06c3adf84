// The payment documents page: where each stands, and where to sign it in the bank.

import { rublesToKopecks } from "../../../formats/money";
import type { OperatorPaymentView } from "../../../payments/views";
import type { BankAccountView } from "../../model";
import { formatDate, formatDateTime, formatMoney } from "../format";
import { accountLabel, Badge, ErrorBox, type Frame, Layout } from "../layout";

const PAYMENT_STATUS: Record<string, [kind: "ok" | "bad" | "warn" | "plain", text: string]> = {
  draft: ["plain", "черновик"],
  submitting: ["warn", "отправляется"],
  submitted: ["warn", "ждёт подписи в банке"],
  signed_and_paid: ["ok", "подписан и оплачен"],
  canceled: ["bad", "отменён"],
  rejected: ["bad", "отклонён"],
};

/** An amount in rubles (a JSON number) as the pages write money. */
function amountText(amount: number, currency: string): string {
  const kopecks = rublesToKopecks(amount);
  return kopecks === null ? String(amount) : formatMoney(kopecks, currency);
}

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
                  <td class="nowrap" safe>
                    {formatDate(item.doc_date)}
                  </td>
                  <td safe>{item.payee_name}</td>
                  <td class="num nowrap" safe>
                    {amountText(item.amount, item.currency)}
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
                        {formatDateTime(item.submitted_at, frame.timeZone)}
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
