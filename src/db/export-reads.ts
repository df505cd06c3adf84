// The store's export reads slot: what a statement export reads, written once per dialect
// (sqlite/export-reads.ts lays out json and 1C documents in SQL; pg/export-reads.ts reads rows for
// the writers), the same bytes from both. The server's thread has the store's (`exportReads`), an
// export thread its connection's (db/worker-connection.ts).
import type { StoredCsvValues } from "../formats/csv";
import type { OneCVersion, StatementOperation } from "../formats/types";
import { oneCDocumentSql } from "./sqlite/onec-sql";

/** The statement an export reads. */
export interface ExportedStatement {
  id: string;
  bank_account_id: string;
}

/** A statement with the document kinds kept when it became ready (JSON text, null: not kept). */
export interface ExportedStatementKinds {
  id: string;
  doc_types: string | null;
}

/** What the exports read, from either store: ExportQueries (sqlite/export-reads.ts) or
 *  PostgresExportQueries (pg/export-reads.ts). */
export interface ExportReads {
  /** The operations at these positions of a statement, in seq order. */
  operationsAt(statement: ExportedStatement, seqs: number[]): { seq: number; op: StatementOperation }[];
  /** A statement's operations after `afterSeq` through `lastSeq` as stored csv values
   *  (CSV_COLUMNS order, amount in kopecks, then operation_id). */
  operationsCsvPage(
    statement: ExportedStatement,
    afterSeq: number,
    lastSeq: number,
  ): { seq: number; values: StoredCsvValues }[];
  /** A statement's operations after `afterSeq` through `lastSeq` as 1C documents laid out by the
   *  database; `document` is null for a row the field writer must write. */
  operationsOneCPage(
    statement: ExportedStatement,
    version: OneCVersion,
    afterSeq: number,
    lastSeq: number,
  ): { seq: number; document: string | null }[];
  /** A statement's operations after `afterSeq` through `lastSeq` as json export objects (JSON text,
   *  byte for byte `operationJson`'s). */
  operationsJsonPage(
    statement: ExportedStatement,
    afterSeq: number,
    lastSeq: number,
  ): { seq: number; json: string }[];
  /** The document kinds among a ready statement's operations, in DOC_TYPES order. */
  docTypes(statement: ExportedStatementKinds): string[];
}

/** Lines in each 1C document the SQLite export lays out (the encoder checks a document by them). */
export function laidOutDocumentLines(version: OneCVersion): number {
  return oneCDocumentSql(version).lines;
}
