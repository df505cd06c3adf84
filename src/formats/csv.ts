// Statement CSV export: UTF-8, "," delimiter, RFC 4180 quoting, CRLF records, header row.
// Header and rows are separate calls so a caller can stream rows in chunks. d3-dsv quotes each
// field (a value holding a comma, a double quote, CR or LF is quoted, inner quotes doubled);
// records end in CRLF, as RFC 4180 has them.
//
// Text cells that a spreadsheet would read as a formula (they begin with =, +, -, @, TAB or CR:
// "=HYPERLINK(...)" in a payment's purpose, written by whoever paid) are prefixed with ' (decisions
// §20), so Excel and LibreOffice show them as text. Numbers are not text cells: the statement's
// `amount` (and the audit log's numeric columns) stay numbers, a minus sign included.

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

/** The column a client asks for to merge overlapping statements (`operation_id=1`), after the
 *  specification's 12, which stay as they are. */
export const CSV_OPERATION_ID_COLUMN = "operation_id";

/** Where `amount` is in CSV_COLUMNS: the one column that is a number, every other one is text. */
const AMOUNT = CSV_COLUMNS.indexOf("amount");

/** The first characters of a cell that a spreadsheet takes for a formula: = + - @ TAB CR. */
function startsFormula(value: string): boolean {
  const c = value.charCodeAt(0);
  return c === 61 || c === 43 || c === 45 || c === 64 || c === 9 || c === 13;
}

/** A text cell as a spreadsheet must show it: one that would start a formula gets a leading '. */
export function csvTextCell(value: string): string {
  return startsFormula(value) ? `'${value}` : value;
}

/** One CSV record's values in CSV_COLUMNS order, text cells neutralised. */
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
  ].map((value, i) => (i === AMOUNT ? value : csvTextCell(value)));
}

/** The header line, CRLF-terminated; with `operationId`, the operation_id column last. */
export function csvHeader(operationId = false): string {
  const columns: string[] = [...CSV_COLUMNS];
  if (operationId) columns.push(CSV_OPERATION_ID_COLUMN);
  return `${csvFormatRow(columns)}\r\n`;
}

/** A record's values as the database holds them: CSV_COLUMNS order, amount in kopecks, then the
 *  operation's id. */
export type StoredCsvValues = (string | number)[];

/** CRLF-terminated records from stored values (the export's hot path: no object per row); the
 *  operation's id is written only with `operationId`. The arrays are reused: their amounts are
 *  replaced by the formatted ones. */
export function csvLinesFromStored(rows: StoredCsvValues[], operationId = false): string {
  let text = "";
  for (const values of rows) {
    if (!operationId) values.length = CSV_COLUMNS.length;
    for (let i = 0; i < values.length; i += 1) {
      const value = values[i];
      if (i === AMOUNT) values[i] = formatKopecks(value as number);
      else if (typeof value === "string" && startsFormula(value)) values[i] = `'${value}`;
    }
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

/** One operation as a CRLF-terminated record (the admin pages' download of a search). */
export function csvLine(op: StatementOperation): string {
  return `${csvFormatRow(csvRecord(op))}\r\n`;
}
