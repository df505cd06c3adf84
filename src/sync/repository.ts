// The sync settings of accounts (account_syncs) and the statements a sync run orders. Portable SQL
// on the stores' port. A run is claimed and its pieces ordered in one transaction of the caller's
// (SyncService.runAccount): the claim moves next_run_ms only when it is due, so of several
// replicas (or a restarted server) one plans a run, and a run killed half way committed nothing.
import type { SqlPort } from "../db/sql-port";
import type { DateRange } from "../statements/coverage";

export interface SyncRow {
  bank_account_id: string;
  enabled: boolean;
  since: string;
  interval_minutes: number;
  next_run_ms: number;
  run_no: number;
  last_run_at: string | null;
  last_error: string | null;
  failures: number;
  error_run: number;
  updated_at: string;
}

type StoredSyncRow = Omit<SyncRow, "enabled"> & { enabled: number | boolean };

export interface SyncSettingsWrite {
  bank_account_id: string;
  enabled: boolean;
  since: string;
  interval_minutes: number;
  /** When the next run is due (switching sync on: at once). */
  next_run_ms: number;
  updated_at: string;
}

export interface SyncPiece extends DateRange {
  id: string;
  bank_account_id: string;
  /** "{run}/{date_from}/{date_to}": the same run plans the same keys on any replica. */
  sync_key: string;
  created_at: string;
}

const rowOf = (row: StoredSyncRow | null): SyncRow | null =>
  row === null
    ? null
    : {
        ...row,
        enabled: row.enabled === true || row.enabled === 1,
        interval_minutes: Number(row.interval_minutes),
        next_run_ms: Number(row.next_run_ms),
        run_no: Number(row.run_no),
        failures: Number(row.failures),
        error_run: Number(row.error_run),
      };

/** The key of a piece of run `run`; the run's number is read back from it (runOfKey). */
export function pieceKey(run: number, range: DateRange): string {
  return `${run}/${range.date_from}/${range.date_to}`;
}

export function runOfKey(key: string): number {
  return Number.parseInt(key.slice(0, key.indexOf("/")), 10);
}

export class SyncRepository {
  private readonly byAccount;
  private readonly upsertStmt;
  private readonly dueStmt;
  private readonly claimStmt;
  private readonly inFlightStmt;
  private readonly insertPieceStmt;
  private readonly triggerStmt;
  private readonly enabledStmt;

  constructor(private readonly port: SqlPort) {
    this.byAccount = port.prepare<StoredSyncRow, [string]>(
      "SELECT * FROM account_syncs WHERE bank_account_id = ?",
    );
    this.upsertStmt = port.prepare<StoredSyncRow, [string, number, string, number, number, string]>(
      `INSERT INTO account_syncs (bank_account_id, enabled, since, interval_minutes, next_run_ms, updated_at)
       VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (bank_account_id) DO UPDATE SET enabled = excluded.enabled, since = excluded.since,
         interval_minutes = excluded.interval_minutes, next_run_ms = excluded.next_run_ms,
         updated_at = excluded.updated_at
       RETURNING *`,
    );
    this.dueStmt = port.prepare<{ bank_account_id: string }, [number, number]>(
      `SELECT bank_account_id FROM account_syncs WHERE enabled = TRUE AND next_run_ms <= ?
        ORDER BY next_run_ms, bank_account_id LIMIT ?`,
    );
    this.claimStmt = port.prepare<StoredSyncRow, [number, string, string, number]>(
      `UPDATE account_syncs SET run_no = run_no + 1, next_run_ms = ?, last_run_at = ?
        WHERE bank_account_id = ? AND enabled = TRUE AND next_run_ms <= ?
       RETURNING *`,
    );
    this.inFlightStmt = port.prepare<DateRange, [string]>(
      "SELECT date_from, date_to FROM statements WHERE bank_account_id = ? AND status = 'processing'",
    );
    this.insertPieceStmt = port.prepare<unknown, [string, string, string, string, string, string]>(
      `INSERT INTO statements (id, bank_account_id, api_token_id, source, external_id, date_from, date_to, status,
                               bank_state, attempts, next_poll_at_ms, created_at, lease_until_ms, sync_key)
       VALUES (?, ?, NULL, 'sync', NULL, ?, ?, 'processing', 'pending', 0, 0, ?, 0, ?)
       ON CONFLICT (bank_account_id, sync_key) DO NOTHING`,
    );
    this.triggerStmt = port.prepare<unknown, [number, string]>(
      "UPDATE account_syncs SET next_run_ms = ? WHERE bank_account_id = ? AND enabled = TRUE",
    );
    this.enabledStmt = port.prepare<StoredSyncRow, []>(
      "SELECT * FROM account_syncs WHERE enabled = TRUE ORDER BY bank_account_id",
    );
  }

  find(bankAccountId: string): SyncRow | null {
    return rowOf(this.byAccount.get(bankAccountId));
  }

  save(s: SyncSettingsWrite): SyncRow {
    const row = this.upsertStmt.get(
      s.bank_account_id,
      s.enabled ? 1 : 0,
      s.since,
      s.interval_minutes,
      s.next_run_ms,
      s.updated_at,
    );
    return rowOf(row)!;
  }

  /** Accounts whose run is due at `nowMs`, the longest waiting first. */
  due(nowMs: number, limit: number): string[] {
    return this.dueStmt.all(nowMs, limit).map((r) => r.bank_account_id);
  }

  /** Every account that syncs (the lag metric). */
  enabled(): SyncRow[] {
    return this.enabledStmt.all().map((r) => rowOf(r)!);
  }

  /**
   * Takes the account's due run: its number goes up and its next run moves to `nextRunMs`. Null
   * when it is not due (another replica has just run it) or sync is off.
   */
  claim(bankAccountId: string, nowMs: number, nowIso: string, nextRunMs: number): SyncRow | null {
    return rowOf(this.claimStmt.get(nextRunMs, nowIso, bankAccountId, nowMs));
  }

  /** The periods of the account's statements still waiting for the bank (any source). */
  inFlight(bankAccountId: string): DateRange[] {
    return this.inFlightStmt.all(bankAccountId);
  }

  /** Orders one piece; false when its key exists already (nothing is ordered twice). */
  insertPiece(p: SyncPiece): boolean {
    return (
      this.insertPieceStmt.run(p.id, p.bank_account_id, p.date_from, p.date_to, p.created_at, p.sync_key)
        .changes === 1
    );
  }

  /**
   * Brings an enabled account's next run forward to `nowMs`, but not sooner than `minGapMs` after
   * its last run began (a burst of the bank's notices orders today once, not once per notice);
   * false when sync is off.
   */
  trigger(bankAccountId: string, nowMs: number, minGapMs: number): boolean {
    return this.port.transaction(() => {
      const row = this.find(bankAccountId);
      if (!row?.enabled) return false;
      const lastRunMs = row.last_run_at ? Date.parse(row.last_run_at) : 0;
      const dueMs = Math.min(row.next_run_ms, Math.max(nowMs, lastRunMs + minGapMs));
      this.triggerStmt.run(dueMs, bankAccountId);
      return true;
    });
  }

  /**
   * A piece of run `run` the bank refused: the first refusal of a run counts one more failure in a
   * row; the next run waits `waitMs(failures)` from the run's start.
   */
  recordFailure(
    bankAccountId: string,
    run: number,
    message: string,
    waitMs: (failures: number) => number,
  ): void {
    this.port.transaction(() => {
      const row = this.find(bankAccountId);
      if (!row) return;
      const failures = run > row.error_run ? row.failures + 1 : row.failures;
      const startedMs = row.last_run_at ? Date.parse(row.last_run_at) : 0;
      const nextRunMs = Math.max(row.next_run_ms, startedMs + waitMs(failures));
      this.port
        .prepare(
          `UPDATE account_syncs SET failures = ?, error_run = ?, last_error = ?, next_run_ms = ?
            WHERE bank_account_id = ?`,
        )
        .run(failures, Math.max(run, row.error_run), message, nextRunMs, bankAccountId);
    });
  }

  /** A piece of run `run` is ready: a later run than the last refused one ends the failures, and
   *  the next run comes an interval after the last again. */
  recordSuccess(bankAccountId: string, run: number): void {
    this.port.transaction(() => {
      const row = this.find(bankAccountId);
      if (!row || run <= row.error_run || (row.failures === 0 && row.last_error === null)) return;
      const startedMs = row.last_run_at ? Date.parse(row.last_run_at) : 0;
      const nextRunMs = Math.min(row.next_run_ms, startedMs + row.interval_minutes * 60_000);
      this.port
        .prepare(
          "UPDATE account_syncs SET failures = 0, last_error = NULL, next_run_ms = ? WHERE bank_account_id = ?",
        )
        .run(nextRunMs, bankAccountId);
    });
  }
}
