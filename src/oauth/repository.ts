// OAuth clients, authorization requests, grants and refresh tokens (hashes only), in portable
// SQL on the stores' port (../db/sql-port.ts).
import type { oauthClients, oauthGrants, oauthRequests } from "../db/schema";
import type { SqlPort } from "../db/sql-port";

export type ClientRow = (typeof oauthClients)["$inferSelect"];
export type RequestRow = (typeof oauthRequests)["$inferSelect"];
export type GrantRow = (typeof oauthGrants)["$inferSelect"];

const CLIENT_COLUMNS = `id, kind, name, redirect_uris AS "redirectUris", token_endpoint_auth_method AS "tokenEndpointAuthMethod",
  secret_hash AS "secretHash", created_at AS "createdAt"`;
const REQUEST_COLUMNS = `id, client_id AS "clientId", redirect_uri AS "redirectUri", state, code_challenge AS "codeChallenge",
  scope, resource, status, code_hash AS "codeHash", grant_id AS "grantId", created_at_ms AS "createdAtMs",
  expires_at_ms AS "expiresAtMs"`;
const GRANT_COLUMNS = `id, client_id AS "clientId", api_token_id AS "apiTokenId", company_id AS "companyId", scope, resource,
  created_at AS "createdAt", revoked_at AS "revokedAt"`;

type RawClient = Omit<ClientRow, "redirectUris"> & { redirectUris: string };

/** Where a page of a list ordered newest first stopped: its last row's sort key and id. */
export type PagePosition = { key: string | number; id: string };

export const SWEEP_BATCH = 500;

export class OAuthRepository {
  constructor(private readonly port: SqlPort) {}

  /** Runs `fn` in one write transaction. */
  atomically<T>(fn: () => T): T {
    return this.port.transaction(fn);
  }

  upsertClient(row: ClientRow): void {
    this.port
      .prepare(
        `INSERT INTO oauth_clients (id, kind, name, redirect_uris, token_endpoint_auth_method, secret_hash, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT(id) DO UPDATE SET name = excluded.name, redirect_uris = excluded.redirect_uris`,
      )
      .run(
        row.id,
        row.kind,
        row.name,
        JSON.stringify(row.redirectUris),
        row.tokenEndpointAuthMethod,
        row.secretHash,
        row.createdAt,
      );
  }

  client(id: string): ClientRow | null {
    const row = this.port
      .prepare<RawClient, [string]>(`SELECT ${CLIENT_COLUMNS} FROM oauth_clients WHERE id = ?`)
      .get(id);
    return row ? { ...row, redirectUris: JSON.parse(row.redirectUris) as string[] } : null;
  }

  /** Newest first, `limit` rows after `after`. */
  clients(limit: number, after?: PagePosition): ClientRow[] {
    const rows = after
      ? this.port
          .prepare<RawClient, [string, string, string, number]>(
            `SELECT ${CLIENT_COLUMNS} FROM oauth_clients WHERE created_at < ? OR (created_at = ? AND id < ?)
              ORDER BY created_at DESC, id DESC LIMIT ?`,
          )
          .all(String(after.key), String(after.key), after.id, limit)
      : this.port
          .prepare<RawClient, [number]>(
            `SELECT ${CLIENT_COLUMNS} FROM oauth_clients ORDER BY created_at DESC, id DESC LIMIT ?`,
          )
          .all(limit);
    return rows.map((row) => ({ ...row, redirectUris: JSON.parse(row.redirectUris) as string[] }));
  }

  /** Clients registered since `since`, counted up to `cap` (the count stops there). */
  clientsSince(since: string, cap: number): number {
    const row = this.port
      .prepare<{ n: number | string }, [string, number]>(
        "SELECT count(*) AS n FROM (SELECT 1 FROM oauth_clients WHERE created_at >= ? LIMIT ?) recent",
      )
      .get(since, cap);
    return Number(row?.n ?? 0);
  }

  insertRequest(row: RequestRow): void {
    this.port
      .prepare(
        `INSERT INTO oauth_requests (id, client_id, redirect_uri, state, code_challenge, scope, resource, status,
           code_hash, grant_id, created_at_ms, expires_at_ms)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        row.id,
        row.clientId,
        row.redirectUri,
        row.state,
        row.codeChallenge,
        row.scope,
        row.resource,
        row.status,
        row.codeHash,
        row.grantId,
        row.createdAtMs,
        row.expiresAtMs,
      );
  }

  request(id: string): RequestRow | null {
    return this.port
      .prepare<RequestRow, [string]>(`SELECT ${REQUEST_COLUMNS} FROM oauth_requests WHERE id = ?`)
      .get(id);
  }

  requestByCode(codeHash: string): RequestRow | null {
    return this.port
      .prepare<RequestRow, [string]>(`SELECT ${REQUEST_COLUMNS} FROM oauth_requests WHERE code_hash = ?`)
      .get(codeHash);
  }

  /** Pending and not expired, newest first, `limit` rows after `after`. */
  pendingRequests(nowMs: number, limit: number, after?: PagePosition): RequestRow[] {
    if (after) {
      return this.port
        .prepare<RequestRow, [number, number, number, string, number]>(
          `SELECT ${REQUEST_COLUMNS} FROM oauth_requests
            WHERE status = 'pending' AND expires_at_ms > ? AND (created_at_ms < ? OR (created_at_ms = ? AND id < ?))
            ORDER BY created_at_ms DESC, id DESC LIMIT ?`,
        )
        .all(nowMs, Number(after.key), Number(after.key), after.id, limit);
    }
    return this.port
      .prepare<RequestRow, [number, number]>(
        `SELECT ${REQUEST_COLUMNS} FROM oauth_requests WHERE status = 'pending' AND expires_at_ms > ?
          ORDER BY created_at_ms DESC, id DESC LIMIT ?`,
      )
      .all(nowMs, limit);
  }

  /** Moves a request on from `from`; false when it was no longer there (a race, a replay). */
  settleRequest(
    id: string,
    from: RequestRow["status"],
    to: RequestRow["status"],
    fields: { codeHash?: string | null; grantId?: string | null; expiresAtMs?: number } = {},
  ): boolean {
    return (
      this.port
        .prepare(
          `UPDATE oauth_requests SET status = ?, code_hash = coalesce(?, code_hash), grant_id = coalesce(?, grant_id),
                  expires_at_ms = coalesce(?, expires_at_ms)
            WHERE id = ? AND status = ?`,
        )
        .run(to, fields.codeHash ?? null, fields.grantId ?? null, fields.expiresAtMs ?? null, id, from)
        .changes === 1
    );
  }

  insertGrant(row: GrantRow): void {
    this.port
      .prepare(
        `INSERT INTO oauth_grants (id, client_id, api_token_id, company_id, scope, resource, created_at, revoked_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        row.id,
        row.clientId,
        row.apiTokenId,
        row.companyId,
        row.scope,
        row.resource,
        row.createdAt,
        row.revokedAt,
      );
  }

  grant(id: string): GrantRow | null {
    return this.port
      .prepare<GrantRow, [string]>(`SELECT ${GRANT_COLUMNS} FROM oauth_grants WHERE id = ?`)
      .get(id);
  }

  /**
   * Newest first, `limit` rows after `after`: the grants whose code was exchanged (apps that got
   * connected). A grant approved but never exchanged still carries its placeholder token, whose
   * display prefix is `notExchangedPrefix`; the sweep ends it a day later.
   */
  grants(limit: number, notExchangedPrefix: string, after?: PagePosition): GrantRow[] {
    const exchanged = `EXISTS (SELECT 1 FROM api_tokens t WHERE t.id = oauth_grants.api_token_id AND t.token_prefix <> ?)`;
    if (after) {
      return this.port
        .prepare<GrantRow, [string, string, string, string, number]>(
          `SELECT ${GRANT_COLUMNS} FROM oauth_grants WHERE ${exchanged} AND (created_at < ? OR (created_at = ? AND id < ?))
            ORDER BY created_at DESC, id DESC LIMIT ?`,
        )
        .all(notExchangedPrefix, String(after.key), String(after.key), after.id, limit);
    }
    return this.port
      .prepare<GrantRow, [string, number]>(
        `SELECT ${GRANT_COLUMNS} FROM oauth_grants WHERE ${exchanged} ORDER BY created_at DESC, id DESC LIMIT ?`,
      )
      .all(notExchangedPrefix, limit);
  }

  revokeGrant(id: string, at: string): void {
    this.port
      .prepare("UPDATE oauth_grants SET revoked_at = coalesce(revoked_at, ?) WHERE id = ?")
      .run(at, id);
  }

  insertRefresh(hash: string, grantId: string, nowMs: number): void {
    this.port
      .prepare("INSERT INTO oauth_refresh_tokens (hash, grant_id, created_at_ms) VALUES (?, ?, ?)")
      .run(hash, grantId, nowMs);
  }

  refresh(hash: string): { grantId: string; usedAtMs: number | null; createdAtMs: number } | null {
    return this.port
      .prepare<{ grantId: string; usedAtMs: number | null; createdAtMs: number }, [string]>(
        `SELECT grant_id AS "grantId", used_at_ms AS "usedAtMs", created_at_ms AS "createdAtMs"
           FROM oauth_refresh_tokens WHERE hash = ?`,
      )
      .get(hash);
  }

  /** Marks a refresh token used; false when it already was (a replay). */
  useRefresh(hash: string, nowMs: number): boolean {
    return (
      this.port
        .prepare("UPDATE oauth_refresh_tokens SET used_at_ms = ? WHERE hash = ? AND used_at_ms IS NULL")
        .run(nowMs, hash).changes === 1
    );
  }

  grantOfToken(apiTokenId: string): GrantRow | null {
    return this.port
      .prepare<GrantRow, [string]>(`SELECT ${GRANT_COLUMNS} FROM oauth_grants WHERE api_token_id = ?`)
      .get(apiTokenId);
  }

  // ---- the sweeps: each deletes at most one batch; the caller repeats while a batch was full

  /** Requests past their expiry; a used code's row stays `usedKeepMs` longer (a replay of it still
   *  revokes its grant). */
  deleteExpiredRequests(nowMs: number, usedKeepMs: number): number {
    return this.port
      .prepare(
        `DELETE FROM oauth_requests WHERE id IN (SELECT id FROM oauth_requests
          WHERE expires_at_ms < ? AND (status <> 'used' OR expires_at_ms < ?) LIMIT ?)`,
      )
      .run(nowMs, nowMs - usedKeepMs, SWEEP_BATCH).changes;
  }

  /** Refresh tokens past their lifetime, spent ones `usedKeepMs` after use, and those of revoked grants. */
  deleteDeadRefreshTokens(nowMs: number, ttlMs: number, usedKeepMs: number): number {
    return this.port
      .prepare(
        `DELETE FROM oauth_refresh_tokens WHERE hash IN (SELECT r.hash FROM oauth_refresh_tokens r
          WHERE r.created_at_ms < ? OR r.used_at_ms < ?
             OR EXISTS (SELECT 1 FROM oauth_grants g WHERE g.id = r.grant_id AND g.revoked_at IS NOT NULL) LIMIT ?)`,
      )
      .run(nowMs - ttlMs, nowMs - usedKeepMs, SWEEP_BATCH).changes;
  }

  /** Grants still in force that nothing can renew: created before `createdBefore` and without a
   *  refresh token issued since `refreshedSince`. */
  staleGrants(createdBefore: string, refreshedSince: number): string[] {
    return this.port
      .prepare<{ id: string }, [string, number, number]>(
        `SELECT g.id FROM oauth_grants g WHERE g.revoked_at IS NULL AND g.created_at < ?
           AND NOT EXISTS (SELECT 1 FROM oauth_refresh_tokens r WHERE r.grant_id = g.id AND r.created_at_ms >= ?)
         LIMIT ?`,
      )
      .all(createdBefore, refreshedSince, SWEEP_BATCH)
      .map((r) => r.id);
  }

  /** Clients registered (or fetched) before `createdBefore` that never got a grant and have no
   *  authorization request left. */
  deleteUnusedClients(createdBefore: string): number {
    return this.port
      .prepare(
        `DELETE FROM oauth_clients WHERE id IN (SELECT c.id FROM oauth_clients c WHERE c.created_at < ?
           AND NOT EXISTS (SELECT 1 FROM oauth_grants g WHERE g.client_id = c.id)
           AND NOT EXISTS (SELECT 1 FROM oauth_requests q WHERE q.client_id = c.id) LIMIT ?)`,
      )
      .run(createdBefore, SWEEP_BATCH).changes;
  }
}
