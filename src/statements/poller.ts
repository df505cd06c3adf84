// The background worker that talks to banks: sends the requests of new orders (the outbox) and
// polls requested ones until the bank answers. Bounded batches, bounded concurrency, per-bank
// pacing; one failing statement never stops the others.

import { BankError } from "../banks/adapter";
import type { BankGateway } from "../banks/gateway";
import type { Clock } from "../core/clock";
import { errorText, type Logger } from "../core/logger";
import { type FleetSchedule, fleetInterval } from "../db/fleet-schedule";
import type { BankAccountRecord } from "../db/repos/accounts";
import type { StatementOperation } from "../formats/types";
import type { StatementRepository, StatementRow } from "./repository";

export interface PollerDeps {
  repo: StatementRepository;
  gateway: BankGateway;
  accountOf: (id: string) => BankAccountRecord | null;
  clock: Clock;
  logger: Logger;
  today: () => string;
  intervalMs: number;
  /** How long a statement is held without renewing (default LEASE_MS). */
  leaseMs?: number;
  batchSize?: number;
  concurrency?: number;
  /** Minimum gap between two calls to one bank; real banks allow 5–20 requests per second. */
  pacingMs?: (bank: string) => number;
  /** Told how a statement's bank call ended (the account's sync backs off on refusals). */
  onSettled?: (row: StatementRow, outcome: SettledOutcome) => void;
}

/** How a statement's bank call ended: ready, refused for good, or failed and tried again later. */
export type SettledOutcome = { status: "ready" } | { status: "failed" | "retrying"; message: string };

const STORE_CHUNK = 2000;
/** How long a poller holds a statement without renewing (storing renews it between chunks): longer
 *  than a bank call may take; what another replica waits after this one died mid-poll. */
const LEASE_MS = 2 * 60_000;
const MAX_BACKOFF_FACTOR = 10;

const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

export class StatementPoller {
  private timer: ReturnType<typeof setInterval> | null = null;
  private readonly inFlight = new Map<string, Promise<void>>();
  private readonly nextSlot = new Map<string, number>();
  private ticking: Promise<void> | null = null;
  private stopped = false;
  private lastPass: number | null = null;

  constructor(private readonly deps: PollerDeps) {}

  /** When the last pass over due statements finished without failing (clock ms); null before one. */
  get lastPassAtMs(): number | null {
    return this.lastPass;
  }

  readonly name = "statement-poller";

  start(): void {
    this.stopped = false;
    const tick = () =>
      void this.tick().catch((e) =>
        this.deps.logger.error("statement poll pass failed", {
          error: errorText(e),
        }),
      );
    this.timer = setInterval(tick, this.deps.intervalMs);
    tick();
  }

  /** Stops taking work and waits for what is in flight. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.ticking;
    await Promise.allSettled([...this.inFlight.values()]);
  }

  /** Sends a new order's bank request now rather than at the next tick. */
  dispatch(statementId: string): void {
    if (this.stopped) return;
    const row = this.deps.repo.findById(statementId);
    if (row) void this.process(row);
  }

  /** One pass over due statements; returns when the pass is done (tests call it directly). */
  tick(): Promise<void> {
    if (this.ticking) return this.ticking;
    this.ticking = this.runTick().finally(() => {
      this.ticking = null;
    });
    return this.ticking;
  }

  private async runTick(): Promise<void> {
    const due = this.deps.repo.due(this.deps.clock.now().getTime(), this.deps.batchSize ?? 200);
    const queue = due.filter((row) => !this.inFlight.has(row.id));
    const workers = Array.from({ length: Math.min(this.deps.concurrency ?? 4, queue.length) }, async () => {
      for (let row = queue.shift(); row && !this.stopped; row = queue.shift()) await this.process(row);
    });
    await Promise.all(workers);
    this.lastPass = this.deps.clock.now().getTime();
  }

  /** Waits until every statement handled so far is settled (for tests and shutdown). */
  async idle(): Promise<void> {
    while (this.inFlight.size > 0 || this.ticking) {
      await Promise.allSettled([...this.inFlight.values(), this.ticking]);
    }
  }

  private process(row: StatementRow): Promise<void> {
    const existing = this.inFlight.get(row.id);
    if (existing) return existing;
    const work = this.handle(row)
      .catch((e) => this.onError(row, e))
      // Recording the failure writes too; with the database read-only or full that fails as well,
      // and a rejection here would be unhandled (it would end the process).
      .catch((e) =>
        this.deps.logger.error("statement poll failure could not be recorded", {
          statement_id: row.id,
          error: errorText(e),
        }),
      )
      .finally(() => this.inFlight.delete(row.id));
    this.inFlight.set(row.id, work);
    return work;
  }

  private async handle(initial: StatementRow): Promise<void> {
    // Taken, or left: another poller (another replica) may hold it, or it has moved on since it was
    // selected. The lease's row is the database's, not a cached one.
    const row = this.deps.repo.takeLease(
      initial.id,
      this.now(),
      this.now() + (this.deps.leaseMs ?? LEASE_MS),
    );
    if (row === null) return;
    try {
      await this.work(row);
    } catch (e) {
      // Recorded while the lease is still held: nobody polls it again before its retry is set.
      this.onError(row, e);
    } finally {
      this.deps.repo.releaseLease(row.id);
    }
  }

  private now(): number {
    return this.deps.clock.now().getTime();
  }

  private async work(row: StatementRow): Promise<void> {
    const account = this.deps.accountOf(row.bank_account_id);
    if (!account) {
      this.deps.repo.markFailed(row.id, "bank_error", "Счёт не найден");
      return;
    }
    const adapter = this.deps.gateway.adapterFor(account);
    const ref = this.deps.gateway.refFor(account);
    const period = { date_from: row.date_from, date_to: row.date_to };
    await this.pace(account.bank);

    if (row.bank_state === "pending") {
      // The statement id is the bank-side idempotency reference: a resend after a crash is recognisable.
      const { bank_request_id } = await adapter.requestStatement(ref, period, row.id);
      this.deps.repo.markRequested(row.id, bank_request_id, this.deps.clock.now().getTime());
      return;
    }

    const result = await adapter.pollStatement(ref, row.bank_request_id ?? "", period);
    if (result.status === "processing") {
      this.deps.repo.reschedule(row.id, this.deps.clock.now().getTime() + this.deps.intervalMs);
      return;
    }
    if (result.status === "failed") {
      this.deps.repo.markFailed(
        row.id,
        result.error.code,
        result.error.message,
        result.error.bank_code ?? null,
      );
      this.settled(row, { status: "failed", message: result.error.message });
      return;
    }

    // Stored in chunks, each its own transaction, yielding between them so HTTP keeps being served.
    let seq = 0;
    let chunk: StatementOperation[] = [];
    const docTypes = new Set<string>();
    const store = () => {
      for (const kind of this.deps.repo.storeOperations(row.id, row.bank_account_id, seq + 1, chunk))
        docTypes.add(kind);
      seq += chunk.length;
    };
    for (const op of result.operations) {
      chunk.push(op);
      if (chunk.length === STORE_CHUNK) {
        store();
        chunk = [];
        this.deps.repo.extendLease(row.id, this.now() + (this.deps.leaseMs ?? LEASE_MS));
        await yieldToEventLoop();
      }
    }
    if (chunk.length > 0) store();
    const fetchedAt = this.deps.clock.now().toISOString();
    const endsToday = row.date_to === this.deps.today();
    this.deps.repo.markReady(
      row.id,
      {
        opening_balance: result.opening_balance,
        closing_balance: result.closing_balance,
        total_credit: result.total_credit,
        total_debit: result.total_debit,
        operations_count: seq,
        fetched_at: fetchedAt,
        doc_types: docTypes,
      },
      endsToday
        ? {
            bank_account_id: account.id,
            balance: result.closing_balance,
            currency: account.currency,
            as_of: fetchedAt,
          }
        : null,
    );
    this.settled(row, { status: "ready" });
  }

  /** Tells onSettled; what it does is not the poller's to fail on. */
  private settled(row: StatementRow, outcome: SettledOutcome): void {
    try {
      this.deps.onSettled?.(row, outcome);
    } catch (e) {
      this.deps.logger.error("statement outcome not recorded", { statement_id: row.id, error: errorText(e) });
    }
  }

  private onError(row: StatementRow, error: unknown): void {
    const fresh = this.deps.repo.findById(row.id) ?? row;
    if (error instanceof BankError && !error.retryable) {
      this.deps.repo.markFailed(row.id, "bank_error", error.message, error.bankCode);
      this.settled(row, { status: "failed", message: error.message });
      return;
    }
    // Capped backoff; a bank that said when to come back (Retry-After) is not asked sooner.
    const factor = Math.min(2 ** fresh.attempts, MAX_BACKOFF_FACTOR);
    const wait = Math.max(
      this.deps.intervalMs * factor,
      error instanceof BankError ? (error.retryAfterMs ?? 0) : 0,
    );
    this.deps.repo.reschedule(row.id, this.deps.clock.now().getTime() + wait);
    this.settled(row, { status: "retrying", message: errorText(error) });
    this.deps.logger.warn("statement poll failed; will retry", {
      statement_id: row.id,
      error: errorText(error),
    });
  }

  private async pace(bank: string): Promise<void> {
    const gap = this.deps.pacingMs?.(bank) ?? 0;
    if (gap <= 0) return;
    const now = Date.now();
    const slot = Math.max(now, this.nextSlot.get(bank) ?? 0);
    this.nextSlot.set(bank, slot + gap);
    if (slot > now) await new Promise((resolve) => setTimeout(resolve, slot - now));
  }
}

/** Refreshes every account's cached balance from its bank, every `intervalMs`. */
export class BalanceRefresher {
  readonly name = "balance-refresher";
  private timer: ReturnType<typeof setInterval> | null = null;
  private running: Promise<void> | null = null;

  constructor(
    private readonly accounts: () => BankAccountRecord[],
    private readonly refresh: (account: BankAccountRecord) => Promise<unknown>,
    private readonly intervalMs: number,
    private readonly logger: Logger,
    /** With several replicas, one refreshes per interval. */
    private readonly schedule: FleetSchedule | null = null,
  ) {}

  start(): void {
    this.timer = fleetInterval(this.schedule, this.name, this.intervalMs, () => void this.runOnce());
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
  }

  runOnce(): Promise<void> {
    this.running ??= (async () => {
      for (const account of this.accounts()) {
        try {
          await this.refresh(account);
        } catch (e) {
          this.logger.warn("balance refresh failed", {
            bank_account_id: account.id,
            error: e instanceof Error ? e.message : String(e),
          });
        }
      }
    })().finally(() => {
      this.running = null;
    });
    return this.running;
  }
}
