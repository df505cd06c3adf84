// Token pages that show tokens: the list, and the one-time page with a new token's raw value.
import type { TokenPurpose } from "../../../auth/tokens";
import type { BankAccountView, CompanyView, TokenView } from "../../model";
import { formatDateTime } from "../format";
import { Badge, Layout, Options, RevokeForm, type SignedInFrame } from "../layout";

function tokenStatus(token: TokenView, now: Date): { kind: "ok" | "bad" | "warn"; text: string } {
  if (token.revoked_at !== null) return { kind: "bad", text: "отозван" };
  if (token.expires_at !== null && Date.parse(token.expires_at) <= now.getTime())
    return { kind: "warn", text: "истёк" };
  return { kind: "ok", text: "активен" };
}

export const PURPOSE_LABEL: Record<TokenPurpose, string> = { integration: "интеграция", mcp: "агент (MCP)" };
/** A token's mode: test tokens reach only the test banks. */
export const MODE_LABEL: Record<string, string> = { test: "тестовый", live: "рабочий" };

/** An account in a cell: its alias and its masked number, the number never split. */
function AccountMention({ account, id }: { account: BankAccountView | undefined; id: string }) {
  if (!account)
    return (
      <span class="mono" safe>
        {id}
      </span>
    );
  return (
    <>
      <span safe>{account.alias}</span>{" "}
      <span class="mono nowrap" safe>
        {account.account_number_masked}
      </span>
    </>
  );
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
              <th>Назначение, права</th>
              <th>Счета</th>
              <th>Ограничения</th>
              <th>Использован</th>
              <th>Статус</th>
            </tr>
          </thead>
          <tbody>
            {tokens.map((tk) => {
              const status = tokenStatus(tk, now);
              const rights = [
                tk.scopes.read_statements ? "чтение выписок" : "",
                tk.scopes.send_payments ? "платежи" : "",
              ]
                .filter(Boolean)
                .join(", ");
              return (
                <tr data-token-id={tk.api_token_id}>
                  <td>
                    <div safe>{tk.name}</div>
                    <div class="mono small muted nowrap" safe>
                      {`${tk.token_prefix}…`}
                    </div>
                  </td>
                  <td safe>{companyName.get(tk.company_id) ?? tk.company_id}</td>
                  <td>
                    <div safe>{PURPOSE_LABEL[tk.purpose]}</div>
                    <div class="small muted" safe>
                      {`${MODE_LABEL[tk.mode] ?? tk.mode}; ${rights || "без прав"}`}
                    </div>
                  </td>
                  <td class="small">
                    {tk.accounts.map((g) => (
                      <div>
                        <AccountMention account={accountById.get(g.bank_account_id)} id={g.bank_account_id} />
                        <span safe>
                          {`: ${[
                            g.allow_read_statements ? "чтение" : "",
                            g.allow_send_payments ? "платежи" : "",
                          ]
                            .filter(Boolean)
                            .join(", ")}`}
                        </span>
                        {tk.purpose === "integration" &&
                        tk.scopes.read_statements &&
                        g.allow_read_statements &&
                        tk.revoked_at === null ? (
                          <>
                            {" "}
                            <a
                              class="small"
                              title="Файл настроек обмена для 1С:ДиректБанка (docs/directbank.md)"
                              href={`/admin/tokens/${tk.api_token_id}/directbank-settings?bank_account_id=${g.bank_account_id}`}
                            >
                              1С:ДиректБанк
                            </a>
                          </>
                        ) : (
                          ""
                        )}
                      </div>
                    ))}
                  </td>
                  <td class="small">
                    <div>
                      {tk.allowed_ips.length ? (
                        tk.allowed_ips.map((ip) => (
                          <div class="mono" safe>
                            {ip}
                          </div>
                        ))
                      ) : (
                        <span>с любого адреса</span>
                      )}
                    </div>
                    <div class="muted" safe>
                      {tk.rate_limit_is_default
                        ? `${tk.rate_limit_per_minute} в минуту (по умолчанию)`
                        : `${tk.rate_limit_per_minute} в минуту`}
                    </div>
                  </td>
                  <td class="small" safe>
                    {formatDateTime(tk.last_used_at, frame.timeZone) || "—"}
                  </td>
                  <td class="actions">
                    <Badge kind={status.kind} text={status.text} />
                    <div>
                      <a href={`/admin/tokens/${tk.api_token_id}`}>Изменить</a>
                    </div>
                    {tk.revoked_at === null ? (
                      <RevokeForm
                        action={`/admin/tokens/${tk.api_token_id}/revoke`}
                        csrf={frame.csrf}
                        kind="danger"
                      />
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
          {`Имя: ${token.name} · префикс: ${token.token_prefix}… · назначение: ${PURPOSE_LABEL[token.purpose]} · режим: ${MODE_LABEL[token.mode] ?? token.mode}`}
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
