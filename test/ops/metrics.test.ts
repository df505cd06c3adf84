// lanes: sqlite postgres
// GET /metrics and GET /readyz through HTTP, parsed with a Prometheus text-format parser.
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { json, makeTestApp, type TestApp } from "../helpers/app";
import { expectError } from "../helpers/envelope";
import { onPostgres } from "../helpers/pg";
import { parsePrometheus, sampleValue } from "../helpers/prometheus";
import { ROOT } from "../helpers/server";
import { callTool, initSession } from "../mcp/helpers";

const METRICS_TOKEN = "metrics-scrape-token-0123";

// Requests are counted once their answer has gone out (after app.handle resolves).
const answered = () => Bun.sleep(1);

async function scrape(t: TestApp) {
  await answered();
  const res = await t.request("GET", "/metrics", { token: METRICS_TOKEN });
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toContain("text/plain");
  return parsePrometheus(await res.text());
}

describe("GET /metrics", () => {
  test("answers 404 when SVC_METRICS_TOKEN is unset", async () => {
    const t = makeTestApp();
    await expectError(await t.request("GET", "/metrics"), 404, "not_found");
    await expectError(await t.request("GET", "/metrics", { token: METRICS_TOKEN }), 404, "not_found");
  });

  test("wants the metrics token: none is 401 invalid_token_format, another 401 invalid_token", async () => {
    const t = makeTestApp({ SVC_METRICS_TOKEN: METRICS_TOKEN });
    await expectError(await t.request("GET", "/metrics"), 401, "invalid_token_format");
    await expectError(
      await t.request("GET", "/metrics", { token: `${METRICS_TOKEN}x` }),
      401,
      "invalid_token",
    );
    const { token } = t.fixtures.world();
    // A service token is not the metrics token.
    await expectError(await t.request("GET", "/metrics", { token }), 401, "invalid_token");
  });

  test("counts requests, agent calls, bank calls, exports, statements and sessions", async () => {
    const t = makeTestApp({ SVC_METRICS_TOKEN: METRICS_TOKEN });
    const rest = t.fixtures.world();
    const agent = t.fixtures.world({ purpose: "mcp" });

    const ordered = await t.request("POST", "/api/v1/integration/statements", {
      token: rest.token,
      body: {
        bank_account_id: rest.account.bank_account_id,
        date_from: "2026-11-01",
        date_to: "2026-11-10",
        external_id: "m-1",
      },
    });
    expect(ordered.status).toBe(201);
    const { statement_id } = await json<{ statement_id: string }>(ordered);
    await t.services.poller.idle();
    await t.services.poller.tick();
    await t.services.poller.idle();
    const poll = await t.request("GET", `/api/v1/integration/statements/${statement_id}`, {
      token: rest.token,
    });
    expect(poll.status).toBe(200);
    const file = await t.request("GET", `/api/v1/integration/statements/${statement_id}/export?format=csv`, {
      token: rest.token,
    });
    const exported = (await file.arrayBuffer()).byteLength;
    await t.request("GET", "/api/v1/integration/statements/00000000-0000-4000-8000-000000000000", {
      token: rest.token,
    });
    await t.request("GET", "/no/such/path");

    const session = await initSession(t, agent.token);
    await callTool(t, agent.token, session, "get_balance", {
      bank_account_id: agent.account.bank_account_id,
    });
    await callTool(t, agent.token, session, "get_balance", {
      bank_account_id: "00000000-0000-4000-8000-000000000000",
    });

    const m = await scrape(t);
    const route = "/api/v1/integration/statements/:statement_id";
    expect(sampleValue(m, "svc_http_requests_total", { route, method: "GET", status: "200" })).toBe(1);
    expect(sampleValue(m, "svc_http_requests_total", { route, method: "GET", status: "404" })).toBe(1);
    expect(sampleValue(m, "svc_http_requests_total", { route: "unmatched", status: "404" })).toBe(1);
    expect(sampleValue(m, "svc_http_request_duration_seconds_count", { route, method: "GET" })).toBe(2);
    expect(sampleValue(m, "svc_agent_calls_total", { tool: "get_balance", outcome: "ok" })).toBe(1);
    expect(sampleValue(m, "svc_agent_calls_total", { tool: "get_balance", outcome: "not_found" })).toBe(1);
    // The revision is the one the session negotiated (initialize asked for 2025-06-18).
    expect(sampleValue(m, "svc_agent_calls_total", { tool: "initialize", revision: "2025-06-18" })).toBe(1);
    expect(sampleValue(m, "svc_audit_commit_duration_seconds_count")).toBeGreaterThanOrEqual(1);
    expect(
      sampleValue(m, "svc_bank_calls_total", { bank: "sandbox", kind: "statement_request", outcome: "ok" }),
    ).toBe(1);
    expect(
      sampleValue(m, "svc_bank_calls_total", { bank: "sandbox", kind: "statement_poll", outcome: "ok" }),
    ).toBe(1);
    expect(
      sampleValue(m, "svc_bank_call_duration_seconds_count", { bank: "sandbox", kind: "statement_poll" }),
    ).toBe(1);
    expect(sampleValue(m, "svc_export_bytes_total", { format: "csv" })).toBeGreaterThan(0);
    expect(sampleValue(m, "svc_export_bytes_total", { format: "csv" })).toBeLessThanOrEqual(exported);
    expect(sampleValue(m, "svc_statements", { status: "ready" })).toBe(1);
    expect(sampleValue(m, "svc_statement_oldest_processing_age_seconds")).toBe(0);
    expect(sampleValue(m, "svc_agent_sessions_open")).toBe(1);
    // SQLite in memory has no file; PostgreSQL's database has a size.
    const databaseBytes = sampleValue(m, "svc_database_bytes", { file: "database" });
    if (onPostgres) expect(databaseBytes).toBeGreaterThan(0);
    else expect(databaseBytes).toBe(0);

    // Every series the committed Grafana dashboard plots is one the service exposes.
    const dashboard = await Bun.file(join(ROOT, "ops/grafana-dashboard.json")).json();
    const exprs: string[] = dashboard.panels.flatMap((p: { targets: { expr: string }[] }) =>
      p.targets.map((target) => target.expr),
    );
    const plotted = new Set(exprs.flatMap((e) => e.match(/svc_[a-z_]+/g) ?? []));
    expect(plotted.size).toBeGreaterThan(10);
    const text = await (await t.request("GET", "/metrics", { token: METRICS_TOKEN })).text();
    for (const name of plotted) {
      const family = name.replace(/_(bucket|sum|count)$/, "");
      expect({ name, exposed: text.includes(`# TYPE ${family} `) }).toEqual({ name, exposed: true });
    }
  });

  test("the age of the oldest statement still processing is the poller's lag", async () => {
    const t = makeTestApp({ SVC_METRICS_TOKEN: METRICS_TOKEN });
    const { account } = t.fixtures.world();
    t.services.statements.orderFromUi(account.bank_account_id, "2026-11-01", "2026-11-02");
    t.clock.advance(90_000);
    const m = await scrape(t);
    expect(sampleValue(m, "svc_statements", { status: "processing" })).toBe(1);
    expect(sampleValue(m, "svc_statement_oldest_processing_age_seconds")).toBe(90);
  });

  test("rate-limited requests are counted", async () => {
    const t = makeTestApp({ SVC_METRICS_TOKEN: METRICS_TOKEN });
    const { company, account } = t.fixtures.world();
    const limited = t.fixtures.token(company.company_id, {
      rate_limit_per_minute: 1,
      accounts: [{ bank_account_id: account.bank_account_id, allow_read_statements: true }],
    });
    for (let i = 0; i < 3; i++) {
      await t.request("GET", `/api/v1/integration/statements?bank_account_id=${account.bank_account_id}`, {
        token: limited.token,
      });
    }
    const m = await scrape(t);
    expect(sampleValue(m, "svc_http_rate_limited_total")).toBe(2);
  });

  test("no label carries a token, an account, a statement id or a raw path", async () => {
    const t = makeTestApp({ SVC_METRICS_TOKEN: METRICS_TOKEN });
    const { token, account } = t.fixtures.world();
    for (const id of [account.bank_account_id, crypto.randomUUID(), crypto.randomUUID()]) {
      await t.request("GET", `/api/v1/integration/statements/${id}`, { token });
      await t.request("GET", `/anything/${id}`);
    }
    const agent = t.fixtures.world({ purpose: "mcp" });
    const session = await initSession(t, agent.token);
    await callTool(t, agent.token, session, "list_bank_accounts");
    await answered();
    const text = await (await t.request("GET", "/metrics", { token: METRICS_TOKEN })).text();
    expect(text).toContain("svc_http_requests_total{");
    expect(text).not.toMatch(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/);
    expect(text).not.toContain("svc_test_");
    expect(text).not.toContain("/anything");
  });
});

describe("GET /readyz", () => {
  test("ready once the poller has made a pass; /healthz stays liveness", async () => {
    const t = makeTestApp();
    const before = await t.request("GET", "/readyz");
    const details = await expectError(before, 503, "service_unavailable");
    expect(details).toMatchObject({ failing: ["poller"] });
    expect((await t.request("GET", "/healthz")).status).toBe(200);

    await t.services.poller.tick();
    const res = await t.request("GET", "/readyz");
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      status: "ready",
      checks: { database: "ok", migrations: "ok", poller: "ok", export_threads: "ok" },
    });
  });

  test("a poller whose last pass is older than three intervals is named", async () => {
    const t = makeTestApp({ SVC_BANK_POLL_INTERVAL_MS: "1000" });
    await t.services.poller.tick();
    t.clock.advance(3000);
    expect((await t.request("GET", "/readyz")).status).toBe(200);
    t.clock.advance(1);
    const details = await expectError(await t.request("GET", "/readyz"), 503, "service_unavailable");
    expect(details).toMatchObject({ failing: ["poller"] });
  });

  test("migrations not current and an unwritable database are named", async () => {
    const t = makeTestApp();
    await t.services.poller.tick();
    const migrations = onPostgres ? "drizzle.__drizzle_migrations" : "__drizzle_migrations";
    t.db
      .query(`DELETE FROM ${migrations} WHERE created_at = (SELECT max(created_at) FROM ${migrations})`)
      .run();
    let details = await expectError(await t.request("GET", "/readyz"), 503, "service_unavailable");
    expect(details).toMatchObject({ failing: ["migrations"] });

    // The connection refuses writes from now on (a read-only file or folder, a standby server).
    t.db.query(onPostgres ? "SET default_transaction_read_only = on" : "PRAGMA query_only = ON").run();
    details = await expectError(await t.request("GET", "/readyz"), 503, "service_unavailable");
    expect(details.failing).toContain("database");
  });
});
