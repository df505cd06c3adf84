// Bank logins (sealed) and the consent flows in progress. Sealing and opening happen in
// banks/connections.ts; this module only stores bytes. Portable SQL (../sql-port.ts): the refresh
// lease and the single-use consent state hold across replicas too (one UPDATE, one DELETE each).
import type { bankConnections } from "../schema";
import type { SqlPort } from "../sql-port";

export type ConnectionStatus = "active" | "consent_required" | "renewal_needed";
type ConnectionRow = (typeof bankConnections)["$inferSelect"];
/** A login without its credentials: what the admin pages show. */
export type ConnectionRecord = Omit<ConnectionRow, "credentialsEnc" | "refreshLeaseUntilMs">;

export class BankConnectionRepository {
  private readonly insertRow;
  private readonly byId;
  private readonly sealedOf;
  private readonly storeRow;
  private readonly setStatusRow;
  private readonly takeLease;
  private readonly dropLease;
  private readonly insertState;
  private readonly takeState;
  private readonly deleteExpiredStates;

  constructor(port: SqlPort) {
    this.insertRow = port.prepare<
      unknown,
      [string, string, Uint8Array, ConnectionStatus, string | null, string, string]
    >(
      `INSERT INTO bank_connections (id, bank, credentials_enc, status, status_message, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?)`,
    );
    this.byId = port.prepare<ConnectionRecord, [string]>(
      `SELECT id, bank, status, status_message AS "statusMessage", created_at AS "createdAt", updated_at AS "updatedAt"
         FROM bank_connections WHERE id = ?`,
    );
    this.sealedOf = port.prepare<{ c: Uint8Array }, [string]>(
      "SELECT credentials_enc AS c FROM bank_connections WHERE id = ?",
    );
    // A stored login also ends the refresh lease: the holder is done.
    this.storeRow = port.prepare<unknown, [Uint8Array, ConnectionStatus, string | null, string, string]>(
      `UPDATE bank_connections SET credentials_enc = ?, status = ?, status_message = ?, updated_at = ?,
              refresh_lease_until_ms = 0
        WHERE id = ?`,
    );
    this.setStatusRow = port.prepare<unknown, [ConnectionStatus, string | null, string, string]>(
      "UPDATE bank_connections SET status = ?, status_message = ?, updated_at = ? WHERE id = ?",
    );
    this.takeLease = port.prepare<unknown, [number, string, number]>(
      "UPDATE bank_connections SET refresh_lease_until_ms = ? WHERE id = ? AND refresh_lease_until_ms <= ?",
    );
    this.dropLease = port.prepare<unknown, [string]>(
      "UPDATE bank_connections SET refresh_lease_until_ms = 0 WHERE id = ?",
    );
    this.insertState = port.prepare<unknown, [string, string, number]>(
      "INSERT INTO bank_auth_states (state_hash, connection_id, expires_at_ms) VALUES (?, ?, ?)",
    );
    // Deleted as it is read: of two callbacks bringing the same state, one gets it.
    this.takeState = port.prepare<{ connectionId: string; expiresAtMs: number }, [string]>(
      `DELETE FROM bank_auth_states WHERE state_hash = ?
       RETURNING connection_id AS "connectionId", expires_at_ms AS "expiresAtMs"`,
    );
    this.deleteExpiredStates = port.prepare<unknown, [number]>(
      "DELETE FROM bank_auth_states WHERE expires_at_ms <= ?",
    );
  }

  insert(row: Omit<ConnectionRow, "refreshLeaseUntilMs">): void {
    this.insertRow.run(
      row.id,
      row.bank,
      row.credentialsEnc,
      row.status,
      row.statusMessage,
      row.createdAt,
      row.updatedAt,
    );
  }

  findById(id: string): ConnectionRecord | null {
    return this.byId.get(id) ?? null;
  }

  sealed(id: string): Uint8Array | null {
    return this.sealedOf.get(id)?.c ?? null;
  }

  store(id: string, sealed: Uint8Array, status: ConnectionStatus, message: string | null, at: string): void {
    this.storeRow.run(sealed, status, message, at, id);
  }

  setStatus(id: string, status: ConnectionStatus, message: string | null, at: string): void {
    this.setStatusRow.run(status, message, at, id);
  }

  /** Takes the refresh lease until `untilMs` if nobody holds it at `nowMs`; true when taken. */
  acquireLease(id: string, nowMs: number, untilMs: number): boolean {
    return this.takeLease.run(untilMs, id, nowMs).changes === 1;
  }

  releaseLease(id: string): void {
    this.dropLease.run(id);
  }

  addAuthState(stateHash: string, connectionId: string, expiresAtMs: number): void {
    this.insertState.run(stateHash, connectionId, expiresAtMs);
  }

  /** The connection a consent `state` was issued for; single use, null when unknown or expired. */
  takeAuthState(stateHash: string, nowMs: number): string | null {
    const row = this.takeState.get(stateHash);
    this.deleteExpiredStates.run(nowMs);
    return row && row.expiresAtMs > nowMs ? row.connectionId : null;
  }
}
