// search_operations on SQLite: the account's candidates in (doc_date, operation_id) order, a page at
// a time, each page looked up in the FTS5 index only within its own rowids, within a budget; and
// the totals of every match in the period, read the same way.
import { addKopecks } from "../../formats/money";
import type { StatementOperation } from "../../formats/types";
import { type OperationFilter, type TotalsFilter, WORD_PART } from "../operation-filter";
import {
  OPERATION_COLUMNS,
  type OperationTotals,
  operationFromRow,
  TOTALS_COLUMNS,
  type TotalsDbRow,
  totalsFromRow,
} from "../operation-rows";
import { words as foldedWords } from "../pg/search-vector";
import { SearchBudgetExceeded, type SearchLimits } from "../search-limits";
import type { SqlPort } from "../sql-port";

type OperationRow = Parameters<typeof operationFromRow>[0];

/**
 * Stored operations of one account, ordered by (doc_date, operation_id). Operations are unique per
 * (account, operation_id), so one held by two overlapping statements comes back once. Served by
 * operations_date_idx / operations_inn_idx / operations_amount_idx and the full-text index; a text
 * search reads the account's candidates in pages of growing size (see `textMatches`).
 */
export function searchOperations(
  port: SqlPort,
  f: OperationFilter,
  limits: SearchLimits,
): StatementOperation[] {
  const from = fromOperations(f);
  const order = "ORDER BY o.doc_date, o.operation_id";
  const run = (sql: string, p: (string | number)[]) =>
    port
      .prepare<OperationRow, (string | number)[]>(sql)
      .all(...p)
      .map(operationFromRow);
  if (f.words === undefined) {
    const base = candidateFilter(f, f.after);
    return run(
      `SELECT ${OPERATION_COLUMNS} FROM ${from} WHERE ${base.where.join(" AND ")} ${order} LIMIT ?`,
      [...base.params, f.limit],
    );
  }
  // Pages of growing size: a common word fills the page within the first few candidates.
  const found: number[] = [];
  for (const matched of textMatches(
    port,
    { ...f, words: f.words },
    f.after,
    limits,
    (page) => f.limit * (PAGE_GROWTH[page] ?? SQLITE_PAGE_MAX),
    () => f.limit - found.length,
  )) {
    found.push(...matched.slice(0, f.limit - found.length));
    if (found.length >= f.limit) break;
  }
  if (found.length === 0) return [];
  return run(
    `SELECT ${OPERATION_COLUMNS} FROM operations o WHERE o.id IN (${found.map(() => "?").join(",")}) ${order}`,
    found,
  );
}

/**
 * The count and sums of every stored operation of the account in the period that matches the
 * filter: exactly the operations `searchOperations` gives over all pages, each once. Without
 * words one aggregate over the account's index; with words every candidate of the period is read
 * as the search reads them, in pages of SQLITE_PAGE_MAX, within the same budget.
 */
export function operationTotals(port: SqlPort, f: TotalsFilter, limits: SearchLimits): OperationTotals {
  if (f.words === undefined) {
    const base = candidateFilter(f, undefined);
    // Through an index of the period, whatever else is asked: it reads the period's rows at most.
    // The planner takes operations_amount_idx for an amount range, which reads the range over the
    // account's whole history (ten times longer for a wide range, on an account with two periods).
    const index = f.counterpartyInn !== undefined ? "operations_inn_idx" : "operations_date_idx";
    return totalsFromRow(
      port
        .prepare<TotalsDbRow, (string | number)[]>(
          `SELECT ${TOTALS_COLUMNS} FROM operations o INDEXED BY ${index} WHERE ${base.where.join(" AND ")}`,
        )
        .get(...base.params)!,
    );
  }
  let totals: OperationTotals = { count: 0, creditKopecks: 0, debitKopecks: 0 };
  const page = () => SQLITE_PAGE_MAX;
  for (const matched of textMatches(port, { ...f, words: f.words }, undefined, limits, page, page)) {
    if (matched.length === 0) continue;
    const sums = totalsFromRow(
      port
        .prepare<TotalsDbRow, number[]>(
          `SELECT ${TOTALS_COLUMNS} FROM operations o WHERE o.id IN (${matched.map(() => "?").join(",")})`,
        )
        .get(...matched)!,
    );
    totals = {
      count: totals.count + sums.count,
      creditKopecks: addExactly(totals.creditKopecks, sums.creditKopecks),
      debitKopecks: addExactly(totals.debitKopecks, sums.debitKopecks),
    };
  }
  return totals;
}

function addExactly(a: number, b: number): number {
  const total = addKopecks(a, b);
  if (total === null) throw new RangeError("operation totals beyond 2^53 kopecks");
  return total;
}

/**
 * With a counterparty, its index serves both the filter and the order; left to itself the
 * planner prefers the date index for the ORDER BY and scans the whole period.
 */
function fromOperations(f: TotalsFilter): string {
  return `operations o ${f.counterpartyInn !== undefined ? "INDEXED BY operations_inn_idx" : ""}`;
}

/**
 * The account's operations after `after` that hold the words (rowids), a page of candidates at a
 * time in (doc_date, operation_id) order. Each page, the next `size(page)` candidates are checked
 * against the full-text index within their own rowids, in one statement: one lookup per block of
 * neighbouring rowids holding candidates (see RUN_BITS). No lookup's range spans another company's
 * statement, and none reads the whole index. A page gives at most `want()` matches, in order; it
 * is exact once the caller has what it wants or the candidates run out. Past the limits'
 * candidates or lookups it throws SearchBudgetExceeded.
 */
function* textMatches(
  port: SqlPort,
  f: TotalsFilter & { words: string[] },
  after: OperationFilter["after"],
  limits: SearchLimits,
  size: (page: number) => number,
  want: () => number,
): Generator<number[]> {
  const from = fromOperations(f);
  const cut = f.words.some((w) => ftsWord(w) !== w);
  let read = 0;
  let lookups = 0;
  let next = after;
  for (let page = 0; ; page++) {
    const n = Math.min(limits.candidateRows - read, SQLITE_PAGE_MAX, size(page));
    // A word cut to the longest indexed prefix matches more than it says: every match of the
    // page is then checked against the whole word.
    const step = textPage(port, f, from, next, Math.max(n, 1), cut ? Math.max(n, 1) : want());
    if (n <= 0) {
      if (step.read === 0) return;
      throw new SearchBudgetExceeded(`more than ${limits.candidateRows} operations to check`);
    }
    read += step.read;
    lookups += step.lookups;
    if (lookups > limits.textLookups) {
      throw new SearchBudgetExceeded(`more than ${limits.textLookups} full-text lookups`);
    }
    const matched = JSON.parse(step.found) as number[];
    yield cut ? wholeWords(port, matched, f.words) : matched;
    if (step.read < n || step.last_date === null) return;
    next = { doc_date: step.last_date, operation_id: step.last_id! };
  }
}

/**
 * The operations among `ids` (kept in their order) whose text holds every word whole: each word's
 * folded parts as a phrase in one column, the last one a prefix, as the full-text index matches
 * them (folded and split as svc_words does, which over the characters it covers is FTS5's own).
 */
function wholeWords(port: SqlPort, ids: number[], words: string[]): number[] {
  if (ids.length === 0) return [];
  const texts = new Map(
    port
      .prepare<{ id: number; purpose: string; payer_name: string; payee_name: string; doc_number: string }>(
        `SELECT id, purpose, payer_name, payee_name, doc_number FROM operations
          WHERE id IN (${ids.map(() => "?").join(",")})`,
      )
      .all(...ids)
      .map((r) => [r.id, [r.purpose, r.payer_name, r.payee_name, r.doc_number]] as const),
  );
  const phrases = words.map(foldedWords).filter((parts) => parts.length > 0);
  return ids.filter((id) => {
    const columns = texts.get(id) ?? [];
    // Each column folded only when a word is looked for in it: the first often holds every word,
    // and folding is most of the check's time (a totals query checks every match of the period).
    const folded: string[][] = [];
    const tokens = (i: number) => (folded[i] ??= foldedWords(columns[i]!));
    return phrases.every((parts) => columns.some((_, i) => holdsPhrase(tokens(i), parts)));
  });
}

/**
 * One page of a text search on SQLite: the next `size` candidates of the account after `after`,
 * cut into blocks of neighbouring rowids, each block looked up in the full-text index within its
 * own range; the first `need` candidates that match, in order (a JSON array of ids), how many
 * candidates and lookups it took, and the last candidate's key.
 */
function textPage(
  port: SqlPort,
  f: TotalsFilter & { words: string[] },
  from: string,
  after: OperationFilter["after"],
  size: number,
  need: number,
): TextPage {
  const q = candidateFilter(f, after);
  return port
    .prepare<TextPage, (string | number)[]>(
      `WITH c AS MATERIALIZED (
         SELECT o.id, o.doc_date, o.operation_id FROM ${from} WHERE ${q.where.join(" AND ")}
          ORDER BY o.doc_date, o.operation_id LIMIT ?),
       runs AS MATERIALIZED (
         SELECT min(id) AS lo, max(id) AS hi FROM c GROUP BY id >> ${RUN_BITS}),
       hits AS MATERIALIZED (
         SELECT f.rowid AS id FROM runs CROSS JOIN operations_fts f
          WHERE f.operations_fts MATCH ? AND f.rowid BETWEEN runs.lo AND runs.hi)
       SELECT (SELECT count(*) FROM c) AS read,
              (SELECT count(*) FROM runs) AS lookups,
              (SELECT json_group_array(id) FROM (
                 SELECT c.id FROM c WHERE c.id IN hits ORDER BY c.doc_date, c.operation_id LIMIT ?)) AS found,
              (SELECT doc_date FROM c ORDER BY doc_date DESC, operation_id DESC LIMIT 1) AS last_date,
              (SELECT operation_id FROM c ORDER BY doc_date DESC, operation_id DESC LIMIT 1) AS last_id`,
    )
    .get(...q.params, size, ftsQuery(f.words), need)!;
}

interface TextPage {
  read: number;
  lookups: number;
  /** JSON array of operation ids (rowids). */
  found: string;
  last_date: string | null;
  last_id: string | null;
}

/**
 * The filter's conditions but the text, over `operations o`, after the key `after` if given. The
 * key is a row value and replaces the period's start, so that the index is entered at the key
 * (beside the period's start, or as an OR, SQLite enters it at the period's start and reads every
 * earlier page again).
 */
function candidateFilter(
  f: TotalsFilter,
  after: OperationFilter["after"],
): { where: string[]; params: (string | number)[] } {
  const where = ["o.bank_account_id = ?", "o.doc_date <= ?"];
  const params: (string | number)[] = [f.bankAccountId, f.dateTo];
  if (after && after.doc_date >= f.dateFrom) {
    where.push("(o.doc_date, o.operation_id) > (?, ?)");
    params.push(after.doc_date, after.operation_id);
  } else {
    where.push("o.doc_date >= ?");
    params.push(f.dateFrom);
  }
  if (f.amountMinKopecks !== undefined) {
    where.push("o.amount >= ?");
    params.push(f.amountMinKopecks);
  }
  if (f.amountMaxKopecks !== undefined) {
    where.push("o.amount <= ?");
    params.push(f.amountMaxKopecks);
  }
  if (f.counterpartyInn !== undefined) {
    where.push("o.counterparty_inn = ?");
    params.push(f.counterpartyInn);
  }
  if (f.direction !== undefined) {
    where.push("o.direction = ?");
    params.push(f.direction);
  }
  return { where, params };
}

/** Candidates per page: the page size times these, then SQLITE_PAGE_MAX. */
const PAGE_GROWTH = [4, 40];
const SQLITE_PAGE_MAX = 4096;
/**
 * The page's candidates are looked up in the full-text index per block of 2^RUN_BITS rowids (from
 * the block's first candidate to its last): a lookup reads at most 255 rows that are not the
 * page's candidates, however the account's operations lie among other companies' (one account's
 * statement is stored in one go, so a page is a few blocks).
 */
const RUN_BITS = 8;

/**
 * Search words as an FTS5 query: each word becomes a quoted string token (inner quotes doubled),
 * so no FTS5 operator or column filter can come from the user, with a prefix star; words are ANDed.
 * A word whose last part is longer than the longest prefix index is cut to it (see `ftsWord`).
 */
export function ftsQuery(words: string[]): string {
  return words.map((w) => `"${ftsWord(w).replaceAll('"', '""')}"*`).join(" ");
}

/** The longest prefix the full-text index holds an index of (migration 0004: prefix='2 … 8'). */
const FTS_PREFIX_MAX = 8;

/**
 * A search word as the full-text index can look it up within a rowid range: a prefix longer than
 * any prefix index is a term FTS5 answers by merging every matching term's entries in the whole
 * index, whatever range is asked, so the word's last part is cut to FTS_PREFIX_MAX characters (the
 * matches are then checked against the whole word, see `wholeWords`).
 */
function ftsWord(word: string): string {
  const last = [...word.matchAll(WORD_PART)].pop();
  if (!last) return word;
  let counted = 0;
  let end = last.index;
  for (const ch of last[0]) {
    if (!/\p{M}/u.test(ch) && ++counted > FTS_PREFIX_MAX) return word.slice(0, end);
    end += ch.length;
  }
  return word;
}

/** Whether `tokens` hold `parts` in a row, the last part as a prefix. */
function holdsPhrase(tokens: string[], parts: string[]): boolean {
  const n = parts.length;
  for (let i = 0; i + n <= tokens.length; i++) {
    let k = 0;
    while (k < n - 1 && tokens[i + k] === parts[k]) k++;
    if (k === n - 1 && tokens[i + k]!.startsWith(parts[k]!)) return true;
  }
  return false;
}
