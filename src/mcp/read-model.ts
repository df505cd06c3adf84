// What the agent tools read, and nothing else: plain SELECTs over a connection that the database
// itself refuses to write through (store.readPort). No method here writes; the connection could not.
import { searchOperations as searchOnPostgres } from "../db/pg/operations-search";
import { words as foldedWords } from "../db/pg/search-vector";
import type { RowCache } from "../db/row-cache";
import { SEARCH_LIMITS, SearchBudgetExceeded, type SearchLimits } from "../db/search-limits";
import type { SqlPort } from "../db/sql-port";
import type { StatementOperation } from "../formats/types";
import {
  type BalanceRow,
  OPERATION_COLUMNS,
  operationFromRow,
  type StatementListFilter,
  type StatementRow,
  statementListQuery,
} from "../statements/queries";

export interface CompanyRecord {
  company_id: string;
  name: string;
  inn: string;
  kpp: string | null;
}

export interface OperationFilter {
  bankAccountId: string;
  dateFrom: string;
  dateTo: string;
  amountMinKopecks?: number;
  amountMaxKopecks?: number;
  counterpartyInn?: string;
  direction?: "credit" | "debit";
  /** The words of the text looked for, as `searchWords` gives them (never empty). */
  words?: string[];
  after?: { doc_date: string; operation_id: string };
  limit: number;
}

type OperationRow = Parameters<typeof operationFromRow>[0];

export class McpReadModel {
  private readonly companyStmt;
  private readonly balanceStmt;
  private readonly statementStmt;
  private readonly statementOpsStmt;
  private readonly statementRangeStmt;

  /**
   * `balances`: kept in memory, shared with the repository that writes them (see `balance`);
   * without it (tests of the queries alone) every balance is read from the database.
   * `searchLimits`: what one search may cost (see SearchLimits).
   */
  constructor(
    readonly port: SqlPort,
    private readonly balances: RowCache<BalanceRow> | null = null,
    readonly searchLimits: SearchLimits = SEARCH_LIMITS,
  ) {
    this.companyStmt = port.prepare<CompanyRecord, [string]>(
      "SELECT id AS company_id, name, inn, kpp FROM companies WHERE id = ?",
    );
    this.balanceStmt = port.prepare<BalanceRow, [string]>(
      "SELECT balance, currency, as_of FROM balances WHERE bank_account_id = ?",
    );
    this.statementStmt = port.prepare<StatementRow, [string]>("SELECT * FROM statements WHERE id = ?");
    this.statementOpsStmt = port.prepare<OperationRow, [string, string, number]>(
      `SELECT ${OPERATION_COLUMNS}
         FROM statement_operations so
         JOIN operations o ON o.bank_account_id = ? AND o.operation_id = so.operation_id
        WHERE so.statement_id = ?
        ORDER BY so.seq LIMIT ?`,
    );
    this.statementRangeStmt = port.prepare<{ first: string | null; last: string | null }, [string, string]>(
      `SELECT MIN(o.doc_date) AS first, MAX(o.doc_date) AS last
         FROM statement_operations so
         JOIN operations o ON o.bank_account_id = ? AND o.operation_id = so.operation_id
        WHERE so.statement_id = ?`,
    );
  }

  company(id: string): CompanyRecord | null {
    return this.companyStmt.get(id) ?? null;
  }

  /**
   * Every get_balance reads one, so balances are kept in memory: the statements repository
   * forgets one it writes, and another process's commit empties them all. Treat the result as
   * read-only.
   */
  balance(bankAccountId: string): BalanceRow | null {
    if (!this.balances) return this.balanceStmt.get(bankAccountId) ?? null;
    return this.balances.get(bankAccountId, () => this.balanceStmt.get(bankAccountId) ?? null);
  }

  statement(id: string): StatementRow | null {
    return this.statementStmt.get(id) ?? null;
  }

  /** Statements of the accounts, every source, newest first; keyset paging on (created_at, id). */
  statements(q: StatementListFilter & { bankAccountIds: string[] }): StatementRow[] {
    const query = statementListQuery(q);
    return query ? this.port.prepare<StatementRow, (string | number)[]>(query.sql).all(...query.params) : [];
  }

  /** The first `limit` operations of a statement, in the bank's order. */
  statementOperations(
    statement: Pick<StatementRow, "id" | "bank_account_id">,
    limit: number,
  ): StatementOperation[] {
    return this.statementOpsStmt.all(statement.bank_account_id, statement.id, limit).map(operationFromRow);
  }

  statementDateRange(statement: Pick<StatementRow, "id" | "bank_account_id">): {
    first: string | null;
    last: string | null;
  } {
    return (
      this.statementRangeStmt.get(statement.bank_account_id, statement.id) ?? { first: null, last: null }
    );
  }

  /**
   * Stored operations of one account (never the bank), ordered by (doc_date, operation_id).
   * Operations are unique per (account, operation_id), so one held by two overlapping statements
   * comes back once. Served by operations_date_idx / operations_inn_idx / operations_amount_idx
   * and the full-text index on SQLite; on PostgreSQL by its own (pg/operations-search.ts).
   */
  searchOperations(f: OperationFilter): StatementOperation[] {
    if (this.port.dialect === "postgres") {
      return searchOnPostgres(this.port, f, undefined, this.searchLimits.postgresMs);
    }
    const base = candidateFilter(f, f.after);
    // With a counterparty, its index serves both the filter and the order; left to itself the
    // planner prefers the date index for the ORDER BY and scans the whole period.
    const from = `operations o ${f.counterpartyInn !== undefined ? "INDEXED BY operations_inn_idx" : ""}`;
    const order = "ORDER BY o.doc_date, o.operation_id";
    const run = (sql: string, p: (string | number)[]) =>
      this.port
        .prepare<OperationRow, (string | number)[]>(sql)
        .all(...p)
        .map(operationFromRow);
    if (f.words === undefined) {
      return run(
        `SELECT ${OPERATION_COLUMNS} FROM ${from} WHERE ${base.where.join(" AND ")} ${order} LIMIT ?`,
        [...base.params, f.limit],
      );
    }
    // Text. The account's candidates are read in order, in pages of growing size, and each page
    // is checked against the full-text index within its own rowids, in one statement: one lookup
    // per block of neighbouring rowids holding candidates (see RUN_BITS). No lookup's range spans
    // another company's statement, and none reads the whole index. The answer is exact once it fills the page or the candidates run
    // out; a search that would read more than its limits stops with SearchBudgetExceeded.
    const limits = this.searchLimits;
    const cut = f.words.some((w) => ftsWord(w) !== w);
    const found: number[] = [];
    let read = 0;
    let lookups = 0;
    let next = f.after;
    for (let page = 0; found.length < f.limit; page++) {
      const size = Math.min(
        limits.candidateRows - read,
        SQLITE_PAGE_MAX,
        f.limit * (PAGE_GROWTH[page] ?? SQLITE_PAGE_MAX),
      );
      // A word cut to the longest indexed prefix matches more than it says: every match of the
      // page is then checked against the whole word.
      const need = cut ? Math.max(size, 1) : f.limit - found.length;
      const step = this.textPage(f, from, next, Math.max(size, 1), need);
      if (size <= 0) {
        if (step.read === 0) break;
        throw new SearchBudgetExceeded(`more than ${limits.candidateRows} operations to check`);
      }
      read += step.read;
      lookups += step.lookups;
      if (lookups > limits.textLookups) {
        throw new SearchBudgetExceeded(`more than ${limits.textLookups} full-text lookups`);
      }
      const matched = JSON.parse(step.found) as number[];
      found.push(...(cut ? this.wholeWords(matched, f.words).slice(0, f.limit - found.length) : matched));
      if (step.read < size || step.last_date === null) break;
      next = { doc_date: step.last_date, operation_id: step.last_id! };
    }
    if (found.length === 0) return [];
    return run(
      `SELECT ${OPERATION_COLUMNS} FROM operations o WHERE o.id IN (${found.map(() => "?").join(",")}) ${order}`,
      found,
    );
  }

  /**
   * The operations among `ids` (kept in their order) whose text holds every word whole: each word's
   * folded parts as a phrase in one column, the last one a prefix, as the full-text index matches
   * them (folded and split as svc_words does, which over the characters it covers is FTS5's own).
   */
  private wholeWords(ids: number[], words: string[]): number[] {
    if (ids.length === 0) return [];
    const texts = new Map(
      this.port
        .prepare<{ id: number; purpose: string; payer_name: string; payee_name: string; doc_number: string }>(
          `SELECT id, purpose, payer_name, payee_name, doc_number FROM operations
            WHERE id IN (${ids.map(() => "?").join(",")})`,
        )
        .all(...ids)
        .map((r) => [r.id, [r.purpose, r.payer_name, r.payee_name, r.doc_number].map(foldedWords)] as const),
    );
    const phrases = words.map(foldedWords).filter((parts) => parts.length > 0);
    return ids.filter((id) => {
      const columns = texts.get(id) ?? [];
      return phrases.every((parts) => columns.some((tokens) => holdsPhrase(tokens, parts)));
    });
  }

  /**
   * One page of a text search on SQLite: the next `size` candidates of the account after `after`,
   * cut into blocks of neighbouring rowids, each block looked up in the full-text index within its
   * own range; the first `need` candidates that match, in order (a JSON array of ids), how many
   * candidates and lookups it took, and the last candidate's key.
   */
  private textPage(
    f: OperationFilter,
    from: string,
    after: OperationFilter["after"],
    size: number,
    need: number,
  ): TextPage {
    const q = candidateFilter(f, after);
    return this.port
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
      .get(...q.params, size, ftsQuery(f.words!), need)!;
  }
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
  f: OperationFilter,
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

/** The fewest letters or digits a searched part of a word has (see `searchWords`). */
export const SEARCH_MIN_CHARS = 2;
/** The most words one search looks for. */
export const SEARCH_MAX_WORDS = 8;

/** Why `searchWords` found nothing to search. */
export type SearchWordsRefusal = { refused: "no_words" } | { refused: "too_many_words"; words: number };

/** A word's parts as the indexes cut it: runs of letters and digits (combining marks kept in them). */
const PART = /[\p{L}\p{N}\p{Co}][\p{L}\p{N}\p{M}\p{Co}]*/gu;

/**
 * The words of free text a search looks for: split on white space, ё read as е. Each word matches
 * as a phrase of its parts (runs of letters and digits) whose last part is a prefix; a part of one
 * character at the end of a word is left out (a one-character prefix is a term no prefix index
 * holds: every word starting with that character, in every company's operations), so "№15/2" is
 * looked for as "№15", and a word with no part of SEARCH_MIN_CHARS characters ("1", "т.ч.", "-")
 * is left out entirely. Either the words (at most SEARCH_MAX_WORDS) or why there are none to search.
 * Each store folds and splits a word further the way its index does (FTS5 here, svc_words on
 * PostgreSQL); the words given to both are the same.
 */
export function searchWords(text: string): string[] | SearchWordsRefusal {
  const words: string[] = [];
  // The index holds ё as е (migration 0008): so does the query.
  for (const word of text.replaceAll("ё", "е").replaceAll("Ё", "Е").split(/\s+/u)) {
    let end = -1;
    for (const part of word.matchAll(PART)) {
      if ([...part[0].matchAll(/[\p{L}\p{N}\p{Co}]/gu)].length >= SEARCH_MIN_CHARS) {
        end = part.index + part[0].length;
      }
    }
    if (end > 0) words.push(word.slice(0, end));
  }
  if (words.length === 0) return { refused: "no_words" };
  if (words.length > SEARCH_MAX_WORDS) return { refused: "too_many_words", words: words.length };
  return words;
}

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
  const last = [...word.matchAll(PART)].pop();
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
