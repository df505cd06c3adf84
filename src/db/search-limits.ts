// What one search over operations may cost, on either store, and the error of one that would cost
// more. The server answers every request on one thread: a search that reads without end stalls
// every other caller, so each is given a budget and stops when it is spent (the agent tool then
// asks the model to narrow the query; it never answers a partial page as if it were complete).

export interface SearchLimits {
  /**
   * SQLite: the most operations of the account a text search reads as candidates (in pages, each
   * checked against the full-text index within the candidates' own rowids). bun:sqlite cannot
   * interrupt a statement, so the work is bounded instead of the time.
   */
  candidateRows: number;
  /** SQLite: the most full-text lookups of one search (one per block of 256 rowids holding candidates). */
  textLookups: number;
  /**
   * PostgreSQL: the time a search may take, in milliseconds: each of its statements runs with
   * `statement_timeout` set to what is left (SET LOCAL in the search's read-only transaction).
   */
  postgresMs: number;
}

export const SEARCH_LIMITS: SearchLimits = Object.freeze({
  candidateRows: 200_000,
  textLookups: 4_000,
  postgresMs: 1_000,
});

/** The search would cost more than its limits allow: narrow it (a shorter period, more filters). */
export class SearchBudgetExceeded extends Error {
  override name = "SearchBudgetExceeded";
  constructor(reason: string) {
    super(`search budget exceeded: ${reason}`);
  }
}
