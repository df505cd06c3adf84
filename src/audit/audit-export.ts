// The audit log as a file: JSON Lines or CSV, between two instants, oldest first. Rows are read
// one at a time (`iterate`) and written in chunks, so memory does not grow with the log.
import { csvFormatRow } from "d3-dsv";
import type { SqlPort } from "../db/sql-port";
import { csvTextCell } from "../formats/csv";
import { AUDIT_COLUMNS } from "./columns";

export type AuditExportFormat = "jsonl" | "csv";

const COLUMNS = ["id", ...AUDIT_COLUMNS] as const;

type Row = Record<(typeof COLUMNS)[number], string | number | null>;

const PAGE_ROWS = 1000;

/**
 * Lines of the export (`since` inclusive, `until` exclusive, ISO 8601), a page of rows per chunk.
 * Each page is its own short query (keyset on at, id): no statement stays open between chunks,
 * so writers are never held up and entries written during a long download are not chased.
 */
export function* auditExportChunks(
  port: SqlPort,
  range: { since?: string; until?: string },
  format: AuditExportFormat,
): Generator<string> {
  const page = port.prepare<Row, [string, string, string, string, number]>(
    `SELECT ${COLUMNS.join(", ")} FROM audit_log
      WHERE at >= ? AND at < ? AND (at > ? OR (at = ? AND id > ?))
      ORDER BY at, id LIMIT ${PAGE_ROWS}`,
  );
  // Stored instants are full ISO 8601 UTC (…T09:00:00.000Z): bounds are compared in that form.
  const since = range.since === undefined ? "" : new Date(range.since).toISOString();
  const until = range.until === undefined ? "9999" : new Date(range.until).toISOString();
  if (format === "csv") yield `${COLUMNS.join(",")}\r\n`;
  let after = { at: "", id: 0 };
  for (;;) {
    const rows = page.all(since, until, after.at, after.at, after.id);
    if (rows.length === 0) return;
    yield rows.map(format === "csv" ? csvLine : jsonLine).join("");
    const last = rows[rows.length - 1] as Row;
    after = { at: String(last.at), id: Number(last.id) };
    if (rows.length < PAGE_ROWS) return;
  }
}

function jsonLine(row: Row): string {
  const args = row.arguments === null ? null : JSON.parse(String(row.arguments));
  return `${JSON.stringify({ ...row, arguments: args })}\n`;
}

/** The columns that are numbers in the CSV; every other one is a text cell (decisions §20). */
const NUMBER_COLUMNS: ReadonlySet<string> = new Set(["id", "duration_ms"]);

function csvLine(row: Row): string {
  const cells = COLUMNS.map((c) => {
    const value = row[c];
    if (value === null) return "";
    return NUMBER_COLUMNS.has(c) ? String(value) : csvTextCell(String(value));
  });
  return `${csvFormatRow(cells)}\r\n`;
}

/** Whether `value` is an instant the export can take (a date, or a date and time). */
export function isInstant(value: string): boolean {
  return (
    /^\d{4}-\d{2}-\d{2}([T ][\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.test(value) && !Number.isNaN(Date.parse(value))
  );
}

/** The same chunks as a byte stream, for an HTTP download. */
export function auditExportStream(
  port: SqlPort,
  range: { since?: string; until?: string },
  format: AuditExportFormat,
): ReadableStream<Uint8Array> {
  const chunks = auditExportChunks(port, range, format);
  const encoder = new TextEncoder();
  return new ReadableStream({
    pull(controller) {
      const next = chunks.next();
      if (next.done) controller.close();
      else controller.enqueue(encoder.encode(next.value));
    },
    cancel() {
      chunks.return(undefined);
    },
  });
}
