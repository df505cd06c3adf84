// Statement CSV export: UTF-8, "," delimiter, RFC 4180 quoting, CRLF records, header row.
// Header and rows are separate calls so a caller can stream rows in chunks.

import { stringify } from "csv-stringify/sync";
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

const STRINGIFY_OPTIONS = {
  delimiter: ",",
  record_delimiter: "\r\n",
  // With a custom record delimiter csv-stringify stops quoting bare "\n"/"\r" unless asked to.
  quote_record_delimiter: true,
} as const;

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
  return stringify([[...CSV_COLUMNS]], STRINGIFY_OPTIONS);
}

/** A chunk of CRLF-terminated records; an empty input gives "". */
export function csvRows(ops: Iterable<StatementOperation>): string {
  const records: string[][] = [];
  for (const op of ops) records.push(csvRecord(op));
  return records.length === 0 ? "" : stringify(records, STRINGIFY_OPTIONS);
}
