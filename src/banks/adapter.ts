// The contract between the service and a bank. Adapters know nothing of HTTP, agents or the
// database: they take an account and return plain data, money in integer kopecks.
import { type AnsweredAsApiError, ApiError } from "../core/errors";
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
  /** The bank's sandbox or its real service; a bank with both must never mix them. */
  environment: BankEnvironment;
  /** The bank login the account is reached through (null: none stored). */
  connection_id: string | null;
  /** Decrypted bank login as it was when the ref was built; opaque to everything but the adapter. */
  credentials: unknown;
}

export type BankEnvironment = "production" | "sandbox";

/**
 * Where a bank's login lives between calls. An adapter whose tokens rotate (OAuth) renews them
 * through this, so that a new refresh token is committed before the new access token is used
 * and only one renewal runs at a time per login, across processes.
 */
export interface ConnectionStore {
  /** The login as committed now (another process may have renewed it since the ref was built). */
  read(connectionId: string): unknown;
  /**
   * Runs `renew` alone for this login (in this process and across processes) with the freshest
   * credentials. What it returns is sealed and committed before `renew`'s caller sees it; null
   * keeps the stored credentials (someone else renewed them meanwhile).
   */
  renew(connectionId: string, renew: (current: unknown) => Promise<unknown | null>): Promise<unknown>;
  /** The bank refused the login: the operator has to renew it; nothing retries until then. */
  refused(connectionId: string, message: string): void;
}

/** Inclusive calendar dates, YYYY-MM-DD. */
export interface StatementPeriod {
  date_from: string;
  date_to: string;
}

export interface BankErrorInfo {
  code: string;
  message: string;
  /** The bank's own error code, when it gave one (shown as details.bank_code). */
  bank_code?: string;
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

/** What became of a document the bank accepted for signing. */
export type PaymentStatusResult =
  | { status: "pending" }
  | { status: "signed_and_paid" }
  | { status: "canceled" }
  | { status: "rejected"; error: BankErrorInfo };

/** An account the bank shows through a login (account discovery). */
export interface DiscoveredAccount {
  account_number: string;
  bik: string;
  currency: string;
  /** The bank's word for it, e.g. Enabled, Disabled. */
  status: string;
}

/** The bank's consent flow: the operator's browser goes to the bank and comes back with a code. */
export interface BankConsentFlow {
  /** Whether this kind of login goes through the consent flow (OAuth does; a ready token does not). */
  appliesTo(credentials: unknown): boolean;
  /** The bank's page where the customer approves access; it returns to `redirectUri` with `state`. */
  start(credentials: unknown, redirectUri: string, state: string): Promise<string>;
  /** The login completed with the tokens the code is exchanged for. */
  finish(credentials: unknown, code: string, redirectUri: string): Promise<unknown>;
}

/** A login as the operator gives it, checked before it is sealed. */
export type CredentialsCheck =
  | { ok: true; status: "active" | "consent_required" }
  | {
      ok: false;
      message: string /** The field of the request at fault (default `credentials`). */;
      field?: string;
    };

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
  /** Banks that report what became of a submitted document; absent: the item stays submitted. */
  paymentStatus?(account: BankAccountRef, bankReference: string): Promise<PaymentStatusResult>;
  /** Banks whose login can list the customer's accounts. */
  listAccounts?(account: BankAccountRef): Promise<DiscoveredAccount[]>;
  /** Banks that take a login: checks its shape (absent: any login is stored as given). */
  checkCredentials?(credentials: unknown, environment: BankEnvironment): CredentialsCheck;
  /** Banks whose login can be tried before it is stored (a first logon); absent: not tried. */
  verifyCredentials?(credentials: unknown, environment: BankEnvironment): Promise<CredentialsCheck>;
  /** Banks whose login is completed by the customer approving access in the bank (OAuth). */
  consent?: BankConsentFlow;
  /** The least gap between two calls to this bank from one process (its published rate limit). */
  readonly minIntervalMs?: number;
  /** Banks with a separate sandbox service; others accept only "production". */
  readonly environments?: readonly BankEnvironment[];
}

/**
 * The bank could not be reached or did not answer sensibly. `retryable` tells a poller whether
 * trying again later can help (timeouts, 429, 5xx) or not (bad credentials, malformed request).
 */
export class BankError extends Error implements AnsweredAsApiError {
  readonly code: string;
  readonly retryable: boolean;
  /** The bank asked to wait this long before the next call (Retry-After). */
  readonly retryAfterMs: number | null;
  /** The bank's own error code (shown to the client as details.bank_code). */
  readonly bankCode: string | null;

  constructor(
    code: string,
    message: string,
    options: { retryable?: boolean; cause?: unknown; retryAfterMs?: number; bankCode?: string } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "BankError";
    this.code = code;
    this.retryable = options.retryable ?? true;
    this.retryAfterMs = options.retryAfterMs ?? null;
    this.bankCode = options.bankCode ?? null;
  }

  /** A bank's refusal or silence that reached a route waiting for the bank (a balance refresh, the
   *  account discovery): the bank's message and code, never a stack. */
  toApiError(): ApiError {
    return new ApiError("bank_error", this.message, this.bankCode ? { bank_code: this.bankCode } : undefined);
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
