// Statements (list and "via UI" orders) and the audit log with its chart of agent calls.
import type { AuditEntry } from "../../../audit/audit-log";
import type { StatementView } from "../../../statements/service";
import type { BankAccountView, TokenView } from "../../model";
import { type AgentCallsChart, AgentCallsSvg } from "../chart";
import { attr, Badge, ErrorBox, type Frame, formatTime, Layout, Options, PostForm } from "../layout";
import type { FormValues } from "./basics";

type SignedInFrame = Frame & { csrf: string };

const STATUS_BADGE = { ready: "ok", failed: "bad", processing: "warn" } as const;
/** What operators read; the API's own words stay in the API. */
const STATUS_LABEL = { ready: "готова", failed: "ошибка", processing: "готовится" } as const;
const SOURCE_LABEL = { integration: "интеграция", ui: "вручную", import: "из файла банка" } as const;

function query(params: Record<string, string | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v) q.set(k, v);
  const text = q.toString();
  return text ? `?${text}` : "";
}

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
    `${companyName.get(a.company_id) ?? a.company_id}: ${a.alias} ${a.account_number_masked} (${a.bank})`,
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
              <input name="date_from" type="date" required max={today} value={attr(values.date_from)} />
            </label>
            <label>
              По дату (включительно, не больше 31 дня)
              <input name="date_to" type="date" required max={today} value={attr(values.date_to ?? today)} />
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
            Для счетов с банком <code>file</code>: файл обмена 1С (kl_to_1c.txt), который выгружает
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
              <th>statement_id</th>
              <th>Скачать</th>
            </tr>
          </thead>
          <tbody>
            {statements.map((s) => (
              <tr>
                <td class="small" safe>
                  {formatTime(s.created_at)}
                </td>
                <td safe>
                  {accountById.get(s.bank_account_id)
                    ? `${accountById.get(s.bank_account_id)?.alias} ${s.account_number_masked}`
                    : s.account_number_masked}
                </td>
                <td safe>{`${s.date_from} — ${s.date_to}`}</td>
                <td>
                  <Badge kind={STATUS_BADGE[s.status]} text={STATUS_LABEL[s.status]} />
                  {s.error ? (
                    <div class="small muted" safe>
                      {`${s.error.code}: ${s.error.message}`}
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
                  {formatTime(s.fetched_at)}
                </td>
                <td class="mono small" safe>
                  {s.statement_id}
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
        <div class="pager">
          {filters.cursor ? (
            <a class="button secondary" href={`/admin/statements${query({ ...filters, cursor: undefined })}`}>
              В начало
            </a>
          ) : (
            ""
          )}
          {nextCursor ? (
            <a
              class="button secondary"
              rel="next"
              href={`/admin/statements${query({ ...filters, cursor: nextCursor })}`}
            >
              Дальше
            </a>
          ) : (
            ""
          )}
        </div>
      </section>
    </Layout>
  );
}

export interface AuditFilters {
  api_token_id?: string;
  action?: string;
  since?: string;
  until?: string;
  cursor?: string;
}

const KNOWN_ACTIONS = [
  "admin.company.create",
  "admin.bank_account.create",
  "admin.token.create",
  "admin.token.update",
  "admin.token.revoke",
  "admin.statement.order",
  "admin.balance.refresh",
  "admin.ui.sign_in",
  "admin.ui.sign_out",
  "mcp.initialize",
  "mcp.tools_list",
  "mcp.tools_call",
  "mcp.list_companies",
  "mcp.list_bank_accounts",
  "mcp.get_balance",
  "mcp.list_statements",
  "mcp.get_statement",
  "mcp.search_operations",
  "mcp.ping",
  "mcp.session.terminate",
];

function auditExportHref(filters: AuditFilters, format: "csv" | "jsonl"): string {
  const query = new URLSearchParams({ format });
  if (filters.since) query.set("since", filters.since);
  if (filters.until) query.set("until", filters.until);
  return `/admin/audit-log/export?${query}`;
}

export function AuditPage({
  frame,
  chart,
  tokens,
  entries,
  nextCursor,
  filters,
  error,
  names,
}: {
  frame: SignedInFrame;
  chart: AgentCallsChart;
  tokens: TokenView[];
  entries: AuditEntry[];
  nextCursor: string | null;
  filters: AuditFilters;
  error: string | null;
  /** What an entry's object id names (a token, an account, a company), for the "Объект" column. */
  names: ReadonlyMap<string, string>;
}) {
  const tokenById = new Map(tokens.map((tk) => [tk.api_token_id, tk]));
  return (
    <Layout frame={frame}>
      <h1>Журнал аудита</h1>
      <section class="card">
        <h2>Вызовы агентов за последние 24 часа</h2>
        <AgentCallsSvg chart={chart} />
      </section>
      <section class="card">
        <form method="get" action="/admin/audit-log" class="grid">
          <label>
            Токен
            <select name="api_token_id">
              <Options
                items={[
                  ["", "любой"],
                  ...tokens.map((tk): [string, string] => [
                    tk.api_token_id,
                    `${tk.token_prefix}… ${tk.name}`,
                  ]),
                ]}
                selected={filters.api_token_id ?? ""}
              />
            </select>
          </label>
          <label>
            Действие
            <input
              name="action"
              list="audit-actions"
              value={attr(filters.action)}
              placeholder="например, mcp.get_balance"
            />
            <datalist id="audit-actions">
              {KNOWN_ACTIONS.map((a) => (
                <option value={a} />
              ))}
            </datalist>
          </label>
          <label>
            С (UTC)
            <input name="since" type="datetime-local" value={attr(filters.since)} />
          </label>
          <label>
            До (UTC, не включая)
            <input name="until" type="datetime-local" value={attr(filters.until)} />
          </label>
          <div>
            <button type="submit" class="secondary">
              Показать
            </button>{" "}
            <a href="/admin/audit-log">Сбросить</a>
          </div>
        </form>
        <p>
          Скачать журнал за выбранный период (все записи, от старых к новым):{" "}
          <a href={auditExportHref(filters, "csv")}>CSV</a> ·{" "}
          <a href={auditExportHref(filters, "jsonl")}>JSON Lines</a>
        </p>
      </section>
      <section class="card">
        <ErrorBox message={error} />
        <table id="audit">
          <thead>
            <tr>
              <th>Время (UTC)</th>
              <th>Действие</th>
              <th>Кто</th>
              <th>Объект</th>
              <th>Результат</th>
              <th>IP</th>
              <th>Запрос</th>
              <th>Аргументы</th>
            </tr>
          </thead>
          <tbody>
            {entries.map((e) => {
              const token = e.api_token_id ? tokenById.get(e.api_token_id) : undefined;
              const who =
                e.actor === "token"
                  ? token
                    ? `${token.token_prefix}… ${token.name}`
                    : (e.api_token_id ?? "токен")
                  : e.actor;
              return (
                <tr>
                  <td class="small" safe>
                    {formatTime(e.at)}
                  </td>
                  <td class="mono" safe>
                    {e.action}
                  </td>
                  <td safe>{who}</td>
                  {e.target !== null && names.has(e.target) ? (
                    <td class="small" title={attr(e.target)} safe>
                      {names.get(e.target) ?? ""}
                    </td>
                  ) : (
                    <td class="mono small" safe>
                      {e.target ?? e.tool ?? ""}
                    </td>
                  )}
                  <td>
                    <Badge kind={e.outcome === "ok" ? "ok" : "bad"} text={e.outcome} />
                    {e.duration_ms !== null ? (
                      <span class="small muted" safe>
                        {` ${e.duration_ms} мс`}
                      </span>
                    ) : (
                      ""
                    )}
                  </td>
                  <td class="mono small" safe>
                    {e.ip ?? ""}
                  </td>
                  <td class="mono small" safe>
                    {[e.request_id, e.transport, e.mcp_session_id ? `session ${e.mcp_session_id}` : null]
                      .filter(Boolean)
                      .join(" · ")}
                  </td>
                  <td class="small">
                    {e.arguments === null || e.arguments === undefined ? (
                      ""
                    ) : (
                      <details>
                        <summary>показать</summary>
                        <pre safe>{JSON.stringify(e.arguments, null, 2)}</pre>
                      </details>
                    )}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
        {entries.length === 0 ? <p class="muted">Записей нет.</p> : ""}
        <div class="pager">
          {filters.cursor ? (
            <a class="button secondary" href={`/admin/audit-log${query({ ...filters, cursor: undefined })}`}>
              В начало
            </a>
          ) : (
            ""
          )}
          {nextCursor ? (
            <a
              class="button secondary"
              rel="next"
              href={`/admin/audit-log${query({ ...filters, cursor: nextCursor })}`}
            >
              Дальше
            </a>
          ) : (
            ""
          )}
        </div>
      </section>
    </Layout>
  );
}
