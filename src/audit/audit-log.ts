// The audit trail: who did what, when, with which outcome. Agent calls, admin changes and
// payment actions all land here; entries are never updated. Portable SQL on the stores' port.
import { batchInsert, byKeyRange } from "../db/dialect";
import type { SqlPort, SqlValue } from "../db/sql-port";
import { type AuditExportFormat, auditExportStream } from "./audit-export";
import { AUDIT_COLUMNS } from "./columns";

export interface AuditEntryInput {
  at: Date;
  actor: "token" | "admin" | "system";
  apiTokenId?: string | null;
  mcpSessionId?: string | null;
  action: string;
  tool?: string | null;
  target?: string | null;
  arguments?: unknown;
  outcome: string;
  durationMs?: number | null;
  requestId?: string | null;
  ip?: string | null;
  transport?: "http" | "stdio" | null;
  /** The agent protocol revision of the request (agent entries only). */
  protocolRevision?: string | null;
}

export interface AuditEntry {
  id: number;
  at: string;
  actor: string;
  api_token_id: string | null;
  mcp_session_id: string | null;
  action: string;
  tool: string | null;
  target: string | null;
  arguments: unknown;
  outcome: string;
  duration_ms: number | null;
  request_id: string | null;
  ip: string | null;
  transport: string | null;
  protocol_revision: string | null;
}

export interface AuditQuery {
  apiTokenId?: string;
  action?: string;
  since?: string;
  until?: string;
  limit: number;
  beforeId?: number;
}

const MAX_ARGUMENTS_BYTES = 2048;

/** Arguments as JSON, cut to 2 KB so that a large call cannot bloat the log. */
export function auditArguments(value: unknown): string | null {
  if (value === undefined) return null;
  const json = JSON.stringify(value) ?? null;
  if (json === null) return null;
  if (Buffer.byteLength(json) <= MAX_ARGUMENTS_BYTES) return json;
  // Cut by bytes, not characters (Cyrillic takes two bytes each), and keep the stored value JSON.
  let prefix = json.slice(0, 1500);
  while (Buffer.byteLength(JSON.stringify({ _truncated: true, prefix })) > MAX_ARGUMENTS_BYTES) {
    prefix = prefix.slice(0, Math.floor(prefix.length * 0.9));
  }
  return JSON.stringify({ _truncated: true, prefix });
}

/** Agent calls of one token in one hour (UTC), for the chart on the audit page. */
export interface HourlyAgentCalls {
  api_token_id: string | null;
  /** Start of the hour, `YYYY-MM-DDTHH`. */
  hour: string;
  calls: number;
}

interface AuditRow extends Omit<AuditEntry, "arguments"> {
  arguments: string | null;
}

/** One condition of a query and its parameter. */
type Filter = [sql: string, value: string | number];

/** Ids per block of the token map (`id >> 12` in migration 0005). */
export const AUDIT_BLOCK_IDS = 4096;

/** Characters kept of each text field other than the arguments (names, ids, outcomes: svc's own
 *  are far shorter; a client's tool name, method or session id may be anything). */
export const MAX_AUDIT_FIELD_CHARS = 256;

/** A text field cut to MAX_AUDIT_FIELD_CHARS characters (whole code points), "…" marking a cut. */
export function auditField(value: string): string;
export function auditField(value: string | null | undefined): string | null;
export function auditField(value: string | null | undefined): string | null {
  if (value === null || value === undefined) return null;
  if (value.length <= MAX_AUDIT_FIELD_CHARS) return value;
  let kept = value.slice(0, MAX_AUDIT_FIELD_CHARS - 1);
  // Never leave half of a surrogate pair at the cut.
  if (/[\uD800-\uDBFF]$/.test(kept)) kept = kept.slice(0, -1);
  return `${kept}…`;
}

/** An entry's values in AUDIT_COLUMNS order: every text field capped (the arguments at 2 KB of
 *  JSON, the rest at MAX_AUDIT_FIELD_CHARS), so that no request can store a large entry. */
function auditRow(e: AuditEntryInput): (string | number | null)[] {
  return [
    e.at.toISOString(),
    e.actor,
    auditField(e.apiTokenId),
    auditField(e.mcpSessionId),
    auditField(e.action),
    auditField(e.tool),
    auditField(e.target),
    auditArguments(e.arguments),
    auditField(e.outcome),
    e.durationMs ?? null,
    auditField(e.requestId),
    auditField(e.ip),
    e.transport ?? null,
    auditField(e.protocolRevision),
  ];
}

export class AuditLog {
  private readonly insertStmt;
  private readonly blocksStmt;
  private readonly insertAll: (rows: SqlValue[][]) => void;

  constructor(private readonly port: SqlPort) {
    this.blocksStmt = port.prepare<{ block: number }, [string, number]>(
      "SELECT block FROM audit_token_blocks WHERE api_token_id = ? AND block <= ? ORDER BY block DESC",
    );
    this.insertStmt = port.prepare<unknown, (string | number | null)[]>(
      `INSERT INTO audit_log (${AUDIT_COLUMNS.join(", ")}) VALUES (${AUDIT_COLUMNS.map(() => "?").join(", ")})`,
    );
    this.insertAll = batchInsert(port, "audit_log", AUDIT_COLUMNS, { bigintColumns: ["duration_ms"] });
  }

  /** Synchronous: a caller that must not proceed unaudited sees the failure as an exception. */
  write(e: AuditEntryInput): void {
    this.insertStmt.run(...auditRow(e));
  }

  /**
   * Several entries, in order, all or none. On PostgreSQL one statement (a round trip per entry
   * was most of an agent call's time there); on SQLite one transaction of prepared inserts.
   */
  writeAll(entries: AuditEntryInput[]): void {
    this.insertAll(entries.map(auditRow));
  }

  /** Every entry from `since` (inclusive) to `until` (exclusive) as a file, oldest first. */
  exportStream(
    range: { since?: string; until?: string },
    format: AuditExportFormat,
  ): ReadableStream<Uint8Array> {
    return auditExportStream(this.port, range, format);
  }

  /** Agent calls (actions `mcp.*`) at or after `since` (ISO 8601 UTC), counted per token and hour. */
  agentCallsPerHour(since: string): HourlyAgentCalls[] {
    return this.port
      .prepare<HourlyAgentCalls, [string]>(
        `SELECT api_token_id, substr(at, 1, 13) AS hour, count(*) AS calls
           FROM audit_log
          WHERE at >= ? AND action LIKE 'mcp.%'
          GROUP BY api_token_id, substr(at, 1, 13)
          ORDER BY hour, api_token_id`,
      )
      .all(since);
  }

  /** Newest first; `beforeId` continues a previous page. */
  query(q: AuditQuery): AuditEntry[] {
    const filters: Filter[] = [];
    if (q.action) filters.push(["action = ?", q.action]);
    if (q.since) filters.push(["at >= ?", q.since]);
    if (q.until) filters.push(["at < ?", q.until]);
    if (q.apiTokenId) return this.queryOfToken(q.apiTokenId, q, filters);
    if (q.beforeId !== undefined) filters.push(["id < ?", q.beforeId]);
    return this.select(filters, q.limit);
  }

  /**
   * One token's entries: the blocks of ids that hold any (audit_token_blocks, newest first), each
   * scanned by id range with the other filters, until the page is full.
   */
  private queryOfToken(apiTokenId: string, q: AuditQuery, filters: Filter[]): AuditEntry[] {
    const below = q.beforeId ?? Number.MAX_SAFE_INTEGER;
    const blocks = this.blocksStmt.all(apiTokenId, Math.floor((below - 1) / AUDIT_BLOCK_IDS));
    const out: AuditEntry[] = [];
    for (const { block } of blocks) {
      const from = block * AUDIT_BLOCK_IDS;
      const range: Filter[] = [
        ["api_token_id = ?", apiTokenId],
        ["id >= ?", from],
        ["id < ?", Math.min(below, from + AUDIT_BLOCK_IDS)],
      ];
      out.push(...this.select([...filters, ...range], q.limit - out.length, true));
      if (out.length >= q.limit) break;
    }
    return out;
  }

  /** `byIdRange`: read the id range by the primary key alone (a block is at most 4096 rows; no
   *  index can do better; see byKeyRange). */
  private select(filters: Filter[], limit: number, byIdRange = false): AuditEntry[] {
    const where = filters.map(([sql]) => sql);
    const from = byIdRange ? byKeyRange(this.port, "audit_log") : "audit_log";
    const sql = `SELECT id, at, actor, api_token_id, mcp_session_id, action, tool, target, arguments, outcome,
                        duration_ms, request_id, ip, transport, protocol_revision
                   FROM ${from} ${where.length ? `WHERE ${where.join(" AND ")}` : ""}
                  ORDER BY id DESC LIMIT ?`;
    return this.port
      .prepare<AuditRow, (string | number)[]>(sql)
      .all(...filters.map(([, value]) => value), limit)
      .map((r) => ({ ...r, arguments: r.arguments === null ? null : JSON.parse(r.arguments) }));
  }
}
