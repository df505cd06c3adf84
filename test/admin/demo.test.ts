import { describe, expect, test } from "bun:test";
import { loadConfig } from "../../src/config";
import { ManualClock } from "../../src/core/clock";
import { createLogger } from "../../src/core/logger";
import { demoBanner, seedDemo } from "../../src/demo";
import { startServer } from "../../src/main";
import { makeTestApp } from "../helpers/app";

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
    const tokens = t.services.admin.listTokens();
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
    expect(t.services.admin.listTokens()).toEqual([]);
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
});
