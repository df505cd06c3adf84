// One page of the audit log for the admin API, the admin pages and `svc admin audit`: the filters
// checked, newest first, and an opaque cursor to the next page (the id the page stopped before).
import { validationError } from "../core/errors";
import type { AuditEntry, AuditLog } from "./audit-log";

export interface AuditPageQuery {
  api_token_id?: string;
  action?: string;
  since?: string;
  until?: string;
  limit?: number;
  cursor?: string;
}

export function auditLogPage(
  log: AuditLog,
  q: AuditPageQuery,
): { entries: AuditEntry[]; next_cursor: string | null } {
  const limit = q.limit ?? 100;
  if (!Number.isInteger(limit) || limit < 1 || limit > 500)
    throw validationError("limit", "limit: от 1 до 500");
  for (const field of ["since", "until"] as const) {
    const v = q[field];
    if (v !== undefined && Number.isNaN(Date.parse(v)))
      throw validationError(field, `${field}: ожидается ISO 8601`);
  }
  let beforeId: number | undefined;
  if (q.cursor !== undefined) {
    const decoded = decodeCursor(q.cursor);
    if (decoded === null) throw validationError("cursor", "Неверный курсор");
    beforeId = decoded;
  }
  const entries = log.query({
    apiTokenId: q.api_token_id,
    action: q.action,
    since: q.since ? new Date(q.since).toISOString() : undefined,
    until: q.until ? new Date(q.until).toISOString() : undefined,
    limit: limit + 1,
    beforeId,
  });
  const more = entries.length > limit;
  const page = more ? entries.slice(0, limit) : entries;
  const last = page[page.length - 1];
  return { entries: page, next_cursor: more && last ? encodeCursor(last.id) : null };
}

function encodeCursor(id: number | string): string {
  return Buffer.from(`c:${id}`).toString("base64url");
}

function decodeCursor(cursor: string): number | null {
  const text = Buffer.from(cursor, "base64url").toString();
  const m = /^c:(\d{1,15})$/.exec(text);
  return m ? Number(m[1]) : null;
}
