// Token forms: creation (one per purpose: the agent form has no payment rights at all) and editing.
import type { TokenPurpose } from "../../../auth/tokens";
import type { BankAccountView, CompanyView, TokenView } from "../../model";
import { bankName, formatDateTime } from "../format";
import {
  attr,
  ErrorBox,
  type FormValues,
  Layout,
  Options,
  PostForm,
  type SignedInFrame,
  WithPrefixes,
} from "../layout";
import { MODE_LABEL, PURPOSE_LABEL } from "./view";

/** Checkbox rows for per-account allows; the agent form has no payments column. */
function AccountAllows({
  purpose,
  accounts,
  checked,
}: {
  purpose: TokenPurpose;
  accounts: BankAccountView[];
  checked: (kind: "read" | "send", accountId: string) => boolean;
}) {
  if (accounts.length === 0) return <p class="muted">У компании нет счетов.</p>;
  return (
    <table>
      <thead>
        <tr>
          <th>Счёт</th>
          <th>Чтение выписок</th>
          {purpose === "integration" ? <th>Платежи</th> : ""}
        </tr>
      </thead>
      <tbody>
        {accounts.map((a) => (
          <tr>
            <td>
              <span safe>{a.alias}</span>{" "}
              <span class="mono nowrap" safe>
                {a.account_number_masked}
              </span>{" "}
              <span class="muted" safe>
                {`(${bankName(a.bank)})`}
              </span>
            </td>
            <td>
              <input
                type="checkbox"
                name={`read:${a.bank_account_id}`}
                aria-label="чтение выписок"
                checked={checked("read", a.bank_account_id)}
              />
            </td>
            {purpose === "integration" ? (
              <td>
                <input
                  type="checkbox"
                  name={`send:${a.bank_account_id}`}
                  aria-label="платежи"
                  checked={checked("send", a.bank_account_id)}
                />
              </td>
            ) : (
              ""
            )}
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function LimitsFields({ values }: { values: FormValues }) {
  return (
    <>
      <label class="wide">
        Разрешённые IP-адреса или подсети (по одному в строке; пусто — любой)
        <textarea name="allowed_ips" safe>
          {values.allowed_ips ?? ""}
        </textarea>
      </label>
      <label>
        Лимит запросов в минуту (пусто — по умолчанию)
        <input
          name="rate_limit_per_minute"
          type="number"
          min="1"
          max="10000"
          value={attr(values.rate_limit_per_minute)}
        />
      </label>
      <label>
        Действует до (необязательно)
        <input
          name="expires_at"
          pattern="\d{2}\.\d{2}\.\d{4}( \d{2}:\d{2})?"
          placeholder="дд.мм.гггг чч:мм"
          value={attr(values.expires_at)}
        />
      </label>
    </>
  );
}

export function NewTokenPage({
  frame,
  company,
  purpose,
  accounts,
  formId,
  error,
  values,
}: {
  frame: SignedInFrame;
  company: CompanyView;
  purpose: TokenPurpose;
  accounts: BankAccountView[];
  formId: string;
  error: string | null;
  values: FormValues;
}) {
  const agent = purpose === "mcp";
  return (
    <Layout frame={frame}>
      <h1 safe>{agent ? `Токен агента (MCP): ${company.name}` : `Токен интеграции: ${company.name}`}</h1>
      <section class="card">
        <ErrorBox message={error} />
        {agent ? (
          <p class="muted">Токен агента даёт только чтение: права на платежи ему выдать нельзя.</p>
        ) : (
          ""
        )}
        <PostForm action="/admin/tokens" csrf={frame.csrf} class="grid">
          <input type="hidden" name="company_id" value={company.company_id} />
          <input type="hidden" name="purpose" value={purpose} />
          <input type="hidden" name="form_id" value={formId} />
          <label>
            Имя
            <input name="name" required maxlength="128" value={attr(values.name)} />
          </label>
          <label>
            Режим
            <select name="mode">
              <Options
                items={[
                  ["test", "тестовый (svc_test_…, только тестовые банки)"],
                  ["live", "рабочий (svc_live_…)"],
                ]}
                // test first and chosen unless asked: a new installation's accounts are sandbox accounts.
                selected={values.mode ?? "test"}
              />
            </select>
          </label>
          <label class="check">
            <input
              type="checkbox"
              name="scope_read_statements"
              checked={values.scope_read_statements === "on"}
            />
            Право: чтение выписок
          </label>
          {agent ? (
            ""
          ) : (
            <label class="check">
              <input
                type="checkbox"
                name="scope_send_payments"
                checked={values.scope_send_payments === "on"}
              />
              Право: отправка платежей
            </label>
          )}
          <div class="wide">
            <AccountAllows
              purpose={purpose}
              accounts={accounts}
              checked={(kind, id) => values[`${kind}:${id}`] === "on"}
            />
          </div>
          <LimitsFields values={values} />
          <div class="wide">
            <button type="submit">Создать токен</button>{" "}
            <a class="button secondary" href="/admin/tokens">
              Отмена
            </a>
          </div>
        </PostForm>
      </section>
    </Layout>
  );
}

export function EditTokenPage({
  frame,
  token,
  company,
  accounts,
  error,
  submitted,
}: {
  frame: SignedInFrame;
  token: TokenView;
  company: CompanyView | undefined;
  accounts: BankAccountView[];
  error: string | null;
  /** The form as it was sent, when the save was refused: shown again as typed. */
  submitted?: FormValues | null;
}) {
  const grants = new Map(token.accounts.map((g) => [g.bank_account_id, g]));
  const values: FormValues = submitted ?? {
    name: token.name,
    allowed_ips: token.allowed_ips.join("\n"),
    rate_limit_per_minute: token.rate_limit_is_default ? "" : String(token.rate_limit_per_minute),
    expires_at: formatDateTime(token.expires_at, frame.timeZone),
  };
  return (
    <Layout frame={frame}>
      <h1>
        <WithPrefixes text={`Токен ${token.token_prefix}… (${token.name})`} />
      </h1>
      <section class="card">
        <ErrorBox message={error} />
        <p class="small muted" safe>
          {`Компания: ${company?.name ?? token.company_id} · назначение: ${PURPOSE_LABEL[token.purpose]} · режим: ${MODE_LABEL[token.mode] ?? token.mode} · создан: ${formatDateTime(token.created_at, frame.timeZone)}${token.revoked_at ? ` · отозван: ${formatDateTime(token.revoked_at, frame.timeZone)}` : ""}`}
        </p>
        <PostForm action={`/admin/tokens/${token.api_token_id}`} csrf={frame.csrf} class="grid">
          <label>
            Имя
            <input name="name" required maxlength="128" value={attr(values.name ?? token.name)} />
          </label>
          <label class="check">
            <input type="checkbox" name="scope_read_statements" checked={token.scopes.read_statements} />
            Право: чтение выписок
          </label>
          {token.purpose === "mcp" ? (
            ""
          ) : (
            <label class="check">
              <input type="checkbox" name="scope_send_payments" checked={token.scopes.send_payments} />
              Право: отправка платежей
            </label>
          )}
          <div class="wide">
            <AccountAllows
              purpose={token.purpose}
              accounts={accounts}
              checked={(kind, id) => {
                const g = grants.get(id);
                return kind === "read"
                  ? (g?.allow_read_statements ?? false)
                  : (g?.allow_send_payments ?? false);
              }}
            />
          </div>
          <LimitsFields values={values} />
          <div class="wide">
            <button type="submit">Сохранить</button>{" "}
            <a class="button secondary" href="/admin/tokens">
              К списку токенов
            </a>
          </div>
        </PostForm>
      </section>
    </Layout>
  );
}
