// What search_operations looks for, the same on either store: the filter and the words of a text
// query (cut as both indexes cut text, within the limits that keep a search cheap).

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

/** The filter over the whole asked period, no page of it: what search_operations' totals sum. */
export type TotalsFilter = Omit<OperationFilter, "after" | "limit">;

/** The fewest letters or digits a searched part of a word has (see `searchWords`). */
export const SEARCH_MIN_CHARS = 2;
/** The most words one search looks for. */
export const SEARCH_MAX_WORDS = 8;

/** Why `searchWords` found nothing to search. */
export type SearchWordsRefusal = { refused: "no_words" } | { refused: "too_many_words"; words: number };

/** A word's parts as the indexes cut it: runs of letters and digits (combining marks kept in them). */
export const WORD_PART = /[\p{L}\p{N}\p{Co}][\p{L}\p{N}\p{M}\p{Co}]*/gu;

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
    for (const part of word.matchAll(WORD_PART)) {
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
