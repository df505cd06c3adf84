// search_operations' text for a model: the first line states the period, the filters, what was
// found with its totals, and in words every day the answer has no data or only part of it for.
import { dateInZone } from "../../core/clock";
import { nextIsoDay } from "../../formats/dates";
import { nextPageLine, operationLine, operationsCount, rubles, ruPeriod, signed } from "../answer-text";
import type { OperationView } from "../views";
import type { ToolDeps } from "./registry";

interface Range {
  date_from: string;
  date_to: string;
}

/** What the text is made from: the tool's output (decisions §15). */
export interface SearchAnswer {
  operations: OperationView[];
  next_cursor: string | null;
  totals: { count: number; total_credit: number; total_debit: number };
  coverage: {
    complete: boolean;
    covered: Range[];
    partial: { date: string; as_of: string }[];
    missing: Range[];
  };
}

export interface SearchArgs {
  date_from: string;
  date_to: string;
  query?: string;
  direction?: "credit" | "debit";
  counterparty_inn?: string;
  amount_min?: number;
  amount_max?: number;
}

function filtersInWords(args: SearchArgs): string {
  const parts: string[] = [];
  if (args.query !== undefined) parts.push(`слова «${args.query.replace(/\s+/gu, " ").trim()}»`);
  if (args.direction) parts.push(args.direction === "credit" ? "только поступления" : "только списания");
  if (args.counterparty_inn) parts.push(`ИНН контрагента ${args.counterparty_inn}`);
  if (args.amount_min !== undefined) parts.push(`сумма от ${rubles(args.amount_min)}`);
  if (args.amount_max !== undefined) parts.push(`сумма до ${rubles(args.amount_max)}`);
  return parts.length === 0 ? "" : ` (${parts.join(", ")})`;
}

/** The days before and after `today` of each range: days not yet come are no gap to report. */
function splitAtToday(ranges: Range[], today: string): { past: Range[]; future: Range[] } {
  const past: Range[] = [];
  const future: Range[] = [];
  for (const r of ranges) {
    if (r.date_to <= today) past.push(r);
    else if (r.date_from > today) future.push(r);
    else {
      past.push({ date_from: r.date_from, date_to: today });
      future.push({ date_from: nextIsoDay(today), date_to: r.date_to });
    }
  }
  return { past, future };
}

const periods = (ranges: Range[]) => ranges.map((r) => ruPeriod(r.date_from, r.date_to)).join(", ");

/** The coverage in words: nothing when complete, else every gap and partial day. */
function coverageInWords(coverage: SearchAnswer["coverage"], today: string): string {
  if (coverage.complete) return " Данные есть за каждый день периода.";
  const { past, future } = splitAtToday(coverage.missing, today);
  const gaps: string[] = [];
  if (past.length > 0) {
    gaps.push(`нет данных за ${periods(past)}: выписки за эти дни не заказаны или ещё не готовы`);
  }
  for (const p of coverage.partial) {
    gaps.push(`за ${ruPeriod(p.date, p.date)} данные неполные: выписка получена ${p.as_of}, до конца дня`);
  }
  if (future.length > 0) gaps.push(`дни ${periods(future)} ещё не наступили`);
  return (
    ` ВНИМАНИЕ: ${gaps.join("; ")}. Найденное и итоги — только за дни с данными; ` +
    "скажите пользователю, за какие дни данных нет."
  );
}

export function searchText(
  out: SearchAnswer,
  args: SearchArgs,
  deps: Pick<ToolDeps, "clock" | "timezone">,
): string {
  const today = dateInZone(deps.clock.now(), deps.timezone);
  const { totals } = out;
  const found =
    totals.count === 0
      ? "ничего не найдено"
      : `найдено ${operationsCount(totals.count)}, поступления ${signed("credit", totals.total_credit)}, ` +
        `списания ${signed("debit", totals.total_debit)}; показано ${out.operations.length}`;
  const first =
    `Операции за ${ruPeriod(args.date_from, args.date_to)}${filtersInWords(args)}: ${found}.` +
    coverageInWords(out.coverage, today);
  const lines = [first];
  // No header line: each line names its parts (ИНН, №), and a page of 50 spares the tokens.
  lines.push(...out.operations.map(operationLine));
  lines.push(...nextPageLine(out.next_cursor));
  return lines.join("\n");
}
