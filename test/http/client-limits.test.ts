// lanes: sqlite postgres
// Limits per client address (decisions §20): the routes that need no token, and bearers that are
// refused (unknown tokens, a wrong admin or metrics bearer). The right bearer is never refused.
import { describe, expect, test } from "bun:test";
import { AddressLimiter, addressKey } from "../../src/auth/address-limiter";
import { ManualClock } from "../../src/core/clock";
import { ADMIN_TOKEN, makeTestApp, type TestApp } from "../helpers/app";
import { expectError } from "../helpers/envelope";

const LIMIT = "5";
const METRICS = "metrics-token-0123456789";

function app(env: Record<string, string> = {}): TestApp {
  return makeTestApp({ SVC_PUBLIC_RATE_LIMIT_PER_MINUTE: LIMIT, ...env }, "2026-11-20T09:00:05Z");
}

describe("routes that need no token", () => {
  test("OAuth routes: 429 with Retry-After and the OAuth body slow_down past the limit, per address", async () => {
    const t = app();
    const paths = [
      "/.well-known/oauth-authorization-server",
      "/.well-known/oauth-protected-resource/mcp",
      "/oauth/authorize?client_id=x",
    ];
    for (let i = 0; i < 5; i++) expect((await t.request("GET", paths[i % 3]!)).status).not.toBe(429);
    for (const path of [...paths, "/oauth/register", "/oauth/token", "/oauth/revoke"]) {
      const method = path.startsWith("/oauth/authorize") || path.startsWith("/.well-known") ? "GET" : "POST";
      const res = await t.request(method, path, { body: method === "POST" ? { x: 1 } : undefined });
      expect(res.status).toBe(429);
      expect(res.headers.get("retry-after")).toBe("55");
      expect(res.headers.get("cache-control")).toBe("no-store");
      expect(res.headers.get("x-request-id")).toBeTruthy();
      const body = (await res.json()) as { error: string; error_description: string };
      expect(body.error).toBe("slow_down");
    }
    // The access log records the 429s the routes sent.
    for (let i = 0; i < 50; i++) await new Promise((r) => setImmediate(r));
    const logged = t.logs
      .map((l) => JSON.parse(l) as { msg: string; route?: string; status?: number })
      .filter((l) => l.msg === "request" && l.route === "/oauth/register");
    expect(logged.map((l) => l.status)).toEqual([429]);
    // Nothing was stored by the refused registration.
    expect(t.db.query<{ n: number }>("SELECT count(*) AS n FROM oauth_clients").get()?.n).toBe(0);
    // Another address has its own count; the next minute the first one starts again.
    t.clientIp.value = "203.0.113.5";
    expect((await t.request("GET", paths[0]!)).status).toBe(200);
    t.clientIp.value = "127.0.0.1";
    t.clock.advance(60_000);
    expect((await t.request("GET", paths[0]!)).status).toBe(200);
  });

  test("the address is the one the resolver gives: behind a trusted proxy the forwarded one", async () => {
    const t = app({ SVC_TRUST_PROXY: "10.0.0.0/8" });
    t.clientIp.value = "10.0.0.1";
    const from = (ip: string) =>
      t.request("GET", "/.well-known/oauth-authorization-server", { headers: { "x-forwarded-for": ip } });
    for (let i = 0; i < 5; i++) expect((await from("198.51.100.1")).status).toBe(200);
    expect((await from("198.51.100.1")).status).toBe(429);
    expect((await from("198.51.100.2")).status).toBe(200);
  });
});

describe("refused bearers count against the address's limit", () => {
  test("unknown tokens get no count of their own: 401 invalid_token, then 429 for the address", async () => {
    const t = app();
    const w = t.fixtures.world();
    for (let i = 0; i < 5; i++) {
      const random = `svc_live_${crypto.randomUUID().replaceAll("-", "").padEnd(40, "A").slice(0, 40)}`;
      await expectError(
        await t.request("GET", "/api/v1/integration/statements", { token: random }),
        401,
        "invalid_token",
      );
    }
    const over = await t.request("GET", "/api/v1/integration/statements", {
      token: `svc_live_${"Q".repeat(40)}`,
    });
    await expectError(over, 429, "rate_limited");
    expect(over.headers.get("retry-after")).toBe("55");
    // No per-token counter was made for them; a known token is counted by its own id, unaffected.
    expect((await t.request("GET", "/api/v1/integration/statements", { token: w.token })).status).toBe(200);
    expect(t.services.clientLimiter.size).toBe(1);
  });

  test("a wrong admin bearer: 401, then 429; audited once per address and window; the right one always passes", async () => {
    const t = app();
    const wrong = { authorization: `Bearer ${ADMIN_TOKEN}x` };
    for (let i = 0; i < 5; i++)
      await expectError(
        await t.request("GET", "/admin/api/companies", { headers: wrong }),
        401,
        "invalid_token",
      );
    for (let i = 0; i < 20; i++)
      await expectError(
        await t.request("GET", "/admin/api/companies", { headers: wrong }),
        429,
        "rate_limited",
      );
    expect((await t.admin("GET", "/companies")).status).toBe(200);
    const entries = t.services.audit.query({ action: "admin.api.refused", limit: 100 });
    expect(entries.map((e) => e.outcome)).toEqual(["rate_limited", "invalid_token"]);
    expect(entries.every((e) => e.ip === "127.0.0.1")).toBe(true);
    expect(JSON.stringify(entries)).not.toContain(ADMIN_TOKEN);
  });

  test("a wrong metrics bearer: the same, the right one always passes", async () => {
    const t = app({ SVC_METRICS_TOKEN: METRICS });
    const scrape = (token: string) =>
      t.request("GET", "/metrics", { headers: { authorization: `Bearer ${token}` } });
    for (let i = 0; i < 5; i++) await expectError(await scrape("wrong"), 401, "invalid_token");
    for (let i = 0; i < 5; i++) await expectError(await scrape("wrong"), 429, "rate_limited");
    expect((await scrape(METRICS)).status).toBe(200);
    const entries = t.services.audit.query({ action: "metrics.refused", limit: 100 });
    expect(entries.map((e) => e.outcome)).toEqual(["rate_limited", "invalid_token"]);
  });
});

describe("the counts stay bounded", () => {
  test("a new window forgets every address; past the cap, new addresses share one count", () => {
    const clock = new ManualClock("2026-11-20T09:00:00Z");
    const limiter = new AddressLimiter(clock, 3, 100);
    for (let i = 0; i < 1000; i++) limiter.hit(`198.51.${i >> 8}.${i & 255}`);
    expect(limiter.size).toBe(101);
    // The crowd beyond the cap is over its limit together.
    expect(limiter.hit("203.0.113.200").allowed).toBe(false);
    clock.advance(60_000);
    expect(limiter.hit("203.0.113.200").allowed).toBe(true);
    expect(limiter.size).toBe(1);
  });

  test("an IPv6 client is its /64; IPv4 in IPv6 is the IPv4 address", () => {
    expect(addressKey("2001:db8:1:2:aaaa::1")).toBe(addressKey("2001:db8:1:2:ffff:1:2:3"));
    expect(addressKey("2001:db8:1:2::1")).not.toBe(addressKey("2001:db8:1:3::1"));
    expect(addressKey("::ffff:192.0.2.1")).toBe("192.0.2.1");
    expect(addressKey(null)).toBe("unknown");
  });
});

describe("the hot path stays synchronous", () => {
  test("no hook of the HTTP core on the statement poll is one the framework would await (its rule: the text awaits or returns a call)", () => {
    const t = makeTestApp();
    const poll = t.app.routes.find(
      (r) => r.method === "GET" && r.path === "/api/v1/integration/statements/:statement_id",
    );
    type Hook = { fn: () => unknown; scope?: string };
    // The core's hooks are global; the token check is the route's own (asynchronous on
    // PostgreSQL, whose shared limiter answers with a promise).
    const core = ((poll?.hooks as { transform?: Hook[] } | undefined)?.transform ?? []).filter(
      (hook) => hook.scope === "global",
    );
    expect(core.length).toBeGreaterThanOrEqual(2);
    for (const hook of core) {
      expect(hook.fn.constructor.name).toBe("Function");
      expect(/(?:return|=>)\s?\S+\(|a(?:sync|wait)/.test(hook.fn.toString())).toBe(false);
    }
  });
});
