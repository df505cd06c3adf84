// Agent sessions: created by initialize, bound to the token that created it, extended on each
// valid request, swept when expired. The store sits behind `SessionStore`; the SQL one runs on
// either database (portable SQL on the stores' port), so replicas on PostgreSQL share sessions.
import { randomUUID } from "node:crypto";
import type { Clock } from "../core/clock";
import { ApiError } from "../core/errors";
import { isUuid } from "../core/ids";
import { errorText, type Logger } from "../core/logger";
import { type FleetSchedule, fleetInterval } from "../db/fleet-schedule";
import { type CacheChanges, RowCache } from "../db/row-cache";
import type { SqlPort } from "../db/sql-port";
import { RPC_INVALID_REQUEST, RpcError } from "./protocol";

export interface McpSession {
  id: string;
  apiTokenId: string;
  protocolVersion: string;
  createdAt: string;
  expiresAtMs: number;
}

/** Where sessions live. Asynchronous so that a network store fits the same shape. */
export interface SessionStore {
  create(session: McpSession): Promise<void>;
  get(id: string): Promise<McpSession | null>;
  /** Moves the expiry of a session forward. */
  extend(id: string, expiresAtMs: number): Promise<void>;
  /** Deletes the session if it belongs to `apiTokenId`; another token's session is left alone. */
  delete(id: string, apiTokenId: string): Promise<void>;
  /** Deletes every session expired at `nowMs`; returns how many. */
  deleteExpired(nowMs: number): Promise<number>;
}

/**
 * Sessions in the database. Every agent request reads its session, so the rows are kept in
 * memory: forgotten by this store's own writes, and when another connection or replica has
 * changed sessions (a session ended elsewhere is gone from the next request).
 */
export class SqlSessionStore implements SessionStore {
  private readonly cache: RowCache<McpSession>;
  private readonly insertStmt;
  private readonly byId;
  private readonly extendStmt;
  private readonly deleteStmt;
  private readonly expiredStmt;

  constructor(port: SqlPort, changes: CacheChanges) {
    this.cache = new RowCache(changes, "mcp_sessions");
    this.insertStmt = port.prepare<unknown, [string, string, string, string, number]>(
      `INSERT INTO mcp_sessions (id, api_token_id, protocol_version, created_at, expires_at_ms)
       VALUES (?, ?, ?, ?, ?)`,
    );
    this.byId = port.prepare<McpSession, [string]>(
      `SELECT id, api_token_id AS "apiTokenId", protocol_version AS "protocolVersion", created_at AS "createdAt",
              expires_at_ms AS "expiresAtMs"
         FROM mcp_sessions WHERE id = ?`,
    );
    this.extendStmt = port.prepare<unknown, [number, string, number]>(
      "UPDATE mcp_sessions SET expires_at_ms = ? WHERE id = ? AND expires_at_ms < ?",
    );
    this.deleteStmt = port.prepare<unknown, [string, string]>(
      "DELETE FROM mcp_sessions WHERE id = ? AND api_token_id = ?",
    );
    this.expiredStmt = port.prepare<unknown, [number]>("DELETE FROM mcp_sessions WHERE expires_at_ms <= ?");
  }

  async create(s: McpSession): Promise<void> {
    this.insertStmt.run(s.id, s.apiTokenId, s.protocolVersion, s.createdAt, s.expiresAtMs);
  }

  /** Treat the result as read-only: it may be shared with other requests. */
  async get(id: string): Promise<McpSession | null> {
    return this.cache.get(id, () => this.byId.get(id) ?? null);
  }

  async extend(id: string, expiresAtMs: number): Promise<void> {
    // Never moves an expiry backwards (two concurrent requests may extend in either order).
    this.cache.write(id, () => this.extendStmt.run(expiresAtMs, id, expiresAtMs));
  }

  async delete(id: string, apiTokenId: string): Promise<void> {
    this.cache.write(id, () => this.deleteStmt.run(id, apiTokenId));
  }

  async deleteExpired(nowMs: number): Promise<number> {
    return this.cache.writeAll(() => this.expiredStmt.run(nowMs).changes);
  }
}

/** At most this long between two writes of the same session's expiry. */
const MAX_EXTENSION_GRANULARITY_MS = 60_000;

/**
 * Session rules on top of a store. Every store failure becomes 503 service_unavailable (fail
 * closed); a missing, unknown, expired or foreign session becomes JSON-RPC -32600.
 */
export class SessionManager {
  private readonly ttlMs: number;
  /** An extension smaller than this is skipped: min(1% of the TTL, 60 s). */
  readonly extensionGranularityMs: number;

  constructor(
    private readonly store: SessionStore,
    private readonly clock: Clock,
    ttlSeconds: number,
    private readonly logger: Logger,
  ) {
    this.ttlMs = ttlSeconds * 1000;
    this.extensionGranularityMs = Math.min(MAX_EXTENSION_GRANULARITY_MS, Math.floor(this.ttlMs / 100));
  }

  async create(apiTokenId: string, protocolVersion: string): Promise<McpSession> {
    const now = this.clock.now();
    const session: McpSession = {
      id: randomUUID(),
      apiTokenId,
      protocolVersion,
      createdAt: now.toISOString(),
      expiresAtMs: now.getTime() + this.ttlMs,
    };
    await this.guarded(() => this.store.create(session));
    return session;
  }

  /**
   * The live session `id` of token `apiTokenId`, its TTL extended; throws -32600 otherwise.
   * The expiry is written only when it would move by at least `extensionGranularityMs`, so a
   * busy session does not cost a write per request.
   */
  async validate(id: string | null, apiTokenId: string): Promise<McpSession> {
    if (id === null || id === "") {
      throw new RpcError(
        RPC_INVALID_REQUEST,
        "Invalid Request: Mcp-Session-Id header is required; call initialize first",
      );
    }
    if (!isUuid(id)) throw sessionNotFound();
    const session = await this.guarded(() => this.store.get(id));
    // Another token's session answers exactly like an unknown one: nothing to learn from probing.
    if (!session || session.apiTokenId !== apiTokenId) throw sessionNotFound();
    const nowMs = this.clock.now().getTime();
    if (session.expiresAtMs <= nowMs) {
      throw new RpcError(RPC_INVALID_REQUEST, "Invalid Request: session expired; call initialize again");
    }
    const next = nowMs + this.ttlMs;
    if (next - session.expiresAtMs < this.extensionGranularityMs) return session;
    await this.guarded(() => this.store.extend(id, next));
    // A copy: the store's row may be shared with other requests.
    return { ...session, expiresAtMs: next };
  }

  /** Idempotent: an unknown session, or another token's, is left as it is. */
  async terminate(id: string, apiTokenId: string): Promise<void> {
    if (!isUuid(id)) return;
    await this.guarded(() => this.store.delete(id, apiTokenId));
  }

  async sweep(): Promise<number> {
    return this.store.deleteExpired(this.clock.now().getTime());
  }

  private async guarded<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (e) {
      this.logger.error("agent session store failed", {
        error: errorText(e),
      });
      throw new ApiError("service_unavailable", "Хранилище сессий недоступно");
    }
  }
}

function sessionNotFound(): RpcError {
  return new RpcError(RPC_INVALID_REQUEST, "Invalid Request: session not found; call initialize again");
}

/** Background worker: deletes expired sessions every `intervalMs`. */
export class SessionSweeper {
  readonly name = "mcp-session-sweeper";
  private timer: ReturnType<typeof setInterval> | null = null;
  private running: Promise<unknown> | null = null;

  /** `schedule`: with several replicas, one sweeps per interval. */
  constructor(
    private readonly sessions: SessionManager,
    private readonly intervalMs: number,
    private readonly logger: Logger,
    private readonly schedule: FleetSchedule | null = null,
  ) {}

  start(): void {
    this.timer ??= fleetInterval(this.schedule, this.name, this.intervalMs, () => void this.sweep());
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
  }

  /** One pass; never throws (a failing store is logged and retried at the next tick). */
  async sweep(): Promise<number> {
    const run = this.sessions.sweep().then(
      (deleted) => {
        if (deleted > 0) this.logger.debug("expired agent sessions deleted", { deleted });
        return deleted;
      },
      (e: unknown) => {
        this.logger.warn("agent session sweep failed", { error: e instanceof Error ? e.message : String(e) });
        return 0;
      },
    );
    this.running = run;
    return run;
  }
}
