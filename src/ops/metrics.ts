// The Prometheus side of `Metrics`: one registry per process (not prom-client's global one, so
// that several apps in one test process keep their own counts). Label values are bounded by
// construction: route patterns, methods, statuses, tool names, error codes, bank names; never a
// token, account, statement or raw path.
import { Gauge, type Metric, Registry } from "prom-client";
import type { BankCallOutcome, Metrics } from "../core/metrics";
import { CounterFamily, HistogramFamily } from "./metric-families";

/** What the gauges read when scraped (the database, the files). */
export interface OpsReadings {
  statementsByStatus(): { status: string; count: number }[];
  /** Seconds since the oldest statement still processing was ordered; 0 when none is. */
  oldestProcessingAgeSeconds(): number;
  openAgentSessions(): number;
  databaseBytes(): { database: number; wal: number };
  /** Per syncing account: seconds from the end of its newest final day to now. */
  syncLags(): { bank_account_id: string; seconds: number }[];
}

const HTTP_METHODS = new Set(["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"]);
// Requests are answered in well under a millisecond to a few seconds (exports).
const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export class PrometheusMetrics implements Metrics {
  readonly registry = new Registry();
  private readonly requests = new CounterFamily(
    "svc_http_requests_total",
    "HTTP requests answered, by route pattern, method and status",
    ["route", "method", "status"],
  );
  private readonly requestSeconds = new HistogramFamily(
    "svc_http_request_duration_seconds",
    "Time from the request's arrival to its answer, by route pattern and method",
    ["route", "method"],
    LATENCY_BUCKETS,
  );
  private readonly rateLimited = new CounterFamily(
    "svc_http_rate_limited_total",
    "Requests refused with 429 rate_limited",
    [],
  );
  private readonly agentCalls = new CounterFamily(
    "svc_agent_calls_total",
    "Agent requests, by tool (or JSON-RPC method), outcome and protocol revision",
    ["tool", "outcome", "revision"],
  );
  private readonly auditSeconds = new HistogramFamily(
    "svc_audit_commit_duration_seconds",
    "Time to commit audit entries (one transaction per batch)",
    [],
    [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5, 1],
  );
  private readonly bankCalls = new CounterFamily(
    "svc_bank_calls_total",
    "Calls to banks, by bank, kind of call and outcome",
    ["bank", "kind", "outcome"],
  );
  private readonly bankSeconds = new HistogramFamily(
    "svc_bank_call_duration_seconds",
    "Time a bank took to answer, by bank and kind of call",
    ["bank", "kind"],
    [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  );
  private readonly bankRateLimited = new CounterFamily(
    "svc_bank_rate_limited_total",
    "Bank answers of 429 Too Many Requests, by bank",
    ["bank"],
  );
  private readonly exportBytesSent = new CounterFamily(
    "svc_export_bytes_total",
    "Bytes of statement exports sent, by format",
    ["format"],
  );

  constructor(readings: OpsReadings) {
    const registers = [this.registry];
    for (const family of [
      this.requests,
      this.requestSeconds,
      this.rateLimited,
      this.agentCalls,
      this.auditSeconds,
      this.bankCalls,
      this.bankSeconds,
      this.bankRateLimited,
      this.exportBytesSent,
    ]) {
      // prom-client renders any object with a name and get(); these count without its label checks.
      this.registry.registerMetric(family as unknown as Metric);
    }
    // Series without labels exist from the start (at 0), as Prometheus expects of counters.
    this.rateLimited.cell("", []);
    this.auditSeconds.cell("", []);
    new Gauge({
      name: "svc_statements",
      help: "Statements by status",
      labelNames: ["status"],
      registers,
      collect() {
        this.reset();
        for (const { status, count } of readings.statementsByStatus()) this.set({ status }, count);
      },
    });
    new Gauge({
      name: "svc_statement_oldest_processing_age_seconds",
      help: "Age of the oldest statement still waiting for its bank (poller lag); 0 when none waits",
      registers,
      collect() {
        this.set(readings.oldestProcessingAgeSeconds());
      },
    });
    new Gauge({
      name: "svc_agent_sessions_open",
      help: "Agent sessions not yet expired",
      registers,
      collect() {
        this.set(readings.openAgentSessions());
      },
    });
    // One series per syncing account (decisions §16): as many as the operator switched on, the
    // one label that names an account.
    new Gauge({
      name: "svc_sync_lag_seconds",
      help: "Per syncing account: now minus the end of its newest final day (a day is final once a statement fetched after it ended is ready)",
      labelNames: ["bank_account_id"],
      registers,
      collect() {
        this.reset();
        for (const { bank_account_id, seconds } of readings.syncLags())
          this.set({ bank_account_id }, seconds);
      },
    });
    new Gauge({
      name: "svc_database_bytes",
      help: "Size of the database files: the main file and its write-ahead log",
      labelNames: ["file"],
      registers,
      collect() {
        const sizes = readings.databaseBytes();
        this.set({ file: "database" }, sizes.database);
        this.set({ file: "wal" }, sizes.wal);
      },
    });
  }

  httpRequest(route: string, method: string, status: number, seconds: number): void {
    const m = HTTP_METHODS.has(method) ? method : "other";
    this.requests.cell(`${route} ${m} ${status}`, [route, m, String(status)]).value += 1;
    this.requestSeconds.cell(`${route} ${m}`, [route, m]).observe(seconds);
    if (status === 429) this.rateLimited.cell("", []).value += 1;
  }

  agentCall(tool: string, outcome: string, revision: string): void {
    this.agentCalls.cell(`${tool} ${outcome} ${revision}`, [tool, outcome, revision]).value += 1;
  }

  auditCommit(seconds: number): void {
    this.auditSeconds.cell("", []).observe(seconds);
  }

  bankCall(bank: string, kind: string, outcome: BankCallOutcome, seconds: number): void {
    this.bankCalls.cell(`${bank} ${kind} ${outcome}`, [bank, kind, outcome]).value += 1;
    this.bankSeconds.cell(`${bank} ${kind}`, [bank, kind]).observe(seconds);
    if (outcome === "rate_limited") this.bankRateLimited.cell(bank, [bank]).value += 1;
  }

  exportBytes(format: string, bytes: number): void {
    this.exportBytesSent.cell(format, [format]).value += bytes;
  }

  /** The text a scrape gets. */
  async text(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}
