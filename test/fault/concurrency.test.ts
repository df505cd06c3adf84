// lanes: sqlite postgres
// 200 requests at once against a token limited to 100 per minute: exactly 100 pass, the others
// are 429 rate_limited with Retry-After. In-process (REST and the agent endpoint) and once
// against the real server over HTTP.
import { afterAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { makeTestApp } from "../helpers/app";
import { type RunningProcess, seedToken, startServe, tempDir } from "../helpers/server";
import { initSession } from "../mcp/helpers";
import { MCP, SLOW, STATEMENTS } from "./support";

const LIMIT = 100;
const PARALLEL = 200;

async function tally(responses: Response[]) {
  let passed = 0;
  let limited = 0;
  const resets = new Set<string | null>();
  for (const res of responses) {
    expect(res.headers.get("x-request-id")).toBeTruthy();
    resets.add(res.headers.get("x-ratelimit-reset"));
    expect(res.headers.get("x-ratelimit-limit")).toBe(String(LIMIT));
    const text = await res.text();
    if (res.status === 429) {
      limited += 1;
      const body = JSON.parse(text) as { error: { code: string; details: { retry_after_seconds: number } } };
      expect(body.error.code).toBe("rate_limited");
      const retryAfter = Number(res.headers.get("retry-after"));
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(60);
      expect(body.error.details.retry_after_seconds).toBe(retryAfter);
      expect(res.headers.get("x-ratelimit-remaining")).toBe("0");
    } else {
      expect(res.status).toBe(200);
      passed += 1;
    }
  }
  // All in one window.
  expect(resets.size).toBe(1);
  return { passed, limited };
}

describe("200 parallel requests, limit 100 per minute", () => {
  test(
    "in-process, REST: exactly 100 pass, 100 are 429 with Retry-After",
    async () => {
      const t = makeTestApp();
      const company = t.fixtures.company();
      const account = t.fixtures.account(company.company_id);
      const token = t.fixtures.token(company.company_id, {
        rate_limit_per_minute: LIMIT,
        accounts: [{ bank_account_id: account.bank_account_id, allow_read_statements: true }],
      }).token;
      const responses = await Promise.all(
        Array.from({ length: PARALLEL }, () => t.request("GET", STATEMENTS, { token })),
      );
      expect(await tally(responses)).toEqual({ passed: LIMIT, limited: PARALLEL - LIMIT });
      // The next window lets the token in again.
      t.clock.advance(60_000);
      expect((await t.request("GET", STATEMENTS, { token })).status).toBe(200);
    },
    SLOW,
  );

  test(
    "in-process, agent endpoint: exactly 100 pass (initialize included), the others 429",
    async () => {
      const t = makeTestApp();
      const company = t.fixtures.company();
      const account = t.fixtures.account(company.company_id);
      const token = t.fixtures.token(company.company_id, {
        purpose: "mcp",
        rate_limit_per_minute: LIMIT,
        accounts: [{ bank_account_id: account.bank_account_id, allow_read_statements: true }],
      }).token;
      const session = await initSession(t, token);
      const audits = () => t.db.query<{ n: number }, []>("SELECT COUNT(*) AS n FROM audit_log").get()!.n;
      const before = audits();
      const responses = await Promise.all(
        Array.from({ length: PARALLEL - 1 }, (_, i) =>
          t.request("POST", MCP, {
            token,
            body: { jsonrpc: "2.0", id: i, method: "tools/call", params: { name: "list_bank_accounts" } },
            headers: { "mcp-session-id": session },
          }),
        ),
      );
      for (const res of responses) {
        if (res.status !== 200) continue;
        const body = (await res.clone().json()) as { result?: { isError: boolean } };
        expect(body.result?.isError).toBe(false);
      }
      const { passed, limited } = await tally(responses);
      expect({ passed: passed + 1, limited }).toEqual({ passed: LIMIT, limited: PARALLEL - LIMIT });
      // Each call that passed is audited once; refused ones are not.
      expect(audits() - before).toBe(LIMIT - 1);
    },
    SLOW,
  );

  describe("the real server", () => {
    let server: RunningProcess | null = null;
    const dir = tempDir("svc-fault-rate-");
    afterAll(async () => {
      await server?.stop();
      rmSync(dir, { recursive: true, force: true });
    });

    test(
      "over HTTP with fetch: exactly 100 pass, 100 are 429 with Retry-After",
      async () => {
        server = await startServe({ dbPath: join(dir, "svc.db") });
        const { token } = await seedToken(server, { name: "burst", rate_limit_per_minute: LIMIT });
        // The window is the wall-clock minute: start early in one so that the burst stays inside it.
        const second = new Date().getUTCSeconds();
        if (second >= 55) await Bun.sleep((61 - second) * 1000);
        const url = `${server.url}${STATEMENTS}`;
        const responses = await Promise.all(
          Array.from({ length: PARALLEL }, () =>
            fetch(url, { headers: { authorization: `Bearer ${token}` } }),
          ),
        );
        expect(await tally(responses)).toEqual({ passed: LIMIT, limited: PARALLEL - LIMIT });
        // Still serving.
        expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
      },
      SLOW,
    );
  });
});
