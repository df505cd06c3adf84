// Statement exports as streams: operations are read page by page and written chunk by chunk, so
// memory does not grow with the size of a statement. Pages are rendered in this thread, or, for a
// large statement, by worker threads with their own read-only connections (threads.ts).
import { type ExportedStatement, type ExportReads, laidOutDocumentLines } from "../../db/export-reads";
import { csvHeader, csvLinesFromStored } from "../../formats/csv";
import {
  encodeCp1251,
  OneCDocumentEncoder,
  oneCStatementFooter,
  oneCStatementHeader,
} from "../../formats/onec";
import type { DocType, OneCVersion } from "../../formats/types";
import type { StatementRow } from "../queries";
import { exportCollections } from "./collections";

export type ExportFormat = "1c" | "csv" | "json";

// Rows per page. Smaller pages leave less short-lived garbage between collections: at 1000 the
// peak RSS of a 155k-operation export was ~30 MB higher for no gain in speed.
const PAGE = 250;
// An export this large leaves tens of megabytes of garbage (the rows read, the chunks sent) that
// the collector would keep for a while: a full collection after it gives the memory back
// (measured: the server's RSS after a 155k-operation export 135-175 MB without it, about 90 MB
// with it), paced so that exports one after another do not stall the server (collections.ts).
const COLLECT_AFTER_BYTES = 16 * 1024 * 1024;
const utf8 = new TextEncoder();
const EMPTY = new Uint8Array(0);

export interface ExportFile {
  filename: string;
  contentType: string;
  body: ReadableStream<Uint8Array>;
}

/** What a page renderer needs: plain data, so that it can be posted to a worker thread. */
export interface ExportJob {
  statement: ExportedStatement;
  format: ExportFormat;
  version: OneCVersion;
  /** csv: the operation_id column after the specification's 12. */
  operationId?: boolean;
}

/** The bytes of page `n` of a statement: the operations at seq n*PAGE+1 … (n+1)*PAGE, in order
 *  (an empty array when it holds none). */
export type PageRenderer = (n: number) => Uint8Array;

/** Where pages come from, in order: `next` gives page 0, 1, … and null after the last. */
export interface PageSource {
  next(): Uint8Array | null | Promise<Uint8Array | null>;
  /** The reader has gone (or the stream failed): stop rendering and free what is held. */
  cancel(): void;
}

/** Pages of a statement of `operations` rows (seq 1 … operations after it became ready). */
function pageCount(operations: number): number {
  return Math.ceil(operations / PAGE);
}

export function pageRenderer(queries: ExportReads, job: ExportJob): PageRenderer {
  const { statement } = job;
  const range = (n: number) => [n * PAGE, (n + 1) * PAGE] as const;
  switch (job.format) {
    case "json":
      return (n) => {
        const rows = queries.operationsJsonPage(statement, ...range(n));
        return rows.length === 0 ? EMPTY : utf8.encode(rows.map((r) => r.json).join(","));
      };
    case "csv":
      return (n) => {
        const rows = queries.operationsCsvPage(statement, ...range(n));
        return rows.length === 0
          ? EMPTY
          : utf8.encode(
              csvLinesFromStored(
                rows.map((r) => r.values),
                job.operationId === true,
              ),
            );
      };
    case "1c": {
      const encoder = new OneCDocumentEncoder(job.version);
      const lines = laidOutDocumentLines(job.version);
      return (n) => {
        // Documents SQLite could not lay out (null, or a line break inside a value) are left to
        // the field writer, which writes such values its own way and throws on what it refuses;
        // their operations are read afterwards, in one query.
        const late: number[] = [];
        for (const r of queries.operationsOneCPage(statement, job.version, ...range(n))) {
          if (r.document !== null && encoder.laidOut(r.document, lines)) continue;
          encoder.keepPlace();
          late.push(r.seq);
        }
        if (late.length === 0) return encoder.take();
        return encoder.takeWith(queries.operationsAt(statement, late).map((r) => r.op));
      };
    }
  }
}

/**
 * Pages rendered here, one per pull of the stream. Before each page after the first, the requests
 * waiting meanwhile are answered: a download the client takes as fast as it is written would
 * otherwise pull every page at once and hold this thread to its end.
 */
function renderedHere(render: PageRenderer, pages: number): PageSource {
  let n = 0;
  return {
    next: async () => {
      if (n > 0 && n < pages) await new Promise((resolve) => setImmediate(resolve));
      return n < pages ? render(n++) : null;
    },
    cancel: () => {
      n = pages;
    },
  };
}

/** The page source as the download sees it: failures reported, page sizes counted. */
function observed(
  source: PageSource,
  onFailure?: (error: unknown) => void,
  onBytes?: (bytes: number) => void,
): PageSource {
  if (!onFailure && !onBytes) return source;
  return {
    next: async () => {
      try {
        const page = await source.next();
        if (page && onBytes) onBytes(page.byteLength);
        return page;
      } catch (error) {
        onFailure?.(error);
        throw error;
      }
    },
    cancel: () => source.cancel(),
  };
}

/** Head, the pages (json: comma-separated), tail. */
function exportStream(
  source: PageSource,
  head: () => string | Uint8Array,
  tail: () => string | Uint8Array,
  separator: string | null,
): ReadableStream<Uint8Array> {
  let started = false;
  let written = false; // a non-empty page went out (json needs a comma before the next)
  let sent = 0;
  const bytes = (chunk: string | Uint8Array) => {
    const out = typeof chunk === "string" ? utf8.encode(chunk) : chunk;
    sent += out.byteLength;
    return out;
  };
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (!started) {
        started = true;
        controller.enqueue(bytes(head()));
        return;
      }
      let page: Uint8Array | null;
      try {
        // Empty pages (none in a ready statement, whose seqs run 1 … count) are skipped.
        do page = await source.next();
        while (page !== null && page.byteLength === 0);
      } catch (error) {
        source.cancel();
        throw error;
      }
      if (page === null) {
        controller.enqueue(bytes(tail()));
        controller.close();
        if (sent >= COLLECT_AFTER_BYTES) exportCollections.exportEnded();
        return;
      }
      if (written && separator !== null) controller.enqueue(bytes(separator));
      written = true;
      controller.enqueue(bytes(page));
    },
    cancel() {
      source.cancel();
    },
  });
}

/** Where the pages of an export come from other than this thread (threads.ts); null: here. */
export type PageSourceFactory = (job: ExportJob, pages: number, operations: number) => PageSource | null;

export function exportStatement(
  queries: ExportReads,
  statement: StatementRow,
  account: { accountNumber: string; alias: string },
  format: ExportFormat,
  opts: {
    version: OneCVersion;
    created: { date: string; time: string };
    pages?: PageSourceFactory;
    /** A page could not be rendered: the download ends early (its status line went out already). */
    onFailure?: (error: unknown) => void;
    /** Bytes of each page as it goes out (for the export metrics). */
    onBytes?: (bytes: number) => void;
    /** csv: start with the UTF-8 byte order mark (Excel in a Russian locale reads the file as cp1251 without it). */
    bom?: boolean;
    /** csv: add the operation_id column (to merge overlapping statements). */
    operationId?: boolean;
  },
): ExportFile {
  const base = `stmt_${account.alias}_${statement.date_from}_${statement.date_to}`;
  const job: ExportJob = {
    statement: { id: statement.id, bank_account_id: statement.bank_account_id },
    format,
    version: opts.version,
    operationId: opts.operationId === true,
  };
  const operations = statement.operations_count ?? 0;
  const pages = pageCount(operations);
  const source = observed(
    opts.pages?.(job, pages, operations) ?? renderedHere(pageRenderer(queries, job), pages),
    opts.onFailure,
    opts.onBytes,
  );
  switch (format) {
    case "json":
      return {
        filename: `${base}.json`,
        contentType: "application/json; charset=utf-8",
        body: exportStream(
          source,
          () =>
            `{"statement_id":${JSON.stringify(statement.id)},"bank_account_id":${JSON.stringify(statement.bank_account_id)},` +
            `"period_from":${JSON.stringify(statement.date_from)},"period_to":${JSON.stringify(statement.date_to)},"operations":[`,
          () => "]}",
          ",",
        ),
      };
    case "csv":
      return {
        filename: `${base}.csv`,
        contentType: "text/csv; charset=utf-8",
        body: exportStream(
          source,
          () => `${opts.bom ? "\uFEFF" : ""}${csvHeader(opts.operationId === true)}`,
          () => "",
          null,
        ),
      };
    case "1c":
      return {
        // The default version keeps the name decisions §5 gives; 1.02 says so, so the two differ.
        filename: opts.version === "1.02" ? `${base}_1.02.txt` : `${base}.txt`,
        contentType: "text/plain; charset=windows-1251",
        body: exportStream(
          source,
          () =>
            encodeCp1251(
              oneCStatementHeader({
                version: opts.version,
                sender: "svc",
                created: opts.created,
                dateFrom: statement.date_from,
                dateTo: statement.date_to,
                accountNumber: account.accountNumber,
                docTypes: queries.docTypes(statement) as DocType[],
                openingBalance: statement.opening_balance ?? 0,
                totalCredit: statement.total_credit ?? 0,
                totalDebit: statement.total_debit ?? 0,
                closingBalance: statement.closing_balance ?? 0,
              }),
            ),
          () => encodeCp1251(oneCStatementFooter()),
          null,
        ),
      };
  }
}
