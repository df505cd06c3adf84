// The Prometheus side of `Metrics`: one registry per process (not prom-client's global one, so
// that several apps in one test process keep their own counts). Label values are bounded by
// construction: route patterns, methods, statuses, tool names, error codes, bank names; never a
// token, account, statement or raw path.
import { Counter, Gauge, Histogram, Registry } from "prom-client";
import type { BankCallOutcome, Metrics } from "../core/metrics";

/** What the gauges read when scraped (the database, the files). */
export interface OpsReadings {
  statementsByStatus(): { status: string; count: number }[];
  /** Seconds since the oldest statement still processing was ordered; 0 when none is. */
  oldestProcessingAgeSeconds(): number;
  openAgentSessions(): number;
  databaseBytes(): { database: number; wal: number };
}

const HTTP_METHODS = new Set(["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"]);
// Requests are answered in well under a millisecond to a few seconds (exports).
const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

type CounterChild = { inc(value?: number): void };
type HistogramChild = { observe(value: number): void };

export class PrometheusMetrics implements Metrics {
  readonly registry = new Registry();
  private readonly requests: Counter<"route" | "method" | "status">;
  private readonly requestSeconds: Histogram<"route" | "method">;
  private readonly rateLimited: Counter;
  private readonly agentCalls: Counter<"tool" | "outcome" | "revision">;
  private readonly auditSeconds: Histogram;
  private readonly bankCalls: Counter<"bank" | "kind" | "outcome">;
  private readonly bankSeconds: Histogram<"bank" | "kind">;
  private readonly bankRateLimited: Counter<"bank">;
  private readonly exportBytesSent: Counter<"format">;
  private readonly requestsBy: Children<CounterChild>;
  private readonly requestSecondsBy: Children<HistogramChild>;
  private readonly agentCallsBy: Children<CounterChild>;
  private readonly bankCallsBy: Children<CounterChild>;
  private readonly bankSecondsBy: Children<HistogramChild>;

  constructor(readings: OpsReadings) {
    const registers = [this.registry];
    this.requests = new Counter({
      name: "svc_http_requests_total",
      help: "HTTP requests answered, by route pattern, method and status",
      labelNames: ["route", "method", "status"],
      registers,
    });
    this.requestSeconds = new Histogram({
      name: "svc_http_request_duration_seconds",
      help: "Time from the request's arrival to its answer, by route pattern and method",
      labelNames: ["route", "method"],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.rateLimited = new Counter({
      name: "svc_http_rate_limited_total",
      help: "Requests refused with 429 rate_limited",
      registers,
    });
    this.agentCalls = new Counter({
      name: "svc_agent_calls_total",
      help: "Agent requests, by tool (or JSON-RPC method), outcome and protocol revision",
      labelNames: ["tool", "outcome", "revision"],
      registers,
    });
    this.auditSeconds = new Histogram({
      name: "svc_audit_commit_duration_seconds",
      help: "Time to commit audit entries (one transaction per batch)",
      buckets: [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5, 1],
      registers,
    });
    this.bankCalls = new Counter({
      name: "svc_bank_calls_total",
      help: "Calls to banks, by bank, kind of call and outcome",
      labelNames: ["bank", "kind", "outcome"],
      registers,
    });
    this.bankSeconds = new Histogram({
      name: "svc_bank_call_duration_seconds",
      help: "Time a bank took to answer, by bank and kind of call",
      labelNames: ["bank", "kind"],
      buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    });
    this.bankRateLimited = new Counter({
      name: "svc_bank_rate_limited_total",
      help: "Bank answers of 429 Too Many Requests, by bank",
      labelNames: ["bank"],
      registers,
    });
    this.exportBytesSent = new Counter({
      name: "svc_export_bytes_total",
      help: "Bytes of statement exports sent, by format",
      labelNames: ["format"],
      registers,
    });
    this.requestsBy = new Children((v) => this.requests.labels(...v));
    this.requestSecondsBy = new Children((v) => this.requestSeconds.labels(...v));
    this.agentCallsBy = new Children((v) => this.agentCalls.labels(...v));
    this.bankCallsBy = new Children((v) => this.bankCalls.labels(...v));
    this.bankSecondsBy = new Children((v) => this.bankSeconds.labels(...v));
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
    this.requestsBy.get(`${route} ${m} ${status}`, [route, m, String(status)]).inc();
    this.requestSecondsBy.get(`${route} ${m}`, [route, m]).observe(seconds);
    if (status === 429) this.rateLimited.inc();
  }

  agentCall(tool: string, outcome: string, revision: string): void {
    this.agentCallsBy.get(`${tool} ${outcome} ${revision}`, [tool, outcome, revision]).inc();
  }

  auditCommit(seconds: number): void {
    this.auditSeconds.observe(seconds);
  }

  bankCall(bank: string, kind: string, outcome: BankCallOutcome, seconds: number): void {
    this.bankCallsBy.get(`${bank} ${kind} ${outcome}`, [bank, kind, outcome]).inc();
    this.bankSecondsBy.get(`${bank} ${kind}`, [bank, kind]).observe(seconds);
    if (outcome === "rate_limited") this.bankRateLimited.labels(bank).inc();
  }

  exportBytes(format: string, bytes: number): void {
    this.exportBytesSent.labels(format).inc(bytes);
  }

  /** The text a scrape gets. */
  async text(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}

/** Label children looked up once per label combination, not hashed again on every event. */
class Children<C> {
  private readonly byKey = new Map<string, C>();
  constructor(private readonly make: (values: string[]) => C) {}
  get(key: string, values: string[]): C {
    let child = this.byKey.get(key);
    if (!child) {
      child = this.make(values);
      this.byKey.set(key, child);
    }
    return child;
  }
}
