// Every call to a bank counted and timed, whatever the adapter: the gateway hands out adapters
// wrapped by this. Outcomes: "ok" (the bank answered, whatever it said), "rate_limited" (a 429 the
// adapter reported as BankError code "rate_limited"), "error" (anything else thrown).
import type { BankCallOutcome, Metrics } from "../core/metrics";
import { type BankAdapter, BankError } from "./adapter";

function outcomeOf(error: unknown): BankCallOutcome {
  return error instanceof BankError && error.code === "rate_limited" ? "rate_limited" : "error";
}

export function meteredAdapter(adapter: BankAdapter, metrics: Metrics): BankAdapter {
  const timed = async <T>(kind: string, call: () => Promise<T>): Promise<T> => {
    const started = performance.now();
    let outcome: BankCallOutcome = "ok";
    try {
      return await call();
    } catch (error) {
      outcome = outcomeOf(error);
      throw error;
    } finally {
      metrics.bankCall(adapter.bank, kind, outcome, (performance.now() - started) / 1000);
    }
  };
  return {
    bank: adapter.bank,
    supportsStatements: adapter.supportsStatements,
    supportsBalances: adapter.supportsBalances,
    requestStatement: (account, period, clientRef) =>
      timed("statement_request", () => adapter.requestStatement(account, period, clientRef)),
    pollStatement: (account, bankRequestId, period) =>
      timed("statement_poll", () => adapter.pollStatement(account, bankRequestId, period)),
    getBalance: (account) => timed("balance", () => adapter.getBalance(account)),
    submitPayment: (account, payment, key) =>
      timed("payment_submit", () => adapter.submitPayment(account, payment, key)),
    paymentStatus: adapter.paymentStatus
      ? (account, reference) => timed("payment_status", () => adapter.paymentStatus!(account, reference))
      : undefined,
    listAccounts: adapter.listAccounts
      ? (account) => timed("accounts", () => adapter.listAccounts!(account))
      : undefined,
    checkCredentials: adapter.checkCredentials,
    verifyCredentials: adapter.verifyCredentials,
    consent: adapter.consent,
    environments: adapter.environments,
    minIntervalMs: adapter.minIntervalMs,
  };
}
