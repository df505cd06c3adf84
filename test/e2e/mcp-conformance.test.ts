// lanes: sqlite postgres
// The official MCP conformance suite (server mode) against the real server. The suite cannot
// send an Authorization header, so a small local proxy in front of the server adds one.
// The scenarios that apply to a tools-only, token-protected server must pass.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../../src/config";
import { silentLogger } from "../../src/core/logger";
import { withAccountKey } from "../../src/formats/validators";
import { type RunningServer, startServer } from "../../src/main";
import { serverStoreEnv } from "../helpers/pg";

const CLI = join(import.meta.dir, "../../node_modules/@modelcontextprotocol/conformance/dist/index.js");
const BUN = join(import.meta.dir, "../../node_modules/.bin/bun");

const EXPECTED_FAILURES = join(import.meta.dir, "../fixtures/conformance-expected-failures.yml");

// Every scenario that applies to a read-only tools server without subscriptions or logging, at
// both revisions. The others (they call the suite's fixture tools, resources, prompts, logging,
// completion, sampling, elicitation or progress, which this server does not have) are listed in
// docs/agents.md, as are the checks of test/fixtures/conformance-expected-failures.yml.
const SCENARIOS: [specVersion: string, scenario: string][] = [
  ["2025-11-25", "server-initialize"],
  ["2025-11-25", "ping"],
  ["2025-11-25", "tools-list"],
  ["2025-11-25", "server-sse-multiple-streams"],
  ["2025-11-25", "server-session-lifecycle"],
  ["2025-11-25", "dns-rebinding-protection"],
  ["2026-07-28", "server-stateless"],
  ["2026-07-28", "tools-list"],
  ["2026-07-28", "caching"],
  ["2026-07-28", "http-header-validation"],
  ["2026-07-28", "server-sse-multiple-streams"],
  ["2026-07-28", "dns-rebinding-protection"],
];

let dir: string;
let server: RunningServer;
let proxy: ReturnType<typeof Bun.serve>;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "svc-mcp-conformance-"));
  const config = loadConfig({
    SVC_DB_PATH: join(dir, "svc.db"),
    SVC_PORT: "0",
    SVC_SECRET_KEY: Buffer.alloc(32, 5).toString("base64"),
    ...serverStoreEnv(),
  });
  server = await startServer(config, { logger: silentLogger });
  const { admin } = server.services;
  const company = admin.companies.create({ name: "ООО Тест", inn: "7719617469" });
  const account = admin.accounts.create({
    company_id: company.company_id,
    bank: "sandbox",
    account_number: withAccountKey("40702810900000000077", "044525225"),
    bik: "044525225",
  });
  const { token } = admin.tokens.create({
    company_id: company.company_id,
    name: "conformance",
    purpose: "mcp",
    mode: "test",
    scope_read_statements: true,
    accounts: [{ bank_account_id: account.bank_account_id, allow_read_statements: true }],
  });
  const upstream = server.url;
  proxy = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const url = new URL(req.url);
      const headers = new Headers(req.headers);
      headers.set("authorization", `Bearer ${token}`);
      headers.delete("host");
      const body = req.method === "GET" || req.method === "HEAD" ? undefined : await req.arrayBuffer();
      const res = await fetch(`${upstream}${url.pathname}${url.search}`, {
        method: req.method,
        headers,
        body,
      });
      return new Response(res.body, { status: res.status, headers: res.headers });
    },
  });
});

afterAll(async () => {
  proxy?.stop(true);
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function runScenario(specVersion: string, scenario: string): Promise<{ code: number; output: string }> {
  const outDir = join(dir, `out-${specVersion}-${scenario}`);
  const child = Bun.spawn(
    [
      BUN,
      CLI,
      "server",
      "--url",
      `http://127.0.0.1:${proxy.port}/api/v1/mcp`,
      "--spec-version",
      specVersion,
      "--scenario",
      scenario,
      "--expected-failures",
      EXPECTED_FAILURES,
      "-o",
      outDir,
    ],
    { stdout: "pipe", stderr: "pipe", env: { ...process.env, NO_COLOR: "1" } },
  );
  const [stdout, stderr, code] = await Promise.all([
    new Response(child.stdout).text(),
    new Response(child.stderr).text(),
    child.exited,
  ]);
  return { code, output: `${stdout}\n${stderr}` };
}

describe("MCP conformance suite (server mode)", () => {
  for (const [specVersion, scenario] of SCENARIOS) {
    test(`${specVersion} ${scenario}`, async () => {
      const { code, output } = await runScenario(specVersion, scenario);
      // Print the suite's own report when it does not pass, so the reason is visible in the test log.
      if (process.env.SHOW_CONFORMANCE || code !== 0)
        console.error(`conformance ${specVersion} ${scenario} exited ${code}:\n${output}`);
      const summary = /Passed: (\d+)\/(\d+), (\d+) failed/.exec(output);
      expect(summary, "the suite printed no result summary").not.toBeNull();
      const [, passed, total] = summary ?? [];
      expect(Number(total)).toBeGreaterThan(0);
      expect(Number(passed)).toBeGreaterThan(0);
      // 0: nothing failed beyond the expected failures, and none of those passed unexpectedly.
      expect(code).toBe(0);
    });
  }
});
