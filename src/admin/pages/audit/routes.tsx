// The audit log: the page with the chart of agent calls, and a period's export.
import { isInstant } from "../../../audit/audit-export";
import { buildChart, chartSince } from "../chart";
import { attempt, instantOf, nonEmpty, type Outcome, PAGE_SIZE, type PageKit, page, redirect } from "../kit";
import { MessagePage } from "../layout";
import { get, type PageRoute, pageDoc } from "../page-route";
import type { AdminSession } from "../session";
import { type AuditFilters, AuditPage } from "./view";

export function auditRoutes(kit: PageKit): PageRoute[] {
  const { admin } = kit.deps;
  const deps = kit.deps;
  const { sessionOf, signedInFrame, send, view } = kit;

  function auditPage(session: AdminSession, query: Record<string, string | undefined>): Outcome {
    const tokens = admin.tokens.list();
    const filters: AuditFilters = {
      api_token_id: nonEmpty(query.api_token_id),
      action: nonEmpty(query.action?.trim()),
      since: nonEmpty(query.since),
      until: nonEmpty(query.until),
      cursor: nonEmpty(query.cursor),
    };
    const result = attempt(() =>
      admin.audit.page({
        api_token_id: filters.api_token_id,
        action: filters.action,
        since: instantOf(filters.since, deps.timezone),
        until: instantOf(filters.until, deps.timezone),
        cursor: filters.cursor,
        limit: PAGE_SIZE,
      }),
    );
    const now = deps.clock.now();
    const byId = new Map(tokens.map((tk) => [tk.api_token_id, tk]));
    const chart = buildChart(now, deps.audit.agentCallsPerHour(chartSince(now)), (id) => {
      if (id === null) return "без токена";
      const tk = byId.get(id);
      return tk ? `${tk.token_prefix}… ${tk.name}` : id;
    });
    const ok = "ok" in result ? result.ok : { entries: [], next_cursor: null };
    return page(
      <AuditPage
        frame={signedInFrame(session, "Журнал аудита", "audit")}
        chart={chart}
        tokens={tokens}
        entries={ok.entries}
        nextCursor={ok.next_cursor}
        filters={filters}
        error={"error" in result ? result.error.message : null}
        names={objectNames(tokens)}
      />,
      "error" in result ? result.error.status : 200,
    );
  }

  /** Tokens, accounts and companies by id, as the audit page names an entry's object. */
  function objectNames(tokens: ReturnType<typeof admin.tokens.list>): Map<string, string> {
    const names = new Map<string, string>();
    for (const c of admin.companies.list()) names.set(c.company_id, `компания ${c.name}`);
    for (const a of admin.accounts.list())
      names.set(a.bank_account_id, `счёт ${a.alias} ${a.account_number_masked}`);
    for (const tk of tokens) names.set(tk.api_token_id, `токен ${tk.token_prefix}… ${tk.name}`);
    return names;
  }

  return [
    get(
      "/admin/audit-log",
      view((session, ctx) => auditPage(session, ctx.query)),
      { detail: pageDoc("Admin pages: audit log with the chart of agent calls") },
    ),
    get(
      "/admin/audit-log/export",
      (ctx) => {
        const session = sessionOf(ctx);
        if (!session) return send(ctx, redirect("/admin/login"));
        const format = ctx.query.format;
        const since = instantOf(nonEmpty(ctx.query.since), deps.timezone);
        const until = instantOf(nonEmpty(ctx.query.until), deps.timezone);
        const bad =
          format !== "csv" && format !== "jsonl"
            ? "Формат выгрузки: csv или jsonl"
            : [since, until].some((v) => v !== undefined && !isInstant(v))
              ? "Неверная дата периода"
              : null;
        if (bad || (format !== "csv" && format !== "jsonl")) {
          const f = signedInFrame(session, "Ошибка", null);
          return send(ctx, page(<MessagePage frame={f} heading="Ошибка" text={bad ?? ""} />, 400));
        }
        const name = `audit_${(since ?? "start").slice(0, 10)}_${(until ?? "now").slice(0, 10)}.${format}`;
        return new Response(deps.audit.exportStream({ since, until }, format), {
          headers: {
            "content-type":
              format === "csv" ? "text/csv; charset=utf-8" : "application/x-ndjson; charset=utf-8",
            "content-disposition": `attachment; filename="${name}"`,
            "cache-control": "no-store",
          },
        });
      },
      { detail: pageDoc("Admin pages: the audit log of a period as CSV or JSON Lines") },
    ),
  ];
}
