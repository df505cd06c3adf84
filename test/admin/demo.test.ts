// lanes: sqlite postgres
import { describe, expect, spyOn, test } from "bun:test";
import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { loadConfig } from "../../src/config";
import { ManualClock } from "../../src/core/clock";
import { createLogger } from "../../src/core/logger";
import { demoBanner, seedDemo } from "../../src/demo";
import { startServer } from "../../src/main";
import { makeTestApp } from "../helpers/app";
import { tempDir } from "../helpers/server";

async function demoRun(env: Record<string, string>) {
  const printed: string[] = [];
  const server = await startServer(loadConfig({ SVC_PORT: "0", ...env }), {
    demo: true,
    logger: createLogger("error", () => {}),
    print: (s) => printed.push(s),
  });
  return { server, text: printed.join("") };
}

async function signsIn(url: string, token: string): Promise<boolean> {
  const res = await fetch(`${url}/admin/login`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", origin: url },
    body: new URLSearchParams({ token }).toString(),
    redirect: "manual",
  });
  return res.status === 303;
}

describe("demo data", () => {
  test("an empty database gets a company, one account per sandbox bank and two test tokens", () => {
    const t = makeTestApp();
    const demo = seedDemo(t.services.admin);
    expect(demo).not.toBeNull();
    expect(demo!.accounts.map((a) => a.bank)).toEqual([
      "sandbox",
      "sandbox_failing",
      "sandbox_no_statements",
    ]);
    expect(demo!.integrationToken).toMatch(/^svc_test_[0-9A-Za-z]{40}$/);
    expect(demo!.mcpToken).toMatch(/^svc_test_[0-9A-Za-z]{40}$/);
    const tokens = t.services.admin.tokens.list();
    expect(tokens.map((x) => [x.purpose, x.mode]).sort()).toEqual([
      ["integration", "test"],
      ["mcp", "test"],
    ]);
    // The agent token is read-only, like every mcp token.
    const mcp = tokens.find((x) => x.purpose === "mcp")!;
    expect(mcp.scopes.send_payments).toBe(false);
    expect(mcp.accounts.every((a) => a.allow_read_statements && !a.allow_send_payments)).toBe(true);
  });

  test("a database that already holds a company is left alone", () => {
    const t = makeTestApp();
    t.fixtures.company();
    expect(seedDemo(t.services.admin)).toBeNull();
    expect(t.services.admin.tokens.list()).toEqual([]);
  });

  test("the banner shows both tokens and an order for the current month up to the given day", () => {
    const t = makeTestApp();
    const demo = seedDemo(t.services.admin)!;
    const text = demoBanner(demo, "http://127.0.0.1:8080", "2026-11-20");
    expect(text).toContain(demo.integrationToken);
    expect(text).toContain(demo.mcpToken);
    expect(text).toContain('"date_from":"2026-11-01","date_to":"2026-11-20"');
    expect(text).toContain(demo.accounts[0]!.bank_account_id);
  });

  test("svc serve --demo dates the example order in the business time zone", async () => {
    // 05:00 UTC on the 21st is still the 20th in Los Angeles.
    const clock = new ManualClock("2026-11-21T05:00:00Z");
    const printed: string[] = [];
    const server = await startServer(
      loadConfig({ SVC_DB_PATH: ":memory:", SVC_PORT: "0", SVC_TIMEZONE: "America/Los_Angeles" }),
      { demo: true, clock, logger: createLogger("error", () => {}), print: (s) => printed.push(s) },
    );
    try {
      expect(printed).toHaveLength(1);
      expect(printed[0]).toContain('"date_from":"2026-11-01","date_to":"2026-11-20"');
    } finally {
      await server.stop();
    }
  });

  test("svc serve --demo switches sync on for the sandbox accounts that give statements: the last 90 days fill", async () => {
    const clock = new ManualClock("2026-11-20T09:00:00Z");
    const server = await startServer(loadConfig({ SVC_DB_PATH: ":memory:", SVC_PORT: "0" }), {
      demo: true,
      clock,
      logger: createLogger("error", () => {}),
      print: () => {},
    });
    try {
      const { services } = server;
      const byAlias = new Map(services.admin.accounts.list().map((a) => [a.alias, a.bank_account_id]));
      const enabled = (alias: string) => services.syncs.view(byAlias.get(alias) ?? "").enabled;
      expect([enabled("main"), enabled("failing"), enabled("nostmt")]).toEqual([true, true, false]);
      // The pass that started with the server, its bank requests, and one poll.
      await services.syncRunner.runOnce();
      await services.poller.idle();
      await services.poller.tick();
      await services.poller.idle();
      const coverage = services.coverage.of(byAlias.get("main") ?? "", "2026-08-23", "2026-11-20");
      expect(coverage.covered).toEqual([{ date_from: "2026-08-23", date_to: "2026-11-19" }]);
      expect(coverage.missing).toEqual([]);
    } finally {
      await server.stop();
    }
  });

  test("the banner goes to standard error; standard output, the log stream, never carries a token", async () => {
    const written = { stdout: "", stderr: "" };
    const out = spyOn(process.stdout, "write").mockImplementation((chunk: string | Uint8Array) => {
      written.stdout += String(chunk);
      return true;
    });
    const err = spyOn(process.stderr, "write").mockImplementation((chunk: string | Uint8Array) => {
      written.stderr += String(chunk);
      return true;
    });
    let server: Awaited<ReturnType<typeof startServer>> | null = null;
    try {
      server = await startServer(loadConfig({ SVC_DB_PATH: ":memory:", SVC_PORT: "0" }), {
        demo: true,
        // The JSON log stream, as `svc serve` writes it.
        logger: createLogger("info", (line) => process.stdout.write(`${line}\n`)),
      });
    } finally {
      out.mockRestore();
      err.mockRestore();
      await server?.stop();
    }
    const tokens = written.stderr.match(/svc_test_[0-9A-Za-z]{40}/g) ?? [];
    expect(new Set(tokens).size).toBe(2);
    expect(written.stderr).toMatch(/sign in with the admin token: [0-9a-f]{48}/);
    expect(written.stdout).toContain('"msg":"listening"');
    expect(written.stdout).not.toMatch(/svc_test_|admin token/);
  });

  test("--demo on an empty database leaves the operator able to sign in; a second run says where things are", async () => {
    const dir = tempDir();
    const dbPath = join(dir, "svc.db");
    const first = await demoRun({ SVC_DB_PATH: dbPath });
    let token: string;
    try {
      expect(first.text).toContain(`Admin pages: ${first.server.url}/admin`);
      token = /sign in with the admin token: ([0-9a-f]{48})/.exec(first.text)?.[1] ?? "";
      expect(token).toHaveLength(48);
      const file = join(dir, "admin.token");
      expect(readFileSync(file, "utf8").trim()).toBe(token);
      expect(statSync(file).mode & 0o777).toBe(0o600);
      expect(await signsIn(first.server.url, token)).toBe(true);
    } finally {
      await first.server.stop();
    }

    const second = await demoRun({ SVC_DB_PATH: dbPath });
    try {
      expect(second.text).toContain(`Demo data already in ${dbPath}`);
      expect(second.text).toContain(`sign in with the admin token from ${join(dir, "admin.token")}`);
      expect(second.text).toContain(
        `SVC_DB_PATH=${dbPath} node_modules/.bin/bun run cli/svc.ts admin token create`,
      );
      expect(second.text).toContain(`delete ${dbPath}`);
      // Shown once: not again.
      expect(second.text).not.toContain(token);
      expect(await signsIn(second.server.url, token)).toBe(true);
    } finally {
      await second.server.stop();
    }
  });

  test("--demo with SVC_ADMIN_TOKEN set uses it, makes no file and never prints it", async () => {
    const dir = tempDir();
    const adminToken = "operator-chosen-admin-token-0123456789";
    const run = await demoRun({ SVC_DB_PATH: join(dir, "svc.db"), SVC_ADMIN_TOKEN: adminToken });
    try {
      expect(run.text).toContain("sign in with the admin token from SVC_ADMIN_TOKEN");
      expect(run.text).not.toContain(adminToken);
      expect(existsSync(join(dir, "admin.token"))).toBe(false);
      expect(await signsIn(run.server.url, adminToken)).toBe(true);
    } finally {
      await run.server.stop();
    }
  });
});
