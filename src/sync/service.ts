// Accounts that keep themselves fresh (decisions §16): the sync settings of an account, the runs
// that order its missing days as ordinary statements (source "sync": the poller sends and polls
// them as any other), the backoff after the bank refuses a piece, and the lag metric's reading.
// Knows nothing of HTTP.
import type { AuditLog } from "../audit/audit-log";
import type { BankGateway } from "../banks/gateway";
import { type Clock, dateInZone, dayStartInZone, newId } from "../core/clock";
import { ApiError, validationError } from "../core/errors";
import type { BankAccountRecord } from "../db/repos/accounts";
import { isValidIsoDate, nextIsoDay, shiftIsoDay } from "../formats/dates";
import type { CoverageReader } from "../statements/coverage";
import type { SettledOutcome } from "../statements/poller";
import type { StatementRow } from "../statements/repository";
import type { SyncSettingsInput, SyncView } from "./model";
import { planPieces } from "./plan";
import { pieceKey, runOfKey, type SyncRepository, type SyncRow } from "./repository";

const DAY_MS = 86_400_000;
const DEFAULT_SINCE_DAYS = 90;
const DEFAULT_INTERVAL_MINUTES = 60;
const MIN_INTERVAL_MINUTES = 5;
const MAX_INTERVAL_MINUTES = 1440;
/** The days the lag reading looks at first (a scrape reads every syncing account). */
const LAG_WINDOW_DAYS = 7;
/** A bank's notice runs a sync at once, but at most once a minute. */
const MIN_TRIGGER_GAP_MS = 60_000;
/** How far back `since` may go. */
const MAX_SINCE_YEARS = 3;

export interface SyncServiceDeps {
  clock: Clock;
  timezone: string;
  repo: SyncRepository;
  /** Coverage on the stores' own port (the same computation as the agent tools'). */
  coverage: CoverageReader;
  accountOf: (id: string) => BankAccountRecord | null;
  gateway: BankGateway;
  audit: AuditLog;
  atomically: <T>(fn: () => T) => T;
  /** Sends a new piece's bank request now (the poller's dispatch). */
  dispatch: (statementId: string) => void;
}

/** The wait before the next run: the interval, doubled for each run in a row the bank refused,
 *  at most a day. */
function backoffMs(intervalMinutes: number, failures: number): number {
  return Math.min(intervalMinutes * 60_000 * 2 ** Math.min(failures, 20), DAY_MS);
}

export interface SyncLag {
  bank_account_id: string;
  seconds: number;
}

export class SyncService {
  constructor(private readonly deps: SyncServiceDeps) {}

  private today(): string {
    return dateInZone(this.deps.clock.now(), this.deps.timezone);
  }

  private account(bankAccountId: string): BankAccountRecord {
    const account = this.deps.accountOf(bankAccountId);
    if (!account) throw new ApiError("not_found", "Счёт не найден");
    return account;
  }

  /** GET …/sync: an account that never synced shows the defaults, switched off. */
  view(bankAccountId: string): SyncView {
    this.account(bankAccountId);
    return this.viewOf(bankAccountId, this.deps.repo.find(bankAccountId));
  }

  private viewOf(bankAccountId: string, row: SyncRow | null): SyncView {
    return {
      bank_account_id: bankAccountId,
      enabled: row?.enabled ?? false,
      since: row?.since ?? shiftIsoDay(this.today(), -DEFAULT_SINCE_DAYS),
      interval_minutes: row?.interval_minutes ?? DEFAULT_INTERVAL_MINUTES,
      last_run_at: row?.last_run_at ?? null,
      next_run_at: row?.enabled ? new Date(row.next_run_ms).toISOString() : null,
      last_error: row?.last_error ?? null,
    };
  }

  /** PUT …/sync: switches sync on or off and tunes it; switched on, a run is due at once. */
  configure(bankAccountId: string, input: SyncSettingsInput): SyncView {
    const account = this.account(bankAccountId);
    const today = this.today();
    if (input.since !== undefined) {
      if (!isValidIsoDate(input.since)) throw validationError("since", "since: ожидается дата YYYY-MM-DD");
      if (input.since > today) throw validationError("since", "since не может быть позже сегодняшнего дня");
      const earliest = `${Number(today.slice(0, 4)) - MAX_SINCE_YEARS}${today.slice(4)}`;
      if (input.since < earliest)
        throw validationError("since", `since не может быть раньше чем ${MAX_SINCE_YEARS} года назад`);
    }
    const interval = input.interval_minutes;
    if (
      interval !== undefined &&
      (!Number.isInteger(interval) || interval < MIN_INTERVAL_MINUTES || interval > MAX_INTERVAL_MINUTES)
    ) {
      throw validationError(
        "interval_minutes",
        `interval_minutes: от ${MIN_INTERVAL_MINUTES} до ${MAX_INTERVAL_MINUTES} минут`,
      );
    }
    if (input.enabled) this.checkCanSync(account);
    const existing = this.deps.repo.find(bankAccountId);
    const now = this.deps.clock.now();
    const row = this.deps.repo.save({
      bank_account_id: bankAccountId,
      enabled: input.enabled,
      since: input.since ?? existing?.since ?? shiftIsoDay(today, -DEFAULT_SINCE_DAYS),
      interval_minutes: interval ?? existing?.interval_minutes ?? DEFAULT_INTERVAL_MINUTES,
      next_run_ms: input.enabled ? now.getTime() : (existing?.next_run_ms ?? 0),
      updated_at: now.toISOString(),
    });
    return this.viewOf(bankAccountId, row);
  }

  /** Statements arrive from files on `file` accounts; a bank without statements cannot be asked. */
  private checkCanSync(account: BankAccountRecord): void {
    if (account.bank === "file") {
      throw validationError(
        "enabled",
        "Выписки счёта загружаются из файлов банка: такой счёт не синхронизируется",
      );
    }
    if (!this.deps.gateway.adapterFor(account).supportsStatements) {
      throw new ApiError("bank_not_supported", "Банк этого счёта не поддерживает выписки", {
        bank: account.bank,
      });
    }
  }

  /** Makes an account's run due now, or a minute after its last began (a bank's notice of a
   *  payment); false when it does not sync. */
  trigger(bankAccountId: string): boolean {
    return this.deps.repo.trigger(bankAccountId, this.deps.clock.now().getTime(), MIN_TRIGGER_GAP_MS);
  }

  /** Accounts whose run is due now, at most `limit` of them. */
  due(limit: number): string[] {
    return this.deps.repo.due(this.deps.clock.now().getTime(), limit);
  }

  /**
   * One run of an account, if it is due: its pieces ordered, each audited (`statement.sync`), all
   * in one transaction with the claim, then sent to the bank. The ids of the pieces ordered.
   */
  runAccount(bankAccountId: string): string[] {
    const now = this.deps.clock.now();
    const nowMs = now.getTime();
    const today = dateInZone(now, this.deps.timezone);
    const ordered = this.deps.atomically((): string[] => {
      const row = this.deps.repo.find(bankAccountId);
      const account = this.deps.accountOf(bankAccountId);
      if (!row?.enabled || row.next_run_ms > nowMs || !account) return [];
      const claimed = this.deps.repo.claim(
        bankAccountId,
        nowMs,
        now.toISOString(),
        nowMs + backoffMs(row.interval_minutes, row.failures),
      );
      if (!claimed || !this.deps.gateway.adapterFor(account).supportsStatements) return [];
      const coverage = this.deps.coverage.read(bankAccountId, claimed.since, today, now);
      const ids: string[] = [];
      for (const range of planPieces(coverage, this.deps.repo.inFlight(bankAccountId))) {
        const id = newId();
        const piece = {
          id,
          bank_account_id: bankAccountId,
          ...range,
          sync_key: pieceKey(claimed.run_no, range),
          created_at: now.toISOString(),
        };
        if (!this.deps.repo.insertPiece(piece)) continue;
        this.deps.audit.write({
          at: now,
          actor: "system",
          action: "statement.sync",
          target: id,
          arguments: { bank_account_id: bankAccountId, date_from: range.date_from, date_to: range.date_to },
          outcome: "ok",
        });
        ids.push(id);
      }
      return ids;
    });
    for (const id of ordered) this.deps.dispatch(id);
    return ordered;
  }

  /** What the poller learnt of a sync piece: a refusal backs the account's runs off, a ready
   *  piece of a later run ends that. Other statements are not the sync's. */
  pieceSettled(row: StatementRow, outcome: SettledOutcome): void {
    if (row.source !== "sync" || row.sync_key === null) return;
    const run = runOfKey(row.sync_key);
    if (outcome.status === "ready") {
      this.deps.repo.recordSuccess(row.bank_account_id, run);
      return;
    }
    const sync = this.deps.repo.find(row.bank_account_id);
    if (!sync) return;
    this.deps.repo.recordFailure(row.bank_account_id, run, outcome.message, (failures) =>
      backoffMs(sync.interval_minutes, failures),
    );
  }

  /**
   * Per syncing account, seconds from the end of its newest final day to now (the metric
   * svc_sync_lag_seconds); without any final day since `since`, from the start of `since`.
   */
  lags(): SyncLag[] {
    const now = this.deps.clock.now();
    const today = dateInZone(now, this.deps.timezone);
    const newestCovered = (id: string, from: string) => {
      const { covered } = this.deps.coverage.read(id, from, today, now);
      return covered[covered.length - 1]?.date_to;
    };
    return this.deps.repo.enabled().map((row) => {
      // Usually yesterday: the last week is read first, the whole period only when it has none.
      const lastWeek = shiftIsoDay(today, -LAG_WINDOW_DAYS);
      const newest =
        (lastWeek > row.since ? newestCovered(row.bank_account_id, lastWeek) : undefined) ??
        newestCovered(row.bank_account_id, row.since) ??
        shiftIsoDay(row.since, -1);
      const endMs = dayStartInZone(nextIsoDay(newest), this.deps.timezone).getTime();
      return { bank_account_id: row.bank_account_id, seconds: Math.max(0, (now.getTime() - endMs) / 1000) };
    });
  }
}
