// Statement CSV export: UTF-8, "," delimiter, RFC 4180 quoting, CRLF records, header row.
// Header and rows are separate calls so a caller can stream rows in chunks. d3-dsv quotes each
// field (a value holding a comma, a double quote, CR or LF is quoted, inner quotes doubled);
// records end in CRLF, as RFC 4180 has them.

import { csvFormatRow } from "d3-dsv";
import { formatKopecks } from "./money";
import type { StatementOperation } from "./types";

export const CSV_COLUMNS = [
  "doc_date",
  "doc_number",
  "amount",
  "currency",
  "direction",
  "payer_inn",
  "payer_name",
  "payer_account",
  "payee_inn",
  "payee_name",
  "payee_account",
  "purpose",
] as const;

/** One CSV record's values in CSV_COLUMNS order. */
export function csvRecord(op: StatementOperation): string[] {
  return [
    op.doc_date,
    op.doc_number,
    formatKopecks(op.amount),
    op.currency,
    op.direction,
    op.payer.inn,
    op.payer.name,
    op.payer.account,
    op.payee.inn,
    op.payee.name,
    op.payee.account,
    op.purpose,
  ];
}

/** The header line, CRLF-terminated. */
export function csvHeader(): string {
  return `${csvFormatRow([...CSV_COLUMNS])}\r\n`;
}

/** A record's values as the database holds them: CSV_COLUMNS order, amount in kopecks. */
export type StoredCsvValues = (string | number)[];

/** CRLF-terminated records from stored values (the export's hot path: no object per row). The
 *  arrays are reused: their amounts are replaced by the formatted ones. */
export function csvLinesFromStored(rows: StoredCsvValues[]): string {
  let text = "";
  for (const values of rows) {
    values[2] = formatKopecks(values[2] as number);
    text += `${csvFormatRow(values as string[])}\r\n`;
  }
  return text;
}

/** A chunk of CRLF-terminated records; an empty input gives "". */
export function csvRows(ops: Iterable<StatementOperation>): string {
  let text = "";
  for (const op of ops) text += `${csvFormatRow(csvRecord(op))}\r\n`;
  return text;
}
