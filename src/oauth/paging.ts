// The operator's lists of clients, requests and grants come newest first, in pages, with an opaque
// cursor: the position (key, id) of a page's last row.
import { validationError } from "../core/errors";
import type { PagePosition } from "./repository";

/** `limit` (1 to 500, 100 by default) and an opaque `cursor` from the previous page. */
export interface PageQuery {
  limit?: number;
  cursor?: string;
}

export function pageArgs(q: PageQuery): { limit: number; after?: PagePosition } {
  const limit = q.limit ?? 100;
  if (!Number.isInteger(limit) || limit < 1 || limit > 500)
    throw validationError("limit", "limit: от 1 до 500");
  if (q.cursor === undefined) return { limit };
  const after = decodeCursor(q.cursor);
  if (after === null) throw validationError("cursor", "Неверный курсор");
  return { limit, after };
}

export function pageOf<R, V, K extends string>(
  rows: R[],
  limit: number,
  position: (row: R) => PagePosition,
  name: K,
  view: (row: R) => V,
): Record<K, V[]> & { next_cursor: string | null } {
  const more = rows.length > limit;
  const page = more ? rows.slice(0, limit) : rows;
  const last = page[page.length - 1];
  return {
    [name]: page.map(view),
    next_cursor: more && last ? Buffer.from(JSON.stringify(position(last))).toString("base64url") : null,
  } as Record<K, V[]> & { next_cursor: string | null };
}

function decodeCursor(cursor: string): PagePosition | null {
  try {
    const v = JSON.parse(Buffer.from(cursor, "base64url").toString()) as Partial<PagePosition>;
    const keyOk = typeof v.key === "string" || (typeof v.key === "number" && Number.isSafeInteger(v.key));
    return keyOk && typeof v.id === "string" ? { key: v.key!, id: v.id } : null;
  } catch {
    return null;
  }
}
