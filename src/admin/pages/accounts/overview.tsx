// What the pages show of an account at a glance: its cached balance (amount, as of, stale) with
// the refresh button, the coverage strip of the last 90 days (decisions §15: the same coverage the
// agent tools report) and the newest statement.
import { nextIsoDay } from "../../../formats/dates";
import { rublesToKopecks } from "../../../formats/money";
import type { Coverage } from "../../../statements/coverage";
import type { BalanceView, StatementView } from "../../../statements/model";
import type { BankAccountView } from "../../model";
import { formatDate, formatDateTime, formatMoney, formatPeriod } from "../format";
import { Badge, PostForm } from "../layout";

/** The days the strip shows, today included. */
export const COVERAGE_DAYS = 90;

export interface AccountOverview {
  account: BankAccountView;
  balance: BalanceView;
  coverage: Coverage;
  /** The strip's first and last day (YYYY-MM-DD). */
  from: string;
  to: string;
  newest: StatementView | null;
}

export const STATUS_BADGE = { ready: "ok", failed: "bad", processing: "warn" } as const;
/** What operators read; the API's own words stay in the API. */
export const STATUS_LABEL = { ready: "готова", failed: "ошибка", processing: "готовится" } as const;

export function BalanceCell({
  balance,
  accountId,
  csrf,
  timeZone,
  back,
}: {
  balance: BalanceView;
  accountId: string;
  csrf: string;
  timeZone: string;
  /** Where the refresh comes back to. */
  back: string;
}) {
  const kopecks = balance.balance === null ? null : rublesToKopecks(balance.balance, { signed: true });
  return (
    <div class="balance">
      {kopecks === null ? (
        <div class="muted">остаток неизвестен</div>
      ) : (
        <div class="amount" safe>
          {formatMoney(kopecks, balance.currency)}
        </div>
      )}
      {balance.as_of ? (
        <div class="small muted" safe>
          {`на ${formatDateTime(balance.as_of, timeZone)}`}
        </div>
      ) : (
        ""
      )}
      {balance.stale && balance.as_of ? <Badge kind="warn" text="устарел" /> : ""}
      <PostForm action={`/admin/accounts/${accountId}/balance/refresh`} csrf={csrf} class="inline">
        <input type="hidden" name="back" value={back} />
        <button type="submit" class="secondary small-button">
          Обновить
        </button>
      </PostForm>
    </div>
  );
}

type DayState = "covered" | "partial" | "missing";
const DAY_WORDS: Record<DayState, string> = {
  covered: "выписка есть",
  partial: "данные неполные",
  missing: "нет данных",
};

/** The state of each day `from`..`to`, from the coverage's ranges. */
function daysOf(coverage: Coverage, from: string, to: string): { day: string; state: DayState }[] {
  const state = new Map<string, DayState>();
  const mark = (ranges: { date_from: string; date_to: string }[], s: DayState) => {
    for (const r of ranges) for (let d = r.date_from; d <= r.date_to; d = nextIsoDay(d)) state.set(d, s);
  };
  mark(coverage.covered, "covered");
  mark(coverage.missing, "missing");
  for (const p of coverage.partial) state.set(p.date, "partial");
  const days: { day: string; state: DayState }[] = [];
  for (let d = from; d <= to; d = nextIsoDay(d)) days.push({ day: d, state: state.get(d) ?? "missing" });
  return days;
}

/** The last 90 days, one mark a day (covered, partial, missing), with the counts in words. */
export function CoverageStrip({ overview }: { overview: AccountOverview }) {
  const days = daysOf(overview.coverage, overview.from, overview.to);
  const count = (s: DayState) => days.filter((d) => d.state === s).length;
  const summary = `полностью: ${count("covered")}, частично: ${count("partial")}, нет данных: ${count("missing")}`;
  return (
    <div class="coverage">
      <div class="strip" role="img" aria-label={`Дни с выписками за ${COVERAGE_DAYS} дней: ${summary}`}>
        {days.map((d) => (
          <span class={`day ${d.state}`} title={`${formatDate(d.day)}: ${DAY_WORDS[d.state]}`}></span>
        ))}
      </div>
      <div class="small muted" safe>
        {`${formatPeriod(overview.from, overview.to)} · ${summary}`}
      </div>
    </div>
  );
}

/** What the strip's colours mean. */
export function CoverageLegend() {
  return (
    <div class="legend small muted">
      {(["covered", "partial", "missing"] as const).map((state) => (
        <span>
          <span class={`swatch day ${state}`}></span> {DAY_WORDS[state]}
        </span>
      ))}
    </div>
  );
}

/** The newest statement of the account: its period and state; a dash when there is none. */
export function NewestStatement({
  statement,
  timeZone,
}: {
  statement: StatementView | null;
  timeZone: string;
}) {
  if (statement === null) return <div class="small muted">выписок нет</div>;
  return (
    <div class="small">
      <span safe>{`Последняя: ${formatPeriod(statement.date_from, statement.date_to)} `}</span>
      <Badge kind={STATUS_BADGE[statement.status]} text={STATUS_LABEL[statement.status]} />
      {statement.fetched_at ? (
        <span class="muted" safe>{` получена ${formatDateTime(statement.fetched_at, timeZone)}`}</span>
      ) : (
        ""
      )}
    </div>
  );
}
