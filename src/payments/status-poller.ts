// Follows documents the bank accepted for signing until the bank says what became of them:
// signed and paid, canceled, or rejected (banks that report it; the others leave items submitted).
// A login the bank refused is not asked again until the operator renews it; a bank that is busy
// or down is asked later, as it says (Retry-After) or after the interval.
import type { AuditEntryInput } from "../audit/audit-log";
import { BankError } from "../banks/adapter";
import type { BankGateway } from "../banks/gateway";
import type { Clock } from "../core/clock";
import { errorText, type Logger } from "../core/logger";
import type { BankAccountRecord } from "../db/repos/accounts";
import type { PaymentRepository } from "./repository";

export interface PaymentStatusPollerDeps {
  repo: PaymentRepository;
  gateway: BankGateway;
  accountOf: (id: string) => BankAccountRecord | null;
  clock: Clock;
  logger: Logger;
  intervalMs: number;
  batchSize?: number;
}

/** A refused login is looked at again this many intervals later (the operator may have renewed it). */
const REFUSED_LOGIN_FACTOR = 20;
/** How long a taken check stays with its poller (in poll intervals): a poller that died mid-check
 *  leaves it due again after this. */
const CLAIM_INTERVALS = 4;

export class PaymentStatusPoller {
  readonly name = "payment-status-poller";
  private timer: ReturnType<typeof setInterval> | null = null;
  private running: Promise<void> | null = null;

  constructor(private readonly deps: PaymentStatusPollerDeps) {}

  start(): void {
    this.timer = setInterval(() => void this.runOnce(), this.deps.intervalMs);
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
  }

  /** One pass over the due items (tests call it directly). */
  runOnce(): Promise<void> {
    this.running ??= this.pass().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  private async pass(): Promise<void> {
    const now = this.deps.clock.now().getTime();
    for (const item of this.deps.repo.dueStatusChecks(now, this.deps.batchSize ?? 100)) {
      // Another poller (another replica) may have taken it since the list was read.
      if (
        !this.deps.repo.claimStatusCheck(
          item.id,
          this.deps.clock.now().getTime(),
          this.later(CLAIM_INTERVALS),
        )
      ) {
        continue;
      }
      const account = this.deps.accountOf(item.bank_account_id);
      const adapter = account ? this.deps.gateway.adapterFor(account) : null;
      if (!account || !adapter?.paymentStatus || !item.bank_reference) {
        this.deps.repo.rescheduleStatusCheck(item.id, Number.MAX_SAFE_INTEGER);
        continue;
      }
      try {
        const answer = await adapter.paymentStatus(this.deps.gateway.refFor(account), item.bank_reference);
        if (answer.status === "pending") {
          this.deps.repo.rescheduleStatusCheck(item.id, this.later(1));
          continue;
        }
        const audit: AuditEntryInput = {
          at: this.deps.clock.now(),
          actor: "system",
          action: "payments.item.status",
          target: item.id,
          arguments: { import_id: item.import_id, doc_number: item.doc_number },
          outcome: answer.status,
        };
        this.deps.repo.settleItem(
          item.id,
          answer.status === "rejected"
            ? { status: "rejected", error_code: answer.error.code, error_message: answer.error.message }
            : { status: answer.status },
          audit,
        );
      } catch (e) {
        const refused = e instanceof BankError && !e.retryable;
        const wait = e instanceof BankError && e.retryAfterMs !== null ? e.retryAfterMs : 0;
        this.deps.repo.rescheduleStatusCheck(
          item.id,
          Math.max(this.later(refused ? REFUSED_LOGIN_FACTOR : 2), this.deps.clock.now().getTime() + wait),
        );
        this.deps.logger.warn("payment status check failed", {
          item_id: item.id,
          error: errorText(e),
        });
      }
    }
  }

  private later(intervals: number): number {
    return this.deps.clock.now().getTime() + this.deps.intervalMs * intervals;
  }
}
