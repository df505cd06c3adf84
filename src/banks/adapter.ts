// The contract between the service and a bank. Adapters know nothing of HTTP, agents or the
// database: they take an account and return plain data, money in integer kopecks.
import type { StatementOperation } from "../formats/types";

/** Volume and starting point of an account on a sandbox bank. */
export interface SandboxSettings {
  ops_per_day: number;
  /** Kopecks at the start of 2020-01-01 (the sandbox's anchor date). */
  opening_balance: number;
}

/** The account owner's details as a bank prints them in statements. */
export interface AccountHolder {
  name: string;
  inn: string;
  kpp: string;
}

export interface BankAccountRef {
  bank_account_id: string;
  bank: string;
  /** Full 20-digit number. */
  account_number: string;
  bik: string;
  currency: string;
  /** Set for accounts on sandbox banks; null elsewhere (sandbox banks then use their defaults). */
  sandbox: SandboxSettings | null;
  /** The company owning the account, when known; the sandbox shows a placeholder otherwise. */
  holder?: AccountHolder | null;
  /** Decrypted bank login; opaque to everything but the adapter. */
  credentials: unknown;
}

/** Inclusive calendar dates, YYYY-MM-DD. */
export interface StatementPeriod {
  date_from: string;
  date_to: string;
}

export interface BankErrorInfo {
  code: string;
  message: string;
}

export interface ReadyStatement {
  status: "ready";
  opening_balance: number;
  closing_balance: number;
  total_credit: number;
  total_debit: number;
  /**
   * May be a lazy generator (a statement can hold 155k operations): iterate it once, storing as
   * you go, rather than collecting it into an array.
   */
  operations: Iterable<StatementOperation>;
}

export type StatementPollResult =
  | { status: "processing" }
  | ReadyStatement
  | { status: "failed"; error: BankErrorInfo };

export interface BalanceResult {
  /** Kopecks. */
  balance: number;
  as_of: Date;
}

export interface PaymentPayee {
  name: string;
  inn: string;
  kpp: string;
  account: string;
  bank_bik: string;
}

export interface PaymentOrder {
  doc_number: string;
  /** YYYY-MM-DD */
  doc_date: string;
  /** Kopecks, positive. */
  amount: number;
  currency: string;
  purpose: string;
  payee: PaymentPayee;
}

export type PaymentSubmitResult =
  | { status: "accepted"; bank_reference: string; sign_url: string }
  | { status: "rejected"; error: BankErrorInfo };

export interface BankAdapter {
  readonly bank: string;
  readonly supportsStatements: boolean;
  /** False for a bank that cannot be asked for a balance (statements from files); default true. */
  readonly supportsBalances?: boolean;
  /** Orders a statement; throws BankNotSupportedError when supportsStatements is false. */
  requestStatement(
    account: BankAccountRef,
    period: StatementPeriod,
    clientRef: string,
  ): Promise<{ bank_request_id: string }>;
  pollStatement(
    account: BankAccountRef,
    bankRequestId: string,
    period: StatementPeriod,
  ): Promise<StatementPollResult>;
  getBalance(account: BankAccountRef): Promise<BalanceResult>;
  /** A bank's answer (accepted or rejected) is a result; only transport failures throw. */
  submitPayment(
    account: BankAccountRef,
    payment: PaymentOrder,
    idempotencyKey: string,
  ): Promise<PaymentSubmitResult>;
}

/**
 * The bank could not be reached or did not answer sensibly. `retryable` tells a poller whether
 * trying again later can help (timeouts, 429, 5xx) or not (bad credentials, malformed request).
 */
export class BankError extends Error {
  readonly code: string;
  readonly retryable: boolean;

  constructor(code: string, message: string, options: { retryable?: boolean; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "BankError";
    this.code = code;
    this.retryable = options.retryable ?? true;
  }
}

/** The bank has no such service (ordering statements from `sandbox_no_statements`). */
export class BankNotSupportedError extends Error {
  readonly code = "bank_not_supported";
  readonly bank: string;

  constructor(bank: string, operation: string) {
    super(`bank ${bank} does not support ${operation}`);
    this.name = "BankNotSupportedError";
    this.bank = bank;
  }
}

/** No adapter is registered under this bank name. */
export class UnknownBankError extends Error {
  readonly code = "unknown_bank";
  readonly bank: string;

  constructor(bank: string) {
    super(`no adapter for bank ${JSON.stringify(bank)}`);
    this.name = "UnknownBankError";
    this.bank = bank;
  }
}
