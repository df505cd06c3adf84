// Bank logins (sealed) and the consent flows in progress. Sealing and opening happen in
// bank-connections.ts; this module only stores bytes.
import type { Database } from "bun:sqlite";
import type { bankConnections } from "../schema";

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
  private readonly stateOf;
  private readonly deleteState;
  private readonly deleteExpiredStates;

  constructor(sqlite: Database) {
    this.insertRow = sqlite.query<
      never,
      [string, string, Uint8Array, ConnectionStatus, string | null, string, string]
    >(
      `INSERT INTO bank_connections (id, bank, credentials_enc, status, status_message, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?)`,
    );
    this.byId = sqlite.query<ConnectionRecord, [string]>(
      `SELECT id, bank, status, status_message AS statusMessage, created_at AS createdAt, updated_at AS updatedAt
         FROM bank_connections WHERE id = ?`,
    );
    this.sealedOf = sqlite.query<{ c: Uint8Array }, [string]>(
      "SELECT credentials_enc AS c FROM bank_connections WHERE id = ?",
    );
    // A stored login also ends the refresh lease: the holder is done.
    this.storeRow = sqlite.query<never, [Uint8Array, ConnectionStatus, string | null, string, string]>(
      `UPDATE bank_connections SET credentials_enc = ?, status = ?, status_message = ?, updated_at = ?,
              refresh_lease_until_ms = 0
        WHERE id = ?`,
    );
    this.setStatusRow = sqlite.query<never, [ConnectionStatus, string | null, string, string]>(
      "UPDATE bank_connections SET status = ?, status_message = ?, updated_at = ? WHERE id = ?",
    );
    this.takeLease = sqlite.query<never, [number, string, number]>(
      "UPDATE bank_connections SET refresh_lease_until_ms = ? WHERE id = ? AND refresh_lease_until_ms <= ?",
    );
    this.dropLease = sqlite.query<never, [string]>(
      "UPDATE bank_connections SET refresh_lease_until_ms = 0 WHERE id = ?",
    );
    this.insertState = sqlite.query<never, [string, string, number]>(
      "INSERT INTO bank_auth_states (state_hash, connection_id, expires_at_ms) VALUES (?, ?, ?)",
    );
    this.stateOf = sqlite.query<{ connectionId: string; expiresAtMs: number }, [string]>(
      "SELECT connection_id AS connectionId, expires_at_ms AS expiresAtMs FROM bank_auth_states WHERE state_hash = ?",
    );
    this.deleteState = sqlite.query<never, [string]>("DELETE FROM bank_auth_states WHERE state_hash = ?");
    this.deleteExpiredStates = sqlite.query<never, [number]>(
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
    const row = this.stateOf.get(stateHash);
    this.deleteState.run(stateHash);
    this.deleteExpiredStates.run(nowMs);
    return row && row.expiresAtMs > nowMs ? row.connectionId : null;
  }
}
