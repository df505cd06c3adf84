// The audit page's chart: agent calls per hour over the last 24 hours, one line per token,
// drawn as server-side SVG (no script, no external library).
import type { HourlyAgentCalls } from "../../audit/audit-log";
import { formatDateTime } from "./format";

const CHART_HOURS = 24;
const HOUR_MS = 3_600_000;
const PALETTE = ["#2456c9", "#d9480f", "#2b8a3e", "#862e9c", "#c2255c", "#0b7285", "#5c940d", "#e67700"];

export interface ChartSeries {
  /** api_token_id, or null for calls without a known token. */
  tokenId: string | null;
  label: string;
  counts: number[];
}

export interface AgentCallsChart {
  /** `YYYY-MM-DDTHH` of each bucket, oldest first; the last one is the current hour. */
  hours: string[];
  series: ChartSeries[];
}

/** First hour of the window for `now`: the current hour and the 23 before it. */
export function chartSince(now: Date): string {
  const current = Math.floor(now.getTime() / HOUR_MS) * HOUR_MS;
  return new Date(current - (CHART_HOURS - 1) * HOUR_MS).toISOString();
}

export function buildChart(
  now: Date,
  rows: HourlyAgentCalls[],
  labelOf: (tokenId: string | null) => string,
): AgentCallsChart {
  const start = Date.parse(chartSince(now));
  const hours = Array.from({ length: CHART_HOURS }, (_, i) =>
    new Date(start + i * HOUR_MS).toISOString().slice(0, 13),
  );
  const index = new Map(hours.map((h, i) => [h, i]));
  const byToken = new Map<string | null, number[]>();
  for (const row of rows) {
    const i = index.get(row.hour);
    if (i === undefined) continue;
    let counts = byToken.get(row.api_token_id);
    if (!counts) {
      counts = new Array<number>(CHART_HOURS).fill(0);
      byToken.set(row.api_token_id, counts);
    }
    counts[i] = (counts[i] ?? 0) + row.calls;
  }
  const series = [...byToken.entries()]
    .map(([tokenId, counts]) => ({ tokenId, label: labelOf(tokenId), counts }))
    .sort((a, b) => a.label.localeCompare(b.label));
  return { hours, series };
}

/** The smallest of 1, 2, 5 × 10^n that is at least `max`, so that the axis reads well. */
function niceCeiling(max: number): number {
  if (max <= 1) return 1;
  const magnitude = 10 ** Math.floor(Math.log10(max));
  for (const step of [1, 2, 5, 10]) if (step * magnitude >= max) return step * magnitude;
  return 10 * magnitude;
}

const W = 960;
const PLOT_H = 220;
const LEFT = 48;
const RIGHT = 16;
const TOP = 14;
const LEGEND_ROW = 20;
const LEGEND_COLUMNS = 3;

/** A bucket's hour (`YYYY-MM-DDTHH`, UTC) on the business time zone's clock: `12:00`. */
function hourLabel(hour: string | undefined, timeZone: string): string {
  return hour === undefined ? "" : formatDateTime(`${hour}:00:00Z`, timeZone).slice(11);
}

export function AgentCallsSvg({ chart, timeZone }: { chart: AgentCallsChart; timeZone: string }) {
  const max = niceCeiling(Math.max(0, ...chart.series.flatMap((s) => s.counts)));
  const plotW = W - LEFT - RIGHT;
  const x = (i: number) => LEFT + (plotW * i) / (CHART_HOURS - 1);
  const y = (v: number) => TOP + PLOT_H - (PLOT_H * v) / max;
  const axisY = TOP + PLOT_H;
  const legendTop = axisY + 40;
  const legendRows = Math.ceil(chart.series.length / LEGEND_COLUMNS);
  const height = legendTop + Math.max(1, legendRows) * LEGEND_ROW + 4;
  const ticks = [0, max / 2, max].filter((v, i, all) => Number.isInteger(v) && all.indexOf(v) === i);
  const total = chart.series.reduce((sum, s) => sum + s.counts.reduce((a, b) => a + b, 0), 0);

  return (
    <svg
      class="chart"
      xmlns="http://www.w3.org/2000/svg"
      viewBox={`0 0 ${W} ${height}`}
      role="img"
      aria-label={`Вызовы агентов по часам за последние 24 часа: всего ${total}`}
      data-series-count={String(chart.series.length)}
    >
      <title>Вызовы агентов (mcp.*) по часам</title>
      {ticks.map((v) => (
        <>
          <line class="grid" x1={LEFT} x2={W - RIGHT} y1={y(v)} y2={y(v)} />
          <text x={LEFT - 6} y={y(v) + 4} text-anchor="end">
            {String(v)}
          </text>
        </>
      ))}
      <line class="axis" x1={LEFT} x2={W - RIGHT} y1={axisY} y2={axisY} />
      <line class="axis" x1={LEFT} x2={LEFT} y1={TOP} y2={axisY} />
      {chart.hours.map((hour, i) =>
        i % 3 === 0 || i === CHART_HOURS - 1 ? (
          <text x={x(i)} y={axisY + 16} text-anchor="middle">
            {hourLabel(hour, timeZone)}
          </text>
        ) : (
          ""
        ),
      )}
      <text x={LEFT + plotW / 2} y={axisY + 32} text-anchor="middle">
        час
      </text>
      <text x={12} y={TOP + PLOT_H / 2} text-anchor="middle" transform={`rotate(-90 12 ${TOP + PLOT_H / 2})`}>
        вызовов
      </text>
      {chart.series.map((s, n) => {
        const color = PALETTE[n % PALETTE.length]!;
        return (
          <g class="series" data-series={s.tokenId ?? "none"}>
            <polyline
              fill="none"
              stroke={color}
              stroke-width="2"
              points={s.counts.map((v, i) => `${x(i).toFixed(1)},${y(v).toFixed(1)}`).join(" ")}
            />
            {s.counts.map((v, i) =>
              v > 0 ? (
                <circle cx={x(i).toFixed(1)} cy={y(v).toFixed(1)} r="3" fill={color}>
                  <title safe>{`${s.label}: ${v} в ${hourLabel(chart.hours[i], timeZone)}`}</title>
                </circle>
              ) : (
                ""
              ),
            )}
          </g>
        );
      })}
      {chart.series.map((s, n) => {
        const lx = LEFT + (n % LEGEND_COLUMNS) * (plotW / LEGEND_COLUMNS);
        const ly = legendTop + Math.floor(n / LEGEND_COLUMNS) * LEGEND_ROW;
        return (
          <g class="legend">
            <rect x={lx} y={ly - 9} width="12" height="12" fill={PALETTE[n % PALETTE.length]!} />
            <text x={lx + 18} y={ly + 1} safe>
              {truncate(s.label, 40)}
            </text>
          </g>
        );
      })}
      {chart.series.length === 0 ? (
        <text x={LEFT + plotW / 2} y={TOP + PLOT_H / 2} text-anchor="middle">
          За последние 24 часа вызовов агентов не было
        </text>
      ) : (
        ""
      )}
    </svg>
  );
}

function truncate(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
