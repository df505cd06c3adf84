// search_operations on PostgreSQL: the same rows in the same order as McpReadModel.searchOperations
// on SQLite, and the same totals, served by the search column and functions of
// migrations-pg/0004_operations_search.sql.

import { daysInclusive } from "../../formats/dates";
import type { StatementOperation } from "../../formats/types";
import type { OperationFilter, TotalsFilter } from "../operation-filter";
import {
  OPERATION_COLUMNS,
  type OperationDbRow,
  type OperationTotals,
  operationFromRow,
  TOTALS_COLUMNS,
  type TotalsDbRow,
  totalsFromRow,
} from "../operation-rows";
import { SEARCH_LIMITS, SearchBudgetExceeded } from "../search-limits";
import type { SqlArray, SqlPort, SqlValue } from "../sql-port";
import { PgQueryError } from "./sync-client";

export interface PgOperationFilter extends Omit<OperationFilter, "match"> {
  /** The query's words as `searchWords` gives them (never empty); folded and split in SQL. */
  words?: string[];
}

type Key = NonNullable<OperationFilter["after"]>;

/** How much each plan reads before the next takes over (tests make them small to reach every path). */
export interface SearchTuning {
  /**
   * Operations of the account (and counterparty) read in (doc_date, operation_id) order before
   * the index takes over, each checked for the text, amount and direction: a word in one
   * operation of eight fills the page there, and the scan stops as soon as it does.
   */
  window(limit: number): number;
  /**
   * Matches one span of days may hold for the index to serve it; a span with more is a word
   * common there, which the ordered scan serves better (see `searchOperations`).
   */
  spanCap(limit: number): number;
}

const TUNING: SearchTuning = {
  window: (limit) => Math.max(limit * 8, 400),
  spanCap: (limit) => Math.max(limit * 8, 400),
};
/**
 * The rest of the period is read through the day-keyed index in spans of growing length, one
 * lookup per span: a word absent from the period costs a few lookups, not one per day. The
 * longest span bounds the index entries one lookup reads for a word common in it.
 */
const SPAN_DAYS = [1, 1, 2];
const SPAN_DAYS_MAX = 4;

const ORDER = "ORDER BY o.doc_date, o.operation_id";

type Param = SqlValue | SqlArray;

/** SQL text with `?` placeholders and their values, in order. */
interface Clause {
  text: string;
  params: Param[];
}

/**
 * Stored operations of one account matching the filter, ordered by (doc_date, operation_id),
 * within `budgetMs` (see `withinBudget`).
 */
export function searchOperations(
  port: SqlPort,
  f: PgOperationFilter,
  tuning: SearchTuning = TUNING,
  budgetMs: number = SEARCH_LIMITS.postgresMs,
): StatementOperation[] {
  return withinBudget(port, budgetMs, (budget) => search(port, f, tuning, budget));
}

/**
 * The count and sums of every stored operation of the account in the period that matches the
 * filter: exactly the operations `searchOperations` gives over all pages, each once. One statement
 * within the budget: without words an aggregate over the account's b-tree; with words the
 * period's days in one lookup of the day-keyed index, every match checked on its row.
 */
export function operationTotals(
  port: SqlPort,
  f: TotalsFilter,
  budgetMs: number = SEARCH_LIMITS.postgresMs,
): OperationTotals {
  return withinBudget(port, budgetMs, (budget) => {
    budget();
    const o = conditions(f, undefined);
    const statement: Clause =
      f.words === undefined
        ? {
            text: `SELECT ${TOTALS_COLUMNS} FROM operations o WHERE ${o.filters.text} ${o.inPeriod.text}`,
            params: [...o.filters.params, ...o.inPeriod.params],
          }
        : textTotalsStatement({ ...f, words: f.words }, o);
    return totalsFromRow(all<TotalsDbRow>(port, statement)[0]!);
  });
}

/**
 * `work` in one read-only transaction whose statements may take `budgetMs` in all: `budget()`
 * sets each one's `statement_timeout` to what is left; one cancelled by it, or a call with
 * nothing left, throws SearchBudgetExceeded (never a partial answer).
 */
function withinBudget<T>(port: SqlPort, budgetMs: number, work: (budget: () => void) => T): T {
  const deadline = performance.now() + budgetMs;
  const timeout = port.prepare<{ t: string }, [string]>(
    "SELECT set_config('statement_timeout', ?, true) AS t",
  );
  const budget = () => {
    const left = Math.floor(deadline - performance.now());
    if (left < 1) throw new SearchBudgetExceeded(`more than ${budgetMs} ms`);
    timeout.get(`${left}ms`);
  };
  try {
    return port.transaction(() => work(budget));
  } catch (e) {
    // 57014: query_canceled, here by the statement timeout the search set.
    if (e instanceof PgQueryError && e.code === "57014") {
      throw new SearchBudgetExceeded(`more than ${budgetMs} ms`);
    }
    throw e;
  }
}

function search(
  port: SqlPort,
  f: PgOperationFilter,
  tuning: SearchTuning,
  budget: () => void,
): StatementOperation[] {
  budget();
  if (f.words === undefined) {
    const o = conditions(f, f.after);
    return all<OperationDbRow>(port, {
      text: `SELECT ${OPERATION_COLUMNS} FROM operations o WHERE ${o.filters.text} ${o.inPeriod.text}
      ${ORDER} LIMIT ?`,
      params: [...o.filters.params, ...o.inPeriod.params, f.limit],
    }).map(operationFromRow);
  }
  // Each statement reads the first candidates in order, then the days after them span by span
  // through the index, and stops at a full page. A span holding more matches than its cap (a word
  // rare so far that turns common) ends the statement's answer there: the next statement starts
  // at that span with the ordered scan, which finds a common word within a few rows; its window
  // is wider, the word being known to be common there.
  const found: StatementOperation[] = [];
  let from = f.after;
  for (let window = tuning.window(f.limit); ; window = tuning.window(f.limit) * 4) {
    const rows = all<TextRow>(
      port,
      textStatement(f, from, f.limit - found.length, window, tuning.spanCap(f.limit)),
    );
    const capped = rows.findIndex((r) => r.span_capped === 1);
    for (const r of capped === -1 ? rows : rows.slice(0, capped)) found.push(operationFromRow(r));
    if (capped === -1) return found;
    from = { doc_date: rows[capped]!.span_after_date!, operation_id: rows[capped]!.span_after_id! };
    budget();
  }
}

function all<Row>(port: SqlPort, statement: Clause): Row[] {
  return port.prepare<Row>(statement.text).all(...statement.params);
}

interface TextRow extends OperationDbRow {
  /** 1: the row comes from a span of days with more matches than the cap: it may not be the next one. */
  span_capped: number;
  /** The key just before that span: where the next statement starts. */
  span_after_date: string | null;
  span_after_id: string | null;
}

function textStatement(
  f: PgOperationFilter,
  from: Key | undefined,
  need: number,
  window: number,
  cap: number,
): Clause {
  const o = conditions(f, from);
  const query = "(SELECT svc_search_query(?::text[]))"; // once, not per row
  const spans = spansOf(
    daysInclusive(from && from.doc_date > f.dateFrom ? from.doc_date : f.dateFrom, f.dateTo),
  );
  // PostgreSQL runs the branches of UNION ALL in turn and the spans in order, and stops at the
  // LIMIT: a common word never reaches the index. The edge (the last candidate of the window) is
  // read only when the window falls short. In the spans the period and the filters are hidden
  // from the b-trees: the index's keys hold only the asked account's asked days (pg migration
  // 0011: each key starts with the account); each span's matches are capped, then sorted.
  const text = `
    WITH candidates AS (
      SELECT o.* FROM operations o WHERE ${o.ordered.text} ${o.inPeriod.text} ${ORDER} LIMIT ?),
    edge AS MATERIALIZED (
      SELECT e.*, ARRAY(SELECT to_char(d, 'YYYY-MM-DD')
                          FROM generate_series(e.doc_date::date, ?::date, interval '1 day') AS d) AS days
        FROM (SELECT o.doc_date, o.operation_id FROM operations o WHERE ${o.ordered.text} ${o.inPeriod.text}
               ${ORDER} OFFSET ? LIMIT 1) AS e)
    (SELECT ${OPERATION_COLUMNS}, false AS span_capped, NULL AS span_after_date, NULL AS span_after_id
       FROM candidates o WHERE o.search @@ ${query} ${o.checked.text} ${ORDER})
    UNION ALL
    (SELECT found.*,
            CASE WHEN span.first = 1 THEN edge.doc_date ELSE edge.days[span.first] END,
            CASE WHEN span.first = 1 THEN edge.operation_id ELSE '' END
       FROM edge
       CROSS JOIN unnest(?::int[], ?::int[]) AS span(first, last)
       CROSS JOIN LATERAL (
         SELECT m.*, count(*) OVER () = ? AS span_capped FROM (
           SELECT ${OPERATION_COLUMNS} FROM operations o
            WHERE svc_search_days(o.bank_account_id || '|' || o.doc_date, o.counterparty_inn, o.amount, o.search)
                  @@ svc_search_days_query(?::text[], ?::text, ?::int[],
                       ARRAY(SELECT ?::text || '|' || d FROM unnest(edge.days[span.first:span.last]) AS d))
              AND o.search @@ ${query} AND ${o.rowFilters.text}
              AND (o.doc_date || '', o.operation_id) > (edge.doc_date, edge.operation_id)
            LIMIT ?) AS m
          ORDER BY m.doc_date, m.operation_id LIMIT ?) AS found
      WHERE span.first <= cardinality(edge.days))
    LIMIT ?`;
  // The values in the order of their placeholders above.
  const params: Param[] = [
    // candidates
    ...o.ordered.params,
    ...o.inPeriod.params,
    window,
    // edge
    f.dateTo,
    ...o.ordered.params,
    ...o.inPeriod.params,
    window - 1,
    // the window's matches
    f.words!,
    ...o.checked.params,
    // the spans' matches
    spans.map((s) => s[0]),
    spans.map((s) => s[1]),
    cap,
    f.words!,
    f.counterpartyInn ?? null,
    amountBuckets(f),
    f.bankAccountId,
    f.words!,
    ...o.rowFilters.params,
    cap,
    need,
    need,
  ];
  return { text, params };
}

/**
 * The totals of the text's matches: every day of the period in one lookup of the day-keyed index
 * (only the account's entries of those days, narrowed by a counterparty asked with the words),
 * each match checked on its row as the search checks it. The filters are hidden from the b-trees
 * as in the search's spans: the index alone finds the matches within the account. An amount range
 * is checked on the row only: its buckets over 90 days are thousands of alternatives in the
 * index's query (a range from 1,000 ₽ on: 4,320 of them, 3.1 s where the rows' check took 0.11 s).
 */
function textTotalsStatement(
  f: TotalsFilter & { words: string[] },
  o: ReturnType<typeof conditions>,
): Clause {
  return {
    text: `SELECT ${TOTALS_COLUMNS} FROM operations o
      WHERE svc_search_days(o.bank_account_id || '|' || o.doc_date, o.counterparty_inn, o.amount, o.search)
            @@ svc_search_days_query(?::text[], ?::text, ?::int[],
                 ARRAY(SELECT ?::text || '|' || to_char(d, 'YYYY-MM-DD')
                         FROM generate_series(?::date, ?::date, interval '1 day') AS d))
        AND o.search @@ (SELECT svc_search_query(?::text[]))
        AND ${o.rowFilters.text} AND o.doc_date || '' >= ? AND o.doc_date || '' <= ?`,
    params: [
      f.words,
      f.counterpartyInn ?? null,
      null,
      f.bankAccountId,
      f.dateFrom,
      f.dateTo,
      f.words,
      ...o.rowFilters.params,
      f.dateFrom,
      f.dateTo,
    ],
  };
}

/**
 * The filter as SQL, the period and the text aside. `ordered`: what an index serves in
 * (doc_date, operation_id) order (the account, the counterparty), so that a window of candidates
 * and its edge are read from the index alone; `checked`: what only the row tells (amount,
 * direction), checked on the window's rows like the text; `filters`: both; `rowFilters`: both,
 * hidden from the b-trees: where the day-keyed index finds the rows, ANDing its few matches with
 * an account's or an amount range's hundreds of thousands costs far more than checking them.
 * `inPeriod`: the period, after `from`.
 */
function conditions(f: TotalsFilter, from: Key | undefined) {
  const ordered = (text: string): Clause => {
    const c: Clause = { text: `o.bank_account_id${text} = ?`, params: [f.bankAccountId] };
    if (f.counterpartyInn !== undefined) {
      c.text += ` AND o.counterparty_inn${text} = ?`;
      c.params.push(f.counterpartyInn);
    }
    return c;
  };
  const checked = (int: string): Clause => {
    const c: Clause = { text: "", params: [] };
    if (f.amountMinKopecks !== undefined) {
      c.text += ` AND o.amount${int} >= ?`;
      c.params.push(f.amountMinKopecks);
    }
    if (f.amountMaxKopecks !== undefined) {
      c.text += ` AND o.amount${int} <= ?`;
      c.params.push(f.amountMaxKopecks);
    }
    if (f.direction !== undefined) {
      c.text += " AND o.direction = ?";
      c.params.push(f.direction);
    }
    return c;
  };
  const both = (a: Clause, b: Clause): Clause => ({
    text: a.text + b.text,
    params: [...a.params, ...b.params],
  });
  const inPeriod: Clause = {
    text: "AND o.doc_date >= ? AND o.doc_date <= ?",
    params: [f.dateFrom, f.dateTo],
  };
  if (from) {
    inPeriod.text += " AND (o.doc_date, o.operation_id) > (?, ?)";
    inPeriod.params.push(from.doc_date, from.operation_id);
  }
  return {
    ordered: ordered(""),
    checked: checked(""),
    filters: both(ordered(""), checked("")),
    rowFilters: both(ordered(" || ''"), checked(" + 0")),
    inPeriod,
  };
}

/**
 * The amount buckets (svc_amount_bucket: bit length, -1 below zero) a range can fall in; null
 * without a range. The range's own bounds are checked on the row.
 */
function amountBuckets(f: TotalsFilter): number[] | null {
  if (f.amountMinKopecks === undefined && f.amountMaxKopecks === undefined) return null;
  const bucket = (kopecks: number) =>
    kopecks < 0 ? -1 : kopecks === 0 ? 0 : Math.floor(kopecks).toString(2).length;
  const first = f.amountMinKopecks === undefined ? -1 : bucket(f.amountMinKopecks);
  const last = f.amountMaxKopecks === undefined ? 64 : bucket(f.amountMaxKopecks);
  return Array.from({ length: Math.max(0, last - first + 1) }, (_, i) => first + i);
}

/** [first, last] positions (1-based, inclusive) of the walk's spans over at most `days` days. */
function spansOf(days: number): [number, number][] {
  const spans: [number, number][] = [];
  for (let first = 1, i = 0; first <= days; i++) {
    const last = Math.min(days, first + (SPAN_DAYS[i] ?? SPAN_DAYS_MAX) - 1);
    spans.push([first, last]);
    first = last + 1;
  }
  return spans;
}
