// search_operations on PostgreSQL: the same rows in the same order as McpReadModel.searchOperations
// on SQLite, served by the search column and functions of migrations-pg/0001_operations_search.sql.
import type { Sql } from "postgres";
import type { StatementOperation } from "../../formats/types";
import type { OperationFilter } from "../../mcp/read-model";
import { OPERATION_COLUMNS, type OperationDbRow, operationFromRow } from "../../statements/queries";

export interface PgOperationFilter extends Omit<OperationFilter, "match"> {
  /** The query's words as `searchWords` gives them (never empty); folded and split in SQL. */
  words?: string[];
}

/**
 * Text candidates read in (doc_date, operation_id) order before the index takes over: enough for
 * a word in one operation of forty to fill the page, few enough to cost about a millisecond.
 */
const ORDERED_WINDOW_PER_ROW = 40;

/** Stored operations of one account matching the filter, ordered by (doc_date, operation_id). */
export async function searchOperations(sql: Sql, f: PgOperationFilter): Promise<StatementOperation[]> {
  const columns = sql.unsafe(OPERATION_COLUMNS);
  // Everything but the period and the text; the period is added where an index should use it.
  const filters = sql`o.bank_account_id = ${f.bankAccountId}
    ${f.amountMinKopecks === undefined ? sql`` : sql`AND o.amount >= ${f.amountMinKopecks}`}
    ${f.amountMaxKopecks === undefined ? sql`` : sql`AND o.amount <= ${f.amountMaxKopecks}`}
    ${f.counterpartyInn === undefined ? sql`` : sql`AND o.counterparty_inn = ${f.counterpartyInn}`}
    ${f.direction === undefined ? sql`` : sql`AND o.direction = ${f.direction}`}`;
  const inPeriod = sql`AND o.doc_date >= ${f.dateFrom} AND o.doc_date <= ${f.dateTo}
    ${f.after ? sql`AND (o.doc_date, o.operation_id) > (${f.after.doc_date}, ${f.after.operation_id})` : sql``}`;
  const rows = (list: OperationDbRow[]) =>
    list.map((r) => operationFromRow({ ...r, amount: Number(r.amount) }));

  if (f.words === undefined) {
    return rows(
      await sql<OperationDbRow[]>`SELECT ${columns} FROM operations o WHERE ${filters} ${inPeriod}
        ORDER BY o.doc_date, o.operation_id LIMIT ${f.limit}`,
    );
  }
  // The query is made once per statement (an InitPlan), not per row, whatever plan is cached.
  const query = sql`(SELECT svc_search_query(${f.words}::text[]))`;
  // 1. The next candidates in order, each checked against `search`; a common word fills the page
  //    within the first few dozen rows and the scan stops there.
  const window = f.limit * ORDERED_WINDOW_PER_ROW;
  const found = rows(
    await sql<OperationDbRow[]>`SELECT ${columns} FROM (
        SELECT o.* FROM operations o WHERE ${filters} ${inPeriod}
         ORDER BY o.doc_date, o.operation_id LIMIT ${window}) o
      WHERE o.search @@ ${query}
      ORDER BY o.doc_date, o.operation_id LIMIT ${f.limit}`,
  );
  if (found.length === f.limit) return found;
  // 2. Short of a page: if the window held every candidate, that is the answer.
  const [edge] = await sql<{ doc_date: string; operation_id: string }[]>`
    SELECT o.doc_date, o.operation_id FROM operations o WHERE ${filters} ${inPeriod}
     ORDER BY o.doc_date, o.operation_id OFFSET ${window - 1} LIMIT 1`;
  if (!edge) return found;
  // 3. A rarer word: the rest of the period through the day-keyed GIN index, a few days at a time
  //    (1, 1, 2, 4, … days) so that a word found every day costs one day's matches, and one absent
  //    from the period costs a lookup per span. The period's bounds are hidden from the b-trees
  //    (|| '') so that the planner takes the GIN index, which holds only the asked days anyway.
  const days = daysFrom(edge.doc_date, f.dateTo);
  for (let start = 0, span = 1; start < days.length && found.length < f.limit; ) {
    const spanDays = days.slice(start, start + span);
    found.push(
      ...rows(
        await sql<OperationDbRow[]>`SELECT ${columns} FROM operations o
          WHERE svc_search_days(o.doc_date, o.search) @@ svc_search_days_query(${f.words}::text[], ${spanDays}::text[])
            AND o.search @@ ${query} AND ${filters}
            AND (o.doc_date || '', o.operation_id) > (${edge.doc_date}, ${edge.operation_id})
          ORDER BY o.doc_date, o.operation_id LIMIT ${f.limit - found.length}`,
      ),
    );
    start += span;
    if (start > 1) span *= 2;
  }
  return found;
}

/** Every date from `from` to `to` inclusive, as YYYY-MM-DD. */
function daysFrom(from: string, to: string): string[] {
  // Anything else in `to` would never compare below a date and the loop would not end.
  if (!/^\d{4}-\d{2}-\d{2}$/.test(to)) throw new Error(`not a date: ${to}`);
  const out: string[] = [];
  for (let d = new Date(`${from}T00:00:00Z`); ; d.setUTCDate(d.getUTCDate() + 1)) {
    const day = d.toISOString().slice(0, 10);
    if (day > to) return out;
    out.push(day);
  }
}
