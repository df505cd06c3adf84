// The three sandbox banks. They answer at once from the deterministic generator and keep no
// state between calls: a statement is ready at the first poll after it is ordered because every
// poll can rebuild it from the account and the period.
import type { Clock } from "../../core/clock";
import { isValidIsoDate } from "../../formats/dates";
import type {
  BalanceResult,
  BankAccountRef,
  BankAdapter,
  PaymentOrder,
  PaymentSubmitResult,
  StatementPeriod,
  StatementPollResult,
} from "../adapter";
import { BankError, BankNotSupportedError } from "../adapter";
import { utcDate } from "./calendar";
import {
  closingBalanceAt,
  generateStatement,
  SANDBOX_DEFAULT_OPENING_BALANCE,
  SANDBOX_DEFAULT_OPS_PER_DAY,
  type SandboxAccountSpec,
} from "./generator";
import { hashString } from "./prng";
import type { SandboxRequestLog } from "./request-log";

export const SANDBOX_BANK = "sandbox";
export const SANDBOX_FAILING_BANK = "sandbox_failing";
export const SANDBOX_NO_STATEMENTS_BANK = "sandbox_no_statements";
const SANDBOX_BANKS: readonly string[] = [SANDBOX_BANK, SANDBOX_FAILING_BANK, SANDBOX_NO_STATEMENTS_BANK];

/** Test tokens (`svc_test_…`) may reach only accounts on these banks. */
export function isSandboxBank(bank: string): boolean {
  return SANDBOX_BANKS.includes(bank);
}

const SANDBOX_SIGN_URL_BASE = "https://sandbox.bank.invalid/sign/";

export interface SandboxDeps {
  clock: Clock;
  log: SandboxRequestLog;
  /**
   * Today's date (YYYY-MM-DD) in the business time zone; the balance is the one at the end of
   * this day. Defaults to the clock's UTC date; the service passes its SVC_TIMEZONE date.
   */
  today?: () => string;
}

export interface SandboxBehaviour {
  statements: "ready" | "failed" | "unsupported";
  payments: "accept" | "reject";
}

const BANK_ERROR = "bank_error";

function hex8(n: number): string {
  return n.toString(16).padStart(8, "0");
}

/** The generator's view of an account; accounts without sandbox settings get the defaults. */
function sandboxSpecOf(account: BankAccountRef): SandboxAccountSpec {
  return {
    account_number: account.account_number,
    bik: account.bik,
    ops_per_day: account.sandbox?.ops_per_day ?? SANDBOX_DEFAULT_OPS_PER_DAY,
    opening_balance: account.sandbox?.opening_balance ?? SANDBOX_DEFAULT_OPENING_BALANCE,
    holder: account.holder ?? null,
  };
}

/** Generator input errors are the account's configuration, not a passing outage: not retryable. */
function asBankError(err: unknown): never {
  if (err instanceof RangeError)
    throw new BankError("invalid_request", err.message, { retryable: false, cause: err });
  throw err;
}

export class SandboxBankAdapter implements BankAdapter {
  readonly bank: string;
  private readonly behaviour: SandboxBehaviour;
  private readonly deps: SandboxDeps;
  private readonly today: () => string;
  private sequence = 0;

  constructor(bank: string, behaviour: SandboxBehaviour, deps: SandboxDeps) {
    this.bank = bank;
    this.behaviour = behaviour;
    this.deps = deps;
    this.today = deps.today ?? (() => utcDate(deps.clock.now()));
  }

  get supportsStatements(): boolean {
    return this.behaviour.statements !== "unsupported";
  }

  async requestStatement(
    account: BankAccountRef,
    period: StatementPeriod,
    clientRef: string,
  ): Promise<{ bank_request_id: string }> {
    if (!this.supportsStatements) throw new BankNotSupportedError(this.bank, "statements");
    const now = this.deps.clock.now();
    this.deps.log.record({
      at: now,
      bank_account_id: account.bank_account_id,
      kind: "statement_request",
      date_from: period.date_from,
      date_to: period.date_to,
      client_ref: clientRef,
    });
    if (
      !isValidIsoDate(period.date_from) ||
      !isValidIsoDate(period.date_to) ||
      period.date_from > period.date_to
    ) {
      throw new BankError("invalid_request", "the period must be two YYYY-MM-DD dates, from ≤ to", {
        retryable: false,
      });
    }
    // Unique per call (time and a per-process sequence), traceable to the order by the hash.
    this.sequence = (this.sequence + 1) % 1_000_000;
    const key = hashString(`${account.bank_account_id}|${period.date_from}|${period.date_to}|${clientRef}`);
    return { bank_request_id: `sbx-req-${hex8(key)}-${now.getTime().toString(36)}-${this.sequence}` };
  }

  async pollStatement(
    account: BankAccountRef,
    _bankRequestId: string,
    period: StatementPeriod,
  ): Promise<StatementPollResult> {
    if (!this.supportsStatements) throw new BankNotSupportedError(this.bank, "statements");
    this.deps.log.record({
      at: this.deps.clock.now(),
      bank_account_id: account.bank_account_id,
      kind: "statement_poll",
      date_from: period.date_from,
      date_to: period.date_to,
      client_ref: null,
    });
    if (this.behaviour.statements === "failed") {
      return {
        status: "failed",
        error: { code: BANK_ERROR, message: "Банк не смог подготовить выписку (sandbox_failing)." },
      };
    }
    try {
      const s = generateStatement(sandboxSpecOf(account), period.date_from, period.date_to);
      return {
        status: "ready",
        opening_balance: s.opening_balance,
        closing_balance: s.closing_balance,
        total_credit: s.total_credit,
        total_debit: s.total_debit,
        operations: s.operations,
      };
    } catch (err) {
      return asBankError(err);
    }
  }

  async getBalance(account: BankAccountRef): Promise<BalanceResult> {
    const asOf = this.deps.clock.now();
    this.deps.log.record({
      at: asOf,
      bank_account_id: account.bank_account_id,
      kind: "balance",
      date_from: null,
      date_to: null,
      client_ref: null,
    });
    try {
      // Today's operations count as booked, so this equals the closing balance of a statement
      // that ends today.
      return { balance: closingBalanceAt(sandboxSpecOf(account), this.today()), as_of: asOf };
    } catch (err) {
      return asBankError(err);
    }
  }

  async submitPayment(
    account: BankAccountRef,
    payment: PaymentOrder,
    idempotencyKey: string,
  ): Promise<PaymentSubmitResult> {
    this.deps.log.record({
      at: this.deps.clock.now(),
      bank_account_id: account.bank_account_id,
      kind: "payment_submit",
      date_from: null,
      date_to: null,
      client_ref: idempotencyKey,
    });
    if (this.behaviour.payments === "reject") {
      return {
        status: "rejected",
        error: { code: BANK_ERROR, message: "Банк отклонил платёж (sandbox_failing)." },
      };
    }
    if (!Number.isSafeInteger(payment.amount) || payment.amount <= 0) {
      return {
        status: "rejected",
        error: { code: "invalid_amount", message: "Сумма платежа должна быть больше нуля" },
      };
    }
    // The same key on the same account gives the same reference, as a bank's idempotency would.
    const material = `${account.bank_account_id}|${idempotencyKey}`;
    const reference = `SBX-${hex8(hashString(material, 1)).toUpperCase()}${hex8(hashString(material, 2)).toUpperCase()}`;
    return {
      status: "accepted",
      bank_reference: reference,
      sign_url: `${SANDBOX_SIGN_URL_BASE}${reference}`,
    };
  }
}

export function createSandboxAdapters(deps: SandboxDeps): SandboxBankAdapter[] {
  return [
    new SandboxBankAdapter(SANDBOX_BANK, { statements: "ready", payments: "accept" }, deps),
    new SandboxBankAdapter(SANDBOX_FAILING_BANK, { statements: "failed", payments: "reject" }, deps),
    new SandboxBankAdapter(
      SANDBOX_NO_STATEMENTS_BANK,
      { statements: "unsupported", payments: "accept" },
      deps,
    ),
  ];
}
