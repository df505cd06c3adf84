// Pages of an account's bank login: before the bank's consent page, and the accounts the bank
// shows through the login.
import type { BankAccountView, DiscoveredAccountsView } from "../../model";
import { bankName, currencyName } from "../format";
import { accountLabel, Badge, type Frame, Layout, PostForm, type SignedInFrame } from "../layout";

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
        <p safe>{`Счёт ${accountLabel(account)}, банк ${bankName(account.bank)}.`}</p>
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
  frame: SignedInFrame;
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
        >{`Счета, которые банк ${bankName(account.bank)} показывает через доступ счёта ${accountLabel(account)}.`}</p>
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
                  <td>
                    <CurrencyCell code={a.currency} />
                  </td>
                  <td>
                    <BankStatus status={a.status} />
                  </td>
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

/** A currency by name; a code without one as the code. */
function CurrencyCell({ code }: { code: string }) {
  const name = currencyName(code);
  return name ? (
    <span safe>{name}</span>
  ) : (
    <span class="mono" safe>
      {code}
    </span>
  );
}

/** An account's state as its bank names it (Open Banking's AccountStatus, which DirectBank banks'
 *  lists share), in words; another state as the bank wrote it. */
const BANK_STATUS: Record<string, string> = {
  Enabled: "открыт",
  Disabled: "заблокирован",
  Deleted: "закрыт",
  Pending: "открывается",
  ProForma: "резервируется",
};

function BankStatus({ status }: { status: string }) {
  const label = BANK_STATUS[status];
  return label ? (
    <span safe>{label}</span>
  ) : (
    <span class="mono" safe>
      {status}
    </span>
  );
}
