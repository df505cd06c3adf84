// The banks module's public surface.
export type {
  AccountHolder,
  BalanceResult,
  BankAccountRef,
  BankAdapter,
  BankErrorInfo,
  PaymentOrder,
  PaymentPayee,
  PaymentSubmitResult,
  ReadyStatement,
  SandboxSettings,
  StatementPeriod,
  StatementPollResult,
} from "./adapter";
export { BankError, BankNotSupportedError, UnknownBankError } from "./adapter";
export { BankRegistry, createSandboxRegistry } from "./registry";
export {
  createSandboxAdapters,
  isSandboxBank,
  SANDBOX_BANK,
  SANDBOX_BANKS,
  SANDBOX_FAILING_BANK,
  SANDBOX_NO_STATEMENTS_BANK,
  SANDBOX_SIGN_URL_BASE,
  SandboxBankAdapter,
  type SandboxBehaviour,
  type SandboxDeps,
  sandboxSpecOf,
} from "./sandbox/adapter";
export {
  closingBalanceAt,
  dayNet,
  type GeneratedStatement,
  generateDay,
  generateStatement,
  openingBalanceAt,
  SANDBOX_ANCHOR_DATE,
  SANDBOX_DEFAULT_OPENING_BALANCE,
  SANDBOX_DEFAULT_OPS_PER_DAY,
  SANDBOX_MAX_OPS_PER_DAY,
  SANDBOX_MIN_OPS_PER_DAY,
  type SandboxAccountSpec,
} from "./sandbox/generator";
export {
  InMemorySandboxRequestLog,
  type SandboxRequestEntry,
  type SandboxRequestKind,
  type SandboxRequestLog,
} from "./sandbox/request-log";
