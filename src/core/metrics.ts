// What the service reports about itself. Layers that count things (the audit batcher, the bank
// gateway, the agent endpoint) depend on this interface only; `ops/metrics.ts` implements it
// with a Prometheus registry, and `noMetrics` is what they get when nothing is scraped (tests).

export type BankCallOutcome = "ok" | "rate_limited" | "error";

export interface Metrics {
  /** One HTTP request answered: its route pattern (never the raw path), method and status. */
  httpRequest(route: string, method: string, status: number, seconds: number): void;
  /** One agent request: tool name (or the JSON-RPC method), outcome and protocol revision. */
  agentCall(tool: string, outcome: string, revision: string): void;
  /** One commit of audit entries (a batch of agent calls, or one entry). */
  auditCommit(seconds: number): void;
  /** One call to a bank adapter. */
  bankCall(bank: string, kind: string, outcome: BankCallOutcome, seconds: number): void;
  /** Bytes of a statement export sent. */
  exportBytes(format: string, bytes: number): void;
}

const nothing = () => {};

export const noMetrics: Metrics = {
  httpRequest: nothing,
  agentCall: nothing,
  auditCommit: nothing,
  bankCall: nothing,
  exportBytes: nothing,
};
