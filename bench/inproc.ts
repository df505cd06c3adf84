// Server-side cost per request without the network: app.handle() in a loop, 32 requests in flight,
// for /healthz, the REST poll and the agent get_balance call. For trying a change to the request path:
//   bun run bench/inproc.ts [healthz|rest|mcp|both] [requests]
// PARTS=1 also times the parts of a call (guard, statement read, session, tool, audit insert);
// NOAUDIT=1 leaves the agent audit entries out (a measurement of what they cost, nothing else);
// SVC_METRICS_TOKEN=… counts every request for /metrics, as a server with that setting does.
import { join } from "node:path";
import { makeTestApp } from "../test/helpers/app";
import { tempDir } from "../test/helpers/server";
import { initializeMessage, mcpHeaders, toolCallBody } from "./lib/svc";

const which = process.argv[2] ?? "both";
const total = Number(process.argv[3] ?? 100_000);
const metrics: Record<string, string> = process.env.SVC_METRICS_TOKEN
  ? { SVC_METRICS_TOKEN: process.env.SVC_METRICS_TOKEN }
  : {};
const t = makeTestApp({ SVC_LOG_LEVEL: "info", ...metrics }, "2026-11-20T09:00:00Z", {
  dbPath: join(tempDir("svc-inproc-"), "svc.db"),
});
t.logs.length = 0;
// NOAUDIT=1: agent audit entries are not written (shows what the audit write costs).
if (process.env.NOAUDIT) t.services.agentAudit.write = () => Promise.resolve();
const drain = setInterval(() => {
  t.logs.length = 0;
}, 100);

function world(purpose: "integration" | "mcp") {
  const company = t.fixtures.company();
  const account = t.fixtures.account(company.company_id, "sandbox", { ops_per_day: 5 });
  const token = t.fixtures.token(company.company_id, {
    purpose,
    rate_limit_per_minute: 10_000,
    accounts: [{ bank_account_id: account.bank_account_id, allow_read_statements: true }],
  });
  return { account, token: token.token };
}

async function measure(name: string, make: (i: number) => Request): Promise<void> {
  for (let i = 0; i < 2000; i++) await (await t.app.handle(make(i))).arrayBuffer();
  const inFlight = 32;
  let next = 0;
  const started = performance.now();
  const worker = async () => {
    for (let i = next++; i < total; i = next++) {
      // A new rate-limit window every 5000 requests (the highest limit a token can have is 10k/min).
      if (i % 5000 === 0) t.clock.advance(61_000);
      const res = await t.app.handle(make(i));
      if (res.status !== 200) throw new Error(`${name}: HTTP ${res.status} ${await res.text()}`);
      await res.arrayBuffer();
    }
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
  const ms = performance.now() - started;
  process.stdout.write(
    `${name}: ${((ms * 1000) / total).toFixed(1)} µs/request, ${Math.round(total / (ms / 1000))} req/s\n`,
  );
}

if (which === "healthz" || which === "both")
  await measure("healthz", () => new Request("http://localhost/healthz"));
if (which === "rest" || which === "both") {
  const w = world("integration");
  const tokens = [w.token];
  const ordered = await t.request("POST", "/api/v1/integration/statements", {
    token: w.token,
    body: {
      bank_account_id: w.account.bank_account_id,
      external_id: "p",
      date_from: "2026-11-19",
      date_to: "2026-11-19",
    },
  });
  const id = ((await ordered.json()) as { statement_id: string }).statement_id;
  if (process.env.PARTS) {
    const bench = (name: string, f: () => unknown, n = 200_000) => {
      const started = performance.now();
      for (let i = 0; i < n; i++) {
        if (i % 5000 === 0) t.clock.advance(61_000);
        f();
      }
      process.stdout.write(`  ${name}: ${(((performance.now() - started) * 1000) / n).toFixed(2)} µs\n`);
    };
    const auth = `Bearer ${tokens[0]}`;
    const need = { purpose: "integration", scope: "read_statements" } as const;
    bench("guard.authenticate", () => t.services.guard.authenticate(auth, "127.0.0.1", need));
    const { principal } = await t.services.guard.authenticate(auth, "127.0.0.1", need);
    bench("statements.get", () => t.services.statements.get(principal, id));
    bench("repo.findById", () => t.services.statementRepo.findById(id));
    bench("JSON of view", () => JSON.stringify(t.services.statements.get(principal, id)));
  }
  await measure(
    "rest poll",
    () =>
      new Request(`http://localhost/api/v1/integration/statements/${id}`, {
        headers: { authorization: `Bearer ${tokens[0]}` },
      }),
  );
}
if (which === "mcp" || which === "both") {
  const w = world("mcp");
  // As in the HTTP benchmark: the account has a cached balance.
  await t.admin("POST", `/bank-accounts/${w.account.bank_account_id}/balance/refresh`);
  const init = await t.app.handle(
    new Request("http://localhost/api/v1/mcp", {
      method: "POST",
      headers: mcpHeaders(w.token),
      body: JSON.stringify(initializeMessage()),
    }),
  );
  const session = init.headers.get("mcp-session-id")!;
  if (process.env.PARTS) {
    const bench = async (name: string, f: () => unknown, n = 100_000) => {
      const started = performance.now();
      for (let i = 0; i < n; i++) {
        if (i % 5000 === 0) t.clock.advance(61_000);
        const r = f();
        if (r instanceof Promise) await r;
      }
      process.stdout.write(`  ${name}: ${(((performance.now() - started) * 1000) / n).toFixed(2)} µs\n`);
    };
    const auth = `Bearer ${w.token}`;
    const need = { purpose: "mcp", scope: "read_statements" } as const;
    const { principal } = await t.services.guard.authenticate(auth, "127.0.0.1", need);
    const { callTool } = await import("../src/mcp/tools/registry");
    const args = { bank_account_id: w.account.bank_account_id };
    await bench("guard.authenticate", () => t.services.guard.authenticate(auth, "127.0.0.1", need));
    await bench("sessions.validate", () => t.services.mcp.sessions.validate(session, principal.tokenId));
    await bench("callTool get_balance", () =>
      callTool(t.services.mcp.tools, { principal }, "get_balance", args),
    );
    const out = await callTool(t.services.mcp.tools, { principal }, "get_balance", args);
    await bench("JSON of result", () =>
      JSON.stringify({ jsonrpc: "2.0", id: 2, result: (out as { result: unknown }).result }),
    );
    const entry = {
      at: new Date(),
      actor: "token" as const,
      apiTokenId: principal.tokenId,
      mcpSessionId: session,
      action: "mcp.get_balance",
      tool: "get_balance",
      arguments: args,
      outcome: "ok",
      durationMs: 1,
      requestId: "x",
      ip: "127.0.0.1",
      transport: "http" as const,
    };
    await bench("audit insert (own tx)", () => t.services.audit.write(entry), 20_000);
    await bench(
      "audit 32 per tx",
      () =>
        t.services.database.sqlite.transaction(() => {
          for (let k = 0; k < 32; k++) t.services.audit.write(entry);
        })(),
      2_000,
    );
  }
  const body = toolCallBody("get_balance", { bank_account_id: w.account.bank_account_id });
  await measure(
    "mcp get_balance",
    () =>
      new Request("http://localhost/api/v1/mcp", {
        method: "POST",
        headers: mcpHeaders(w.token, session),
        body,
      }),
  );
}
clearInterval(drain);
process.exit(0);
