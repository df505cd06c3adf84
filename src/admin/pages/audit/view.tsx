// The audit log page: the chart of agent calls, the filters, the export links and the entries.
import type { AuditEntry } from "../../../audit/audit-log";
import type { TokenView } from "../../model";
import { type AgentCallsChart, AgentCallsSvg } from "../chart";
import { formatDateTime } from "../format";
import { attr, Badge, ErrorBox, Layout, Options, Pager, type SignedInFrame, WithPrefixes } from "../layout";

export type AuditFilters = {
  api_token_id?: string;
  action?: string;
  since?: string;
  until?: string;
  cursor?: string;
};

const KNOWN_ACTIONS = [
  "admin.company.create",
  "admin.bank_account.create",
  "admin.token.create",
  "admin.token.update",
  "admin.token.revoke",
  "admin.statement.order",
  "admin.statement.import",
  "admin.statement.export",
  "admin.balance.refresh",
  "admin.account.sync",
  "admin.bank_account.credentials",
  "admin.oauth.approve",
  "admin.oauth.revoke",
  "admin.ui.sign_in",
  "admin.ui.sign_out",
  "statement.order",
  "statement.import",
  "statement.export",
  "statement.sync",
  "tochka.webhook",
  "directbank.Logon",
  "directbank.GetSettings",
  "directbank.SendPack",
  "directbank.GetPackList",
  "directbank.GetPack",
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

/** How an action ended, in words; other outcomes are the error codes of the API, shown as they are. */
const OUTCOME_LABEL: Record<string, string> = {
  ok: "успешно",
  invalid_token: "неверный токен",
  rate_limited: "превышен лимит",
  error: "ошибка",
};

/** Who acted, as operators read it (a token is named by its prefix and name). */
const ACTOR_LABEL: Record<string, string> = { admin: "администратор", system: "сервис", token: "токен" };

/** `дд.мм.гггг` with an optional `чч:мм`. */
const RU_DATE_TIME = "\\d{2}\\.\\d{2}\\.\\d{4}( \\d{2}:\\d{2})?";

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
        <AgentCallsSvg chart={chart} timeZone={frame.timeZone} />
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
            С (дд.мм.гггг чч:мм)
            <input
              name="since"
              pattern={RU_DATE_TIME}
              placeholder="дд.мм.гггг чч:мм"
              value={attr(filters.since)}
            />
          </label>
          <label>
            До (не включая)
            <input
              name="until"
              pattern={RU_DATE_TIME}
              placeholder="дд.мм.гггг чч:мм"
              value={attr(filters.until)}
            />
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
              <th>Время</th>
              <th>Действие</th>
              <th>Кто</th>
              <th>Объект</th>
              <th>Результат</th>
              <th>Адрес, запрос</th>
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
                  : (ACTOR_LABEL[e.actor] ?? e.actor);
              return (
                <tr>
                  <td class="small" safe>
                    {formatDateTime(e.at, frame.timeZone)}
                  </td>
                  <td class="mono" safe>
                    {e.action}
                  </td>
                  <td>
                    <WithPrefixes text={who} />
                  </td>
                  {e.target !== null && names.has(e.target) ? (
                    <td class="small" title={attr(e.target)}>
                      <WithPrefixes text={names.get(e.target) ?? ""} />
                    </td>
                  ) : (
                    <td class="mono small" safe>
                      {e.target ?? e.tool ?? ""}
                    </td>
                  )}
                  <td>
                    <Badge
                      kind={e.outcome === "ok" ? "ok" : "bad"}
                      text={OUTCOME_LABEL[e.outcome] ?? e.outcome}
                    />
                    {e.duration_ms !== null ? (
                      <span class="small muted" safe>
                        {` ${e.duration_ms} мс`}
                      </span>
                    ) : (
                      ""
                    )}
                  </td>
                  <td class="small">
                    <div class="mono" safe>
                      {e.ip ?? ""}
                    </div>
                    <div class="mono" safe>
                      {e.request_id ?? ""}
                    </div>
                    {e.mcp_session_id ? (
                      <div class="muted">
                        сессия{" "}
                        <span class="mono" safe>
                          {e.mcp_session_id}
                        </span>
                      </div>
                    ) : (
                      ""
                    )}
                  </td>
                  <td class="small args">
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
        <Pager path="/admin/audit-log" filters={filters} nextCursor={nextCursor} />
      </section>
    </Layout>
  );
}
