// DirectBank sessions and packets, in portable SQL on the stores' port (the same on SQLite and
// PostgreSQL). ISO times of one format compare as text.
import { directbankPackets, directbankSessions } from "../db/schema";
import { type SqlPort, TableRows } from "../db/sql-port";

export type DirectBankSession = typeof directbankSessions.$inferSelect;
export type DirectBankPacket = typeof directbankPackets.$inferSelect;
export type NewDirectBankPacket = typeof directbankPackets.$inferInsert;

export class DirectBankRepository {
  private readonly sessions: TableRows<typeof directbankSessions>;
  private readonly packets: TableRows<typeof directbankPackets>;
  private readonly sessionById;
  private readonly deleteExpired;
  private readonly packetById;
  private readonly byClientPacket;
  private readonly waiting;
  private readonly readySince;
  private readonly notTaken;

  constructor(private readonly port: SqlPort) {
    this.sessions = new TableRows(port, directbankSessions);
    this.packets = new TableRows(port, directbankPackets);
    const packetSelect = this.packets.selectAll();
    this.sessionById = port.prepare<Record<string, unknown>, [string]>(
      `${this.sessions.selectAll()} WHERE id = ?`,
    );
    this.deleteExpired = port.prepare<unknown, [number]>(
      "DELETE FROM directbank_sessions WHERE expires_at_ms <= ?",
    );
    this.packetById = port.prepare<Record<string, unknown>, [string, string]>(
      `${packetSelect} WHERE id = ? AND api_token_id = ?`,
    );
    this.byClientPacket = port.prepare<{ id: string }, [string, string]>(
      "SELECT id FROM directbank_packets WHERE api_token_id = ? AND client_packet_id = ? LIMIT 1",
    );
    this.waiting = port.prepare<Record<string, unknown>, [string]>(
      `${packetSelect} WHERE api_token_id = ? AND ready_at IS NULL ORDER BY created_at, id`,
    );
    // Packets ready at the same instant: in the order of their requests, a notice before the
    // answer to the same request.
    const order = "ORDER BY ready_at, created_at, CASE kind WHEN 'notice' THEN 0 ELSE 1 END, id";
    this.readySince = port.prepare<Record<string, unknown>, [string, string, number]>(
      `${packetSelect} WHERE api_token_id = ? AND ready_at >= ? ${order} LIMIT ?`,
    );
    this.notTaken = port.prepare<Record<string, unknown>, [string, number]>(
      `${packetSelect} WHERE api_token_id = ? AND ready_at IS NOT NULL AND taken_at IS NULL ${order} LIMIT ?`,
    );
  }

  /** A new session; expired ones go at the same time (sessions live hours, logons are rare). */
  openSession(session: DirectBankSession, nowMs: number): void {
    this.port.transaction(() => {
      this.deleteExpired.run(nowMs);
      this.sessions.insert(session);
    });
  }

  session(id: string): DirectBankSession | null {
    const raw = this.sessionById.get(id);
    return raw ? this.sessions.fromDriver(raw) : null;
  }

  extendSession(id: string, expiresAtMs: number): void {
    this.sessions.update({ expiresAtMs }, "id", id);
  }

  /** Whether a packet with this id from this token was received before. */
  received(apiTokenId: string, clientPacketId: string): boolean {
    return this.byClientPacket.get(apiTokenId, clientPacketId) !== null;
  }

  insertPackets(rows: NewDirectBankPacket[]): void {
    this.port.transaction(() => {
      for (const row of rows) this.packets.insert(row);
    });
  }

  packet(id: string, apiTokenId: string): DirectBankPacket | null {
    const raw = this.packetById.get(id, apiTokenId);
    return raw ? this.packets.fromDriver(raw) : null;
  }

  /** The token's packets not yet ready (statements still being made). */
  waitingPackets(apiTokenId: string): DirectBankPacket[] {
    return this.waiting.all(apiTokenId).map((raw) => this.packets.fromDriver(raw));
  }

  markReady(id: string, readyAt: string, error?: { code: string; text: string }): void {
    this.packets.update({ readyAt, errorCode: error?.code, errorText: error?.text }, "id", id);
  }

  markTaken(id: string, takenAt: string): void {
    this.packets.update({ takenAt }, "id", id);
  }

  /** Ready packets: since `since` (ISO), or every one not yet taken. */
  listReady(apiTokenId: string, since: string | null, limit: number): DirectBankPacket[] {
    const rows =
      since === null ? this.notTaken.all(apiTokenId, limit) : this.readySince.all(apiTokenId, since, limit);
    return rows.map((raw) => this.packets.fromDriver(raw));
  }
}
