// Statement exports as streams: operations are read page by page and written chunk by chunk, so
// memory does not grow with the size of a statement.
import { csvHeader, csvLinesFromStored } from "../formats/csv";
import { kopecksToJsonNumber } from "../formats/money";
import { encodeCp1251, OneCDocumentEncoder, oneCStatementFooter, oneCStatementHeader } from "../formats/onec";
import type { DocType, OneCVersion, StatementOperation } from "../formats/types";
import { oneCDocumentSql } from "./onec-sql";
import type { StatementRepository, StatementRow } from "./repository";

export type ExportFormat = "1c" | "csv" | "json";

// Rows per chunk. Smaller chunks leave less short-lived garbage between collections: at 1000 the
// peak RSS of a 155k-operation export was ~30 MB higher for no gain in speed.
const PAGE = 250;
// An export this large leaves tens of megabytes of garbage (the rows read, the chunks sent) that
// the collector would keep for a while: one full collection at its end, a few milliseconds, gives
// the memory back (measured: the server's RSS after a 155k-operation export 135-175 MB without it,
// about 90 MB with it).
const COLLECT_AFTER_BYTES = 16 * 1024 * 1024;
const encoder = new TextEncoder();

export interface ExportFile {
  filename: string;
  contentType: string;
  body: ReadableStream<Uint8Array>;
}

/** An operation as the json export shows it: amounts as numbers, account numbers in clear. The
 *  export builds the same objects in SQL (`operationsJsonPage`); this is their definition in code,
 *  and a test holds the two equal. */
export function operationJson(op: StatementOperation) {
  return {
    operation_id: op.operation_id,
    direction: op.direction,
    doc_type: op.doc_type,
    doc_number: op.doc_number,
    doc_date: op.doc_date,
    amount: kopecksToJsonNumber(op.amount),
    currency: op.currency,
    purpose: op.purpose,
    payer: { ...op.payer },
    payee: { ...op.payee },
  };
}

/** Head, then one chunk per page of rows fetched after the last seq seen, then tail. */
function pagedStream<R extends { seq: number }>(
  fetchPage: (afterSeq: number) => R[],
  head: () => string | Uint8Array,
  page: (rows: R[], first: boolean) => string | Uint8Array,
  tail: () => string | Uint8Array,
): ReadableStream<Uint8Array> {
  let afterSeq = 0;
  let started = false;
  let done = false;
  let sent = 0;
  const bytes = (chunk: string | Uint8Array) => {
    const out = typeof chunk === "string" ? encoder.encode(chunk) : chunk;
    sent += out.byteLength;
    return out;
  };
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (done) return;
      if (!started) {
        started = true;
        controller.enqueue(bytes(head()));
        return;
      }
      const rows = fetchPage(afterSeq);
      if (rows.length > 0) {
        controller.enqueue(bytes(page(rows, afterSeq === 0)));
        afterSeq = rows[rows.length - 1]!.seq;
      }
      if (rows.length < PAGE) {
        controller.enqueue(bytes(tail()));
        controller.close();
        done = true;
        if (sent >= COLLECT_AFTER_BYTES) Bun.gc(true);
      }
    },
  });
}

export function exportStatement(
  repo: StatementRepository,
  statement: StatementRow,
  account: { accountNumber: string; alias: string },
  format: ExportFormat,
  opts: { version: OneCVersion; created: { date: string; time: string } },
): ExportFile {
  const base = `stmt_${account.alias}_${statement.date_from}_${statement.date_to}`;
  switch (format) {
    case "json":
      return {
        filename: `${base}.json`,
        contentType: "application/json; charset=utf-8",
        body: pagedStream(
          (after) => repo.operationsJsonPage(statement, after, PAGE),
          () =>
            `{"statement_id":${JSON.stringify(statement.id)},"bank_account_id":${JSON.stringify(statement.bank_account_id)},` +
            `"period_from":${JSON.stringify(statement.date_from)},"period_to":${JSON.stringify(statement.date_to)},"operations":[`,
          (rows, first) => (first ? "" : ",") + rows.map((r) => r.json).join(","),
          () => "]}",
        ),
      };
    case "csv":
      return {
        filename: `${base}.csv`,
        contentType: "text/csv; charset=utf-8",
        body: pagedStream(
          (after) => repo.operationsCsvPage(statement, after, PAGE),
          csvHeader,
          (rows) => csvLinesFromStored(rows.map((r) => r.values)),
          () => "",
        ),
      };
    case "1c": {
      const encoder = new OneCDocumentEncoder(opts.version);
      const { lines } = oneCDocumentSql(opts.version);
      return {
        filename: `${base}.txt`,
        contentType: "text/plain; charset=windows-1251",
        body: pagedStream(
          (after) => repo.operationsOneCPage(statement, opts.version, after, PAGE),
          () =>
            encodeCp1251(
              oneCStatementHeader({
                version: opts.version,
                sender: "svc",
                created: opts.created,
                dateFrom: statement.date_from,
                dateTo: statement.date_to,
                accountNumber: account.accountNumber,
                docTypes: repo.docTypes(statement) as DocType[],
                openingBalance: statement.opening_balance ?? 0,
                totalCredit: statement.total_credit ?? 0,
                totalDebit: statement.total_debit ?? 0,
                closingBalance: statement.closing_balance ?? 0,
              }),
            ),
          (rows) => {
            // Documents SQLite could not lay out (null, or a line break inside a value) are left
            // to the field writer, which writes such values its own way and throws on what it
            // refuses; their operations are read afterwards, in one query.
            const late: number[] = [];
            for (const r of rows) {
              if (r.document !== null && encoder.laidOut(r.document, lines)) continue;
              encoder.keepPlace();
              late.push(r.seq);
            }
            if (late.length === 0) return encoder.take();
            return encoder.takeWith(repo.operationsAt(statement, late).map((r) => r.op));
          },
          () => encodeCp1251(oneCStatementFooter()),
        ),
      };
    }
  }
}
