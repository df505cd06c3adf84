// Token pages: the list, the creation form (one per purpose: the agent form has no payment
// rights at all), the one-time page with the raw value, and the edit form.
import type { TokenPurpose } from "../../../auth/tokens";
import type { BankAccountView, CompanyView, TokenView } from "../../model";
import { attr, Badge, ErrorBox, type Frame, formatTime, Layout, Options, PostForm } from "../layout";
import type { FormValues } from "./basics";

type SignedInFrame = Frame & { csrf: string };

function tokenStatus(token: TokenView, now: Date): { kind: "ok" | "bad" | "warn"; text: string } {
  if (token.revoked_at !== null) return { kind: "bad", text: "отозван" };
  if (token.expires_at !== null && Date.parse(token.expires_at) <= now.getTime())
    return { kind: "warn", text: "истёк" };
  return { kind: "ok", text: "активен" };
}

const PURPOSE_LABEL: Record<TokenPurpose, string> = { integration: "интеграция", mcp: "агент (mcp)" };

function accountLabel(a: BankAccountView | undefined, id: string): string {
  return a ? `${a.alias} ${a.account_number_masked}` : id;
}

export function TokensPage({
  frame,
  tokens,
  companies,
  accounts,
  now,
}: {
  frame: SignedInFrame;
  tokens: TokenView[];
  companies: CompanyView[];
  accounts: BankAccountView[];
  now: Date;
}) {
  const companyName = new Map(companies.map((c) => [c.company_id, c.name]));
  const accountById = new Map(accounts.map((a) => [a.bank_account_id, a]));
  return (
    <Layout frame={frame}>
      <h1>Токены</h1>
      <section class="card">
        <h2>Новый токен</h2>
        {companies.length === 0 ? (
          <p class="muted">
            Сначала создайте <a href="/admin/companies">компанию</a>.
          </p>
        ) : (
          <form method="get" action="/admin/tokens/new" class="grid">
            <label>
              Компания
              <select name="company_id" required>
                <Options items={companies.map((c) => [c.company_id, `${c.name} (ИНН ${c.inn})`])} />
              </select>
            </label>
            <label>
              Назначение
              <select name="purpose">
                <Options
                  items={[
                    ["integration", "интеграция (REST)"],
                    ["mcp", "агент (MCP), только чтение"],
                  ]}
                />
              </select>
            </label>
            <div>
              <button type="submit">Далее</button>
            </div>
          </form>
        )}
      </section>
      <section class="card">
        <h2>Все токены</h2>
        <table id="tokens">
          <thead>
            <tr>
              <th>Имя, префикс</th>
              <th>Компания</th>
              <th>Назначение, режим</th>
              <th>Права</th>
              <th>Счета</th>
              <th>IP</th>
              <th>Лимит/мин</th>
              <th>Последнее использование</th>
              <th>Статус</th>
              <th></th>
            </tr>
          </thead>
          <tbody>
            {tokens.map((tk) => {
              const status = tokenStatus(tk, now);
              return (
                <tr data-token-id={tk.api_token_id}>
                  <td>
                    <div safe>{tk.name}</div>
                    <div class="mono small muted" safe>
                      {`${tk.token_prefix}…`}
                    </div>
                  </td>
                  <td safe>{companyName.get(tk.company_id) ?? tk.company_id}</td>
                  <td>
                    <div safe>{PURPOSE_LABEL[tk.purpose]}</div>
                    <div class="small muted" safe>
                      {tk.mode}
                    </div>
                  </td>
                  <td class="small" safe>
                    {[
                      tk.scopes.read_statements ? "чтение выписок" : "",
                      tk.scopes.send_payments ? "платежи" : "",
                    ]
                      .filter(Boolean)
                      .join(", ") || "—"}
                  </td>
                  <td class="small">
                    {tk.accounts.map((g) => (
                      <div safe>
                        {`${accountLabel(accountById.get(g.bank_account_id), g.bank_account_id)}: ${[
                          g.allow_read_statements ? "чтение" : "",
                          g.allow_send_payments ? "платежи" : "",
                        ]
                          .filter(Boolean)
                          .join(", ")}`}
                      </div>
                    ))}
                  </td>
                  <td class="mono small" safe>
                    {tk.allowed_ips.length ? tk.allowed_ips.join(", ") : "любой"}
                  </td>
                  <td class="num" safe>
                    {tk.rate_limit_is_default
                      ? `${tk.rate_limit_per_minute} (по умолч.)`
                      : String(tk.rate_limit_per_minute)}
                  </td>
                  <td class="small" safe>
                    {formatTime(tk.last_used_at) || "—"}
                  </td>
                  <td>
                    <Badge kind={status.kind} text={status.text} />
                  </td>
                  <td class="actions">
                    <a href={`/admin/tokens/${tk.api_token_id}`}>Изменить</a>{" "}
                    {tk.revoked_at === null ? (
                      <PostForm
                        action={`/admin/tokens/${tk.api_token_id}/revoke`}
                        csrf={frame.csrf}
                        class="inline"
                      >
                        <button type="submit" class="danger">
                          Отозвать
                        </button>
                      </PostForm>
                    ) : (
                      ""
                    )}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
        {tokens.length === 0 ? <p class="muted">Токенов пока нет.</p> : ""}
      </section>
    </Layout>
  );
}

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
            <td safe>{`${a.alias} ${a.account_number_masked} (${a.bank})`}</td>
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
        Действует до (UTC, необязательно)
        <input name="expires_at" type="datetime-local" value={attr(values.expires_at)} />
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
                  ["test", "test (svc_test_…, только sandbox-банки)"],
                  ["live", "live (svc_live_…)"],
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

export function TokenCreatedPage({
  frame,
  token,
  raw,
}: {
  frame: SignedInFrame;
  token: TokenView;
  raw: string;
}) {
  return (
    <Layout frame={frame}>
      <h1>Токен создан</h1>
      <section class="card">
        <p>
          Скопируйте значение сейчас: оно показывается <strong>один раз</strong> и нигде не хранится (сервис
          помнит только хеш).
        </p>
        <div class="secret">
          <input id="new-token" readonly value={raw} aria-label="Новый токен" />
          <button type="button" data-copy="new-token">
            Копировать
          </button>
        </div>
        <p class="small muted" safe>
          {`Имя: ${token.name} · префикс: ${token.token_prefix}… · назначение: ${PURPOSE_LABEL[token.purpose]} · режим: ${token.mode}`}
        </p>
        <p>
          <a class="button secondary" href="/admin/tokens">
            К списку токенов
          </a>
        </p>
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
    expires_at: token.expires_at ? token.expires_at.slice(0, 16) : "",
  };
  return (
    <Layout frame={frame}>
      <h1 safe>{`Токен ${token.token_prefix}… (${token.name})`}</h1>
      <section class="card">
        <ErrorBox message={error} />
        <p class="small muted" safe>
          {`Компания: ${company?.name ?? token.company_id} · назначение: ${PURPOSE_LABEL[token.purpose]} · режим: ${token.mode} · создан: ${formatTime(token.created_at)}${token.revoked_at ? ` · отозван: ${formatTime(token.revoked_at)}` : ""}`}
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
