// lanes: sqlite postgres
import { describe, expect, test } from "bun:test";
import { json, makeTestApp } from "../helpers/app";
import { expectError } from "../helpers/envelope";

const PATH = "/api/v1/integration/statements";

describe("rate limit", () => {
  test("exactly N requests pass in a window, N+1 is 429 with headers, the next window resets", async () => {
    const t = makeTestApp({}, "2026-11-20T09:00:10Z");
    const w = t.fixtures.world();
    t.services.admin.tokens.patch(w.tokenId, { rate_limit_per_minute: 5 });
    for (let i = 0; i < 5; i++) {
      const res = await t.request("GET", PATH, { token: w.token });
      expect(res.status).toBe(200);
      expect(res.headers.get("x-ratelimit-limit")).toBe("5");
      expect(res.headers.get("x-ratelimit-remaining")).toBe(String(4 - i));
      expect(res.headers.get("x-ratelimit-reset")).toBe(String(Date.parse("2026-11-20T09:01:00Z") / 1000));
    }
    const limited = await t.request("GET", PATH, { token: w.token });
    expect(limited.headers.get("retry-after")).toBe("50");
    expect(limited.headers.get("x-ratelimit-limit")).toBe("5");
    expect(limited.headers.get("x-ratelimit-remaining")).toBe("0");
    expect(limited.headers.get("content-type")).toContain("application/json");
    const details = await expectError(limited, 429, "rate_limited");
    expect(details.retry_after_seconds).toBe(50);

    t.clock.set("2026-11-20T09:01:00Z");
    const fresh = await t.request("GET", PATH, { token: w.token });
    expect(fresh.status).toBe(200);
    expect(fresh.headers.get("x-ratelimit-remaining")).toBe("4");
  });

  test("requests without a Bearer header are not counted; failed requests are", async () => {
    const t = makeTestApp();
    const w = t.fixtures.world();
    t.services.admin.tokens.patch(w.tokenId, { rate_limit_per_minute: 3 });
    for (let i = 0; i < 10; i++) await expectError(await t.request("GET", PATH), 401, "invalid_token_format");
    // A failing request (404 for an unknown statement) still counts.
    await expectError(
      await t.request("GET", `${PATH}/00000000-0000-4000-8000-000000000000`, { token: w.token }),
      404,
      "not_found",
    );
    await expectError(
      await t.request("POST", PATH, { token: w.token, body: { bank_account_id: w.account.bank_account_id } }),
      400,
      "validation_error",
    );
    expect((await t.request("GET", PATH, { token: w.token })).status).toBe(200);
    await expectError(await t.request("GET", PATH, { token: w.token }), 429, "rate_limited");
  });

  test("defaults: 60 for integration tokens, 300 for mcp tokens; unknown tokens count for their client address (SVC_PUBLIC_RATE_LIMIT_PER_MINUTE, 60)", async () => {
    const t = makeTestApp();
    const w = t.fixtures.world();
    const res = await t.request("GET", PATH, { token: w.token });
    expect(res.headers.get("x-ratelimit-limit")).toBe("60");
    const mcp = t.fixtures.world({ purpose: "mcp" });
    const denied = await t.request("GET", PATH, { token: mcp.token });
    expect(denied.headers.get("x-ratelimit-limit")).toBe("300");
    await expectError(denied, 403, "forbidden_purpose");

    // Each a different value: none gets a count of its own, the address counts them all.
    const unknown = (i: number) => `svc_live_${String(i).padStart(40, "Q")}`;
    for (let i = 0; i < 60; i++)
      await expectError(await t.request("GET", PATH, { token: unknown(i) }), 401, "invalid_token");
    await expectError(await t.request("GET", PATH, { token: unknown(60) }), 429, "rate_limited");
    // Another token is not affected.
    expect((await t.request("GET", PATH, { token: w.token })).status).toBe(200);
  });

  test("a revoked token fails from the next request on", async () => {
    const t = makeTestApp();
    const w = t.fixtures.world();
    expect((await t.request("GET", PATH, { token: w.token })).status).toBe(200);
    const revoke = await t.admin("POST", `/tokens/${w.tokenId}/revoke`);
    expect((await json(revoke)).revoked_at).toBeTruthy();
    await expectError(await t.request("GET", PATH, { token: w.token }), 401, "invalid_token");
  });

  test("IP allow-lists accept single addresses and CIDRs, IPv4 and IPv6, and ::ffff: forms", async () => {
    const t = makeTestApp({ SVC_TRUST_PROXY: "127.0.0.1/32" });
    const w = t.fixtures.world();
    t.services.admin.tokens.patch(w.tokenId, {
      allowed_ips: ["203.0.113.7", "198.51.100.0/24", "2001:db8::/32"],
    });
    const from = async (ip: string, xff?: string) => {
      t.clientIp.value = ip;
      return t.request("GET", PATH, { token: w.token, headers: xff ? { "x-forwarded-for": xff } : {} });
    };
    expect((await from("203.0.113.7")).status).toBe(200);
    expect((await from("::ffff:203.0.113.7")).status).toBe(200);
    expect((await from("198.51.100.200")).status).toBe(200);
    expect((await from("2001:db8:1::5")).status).toBe(200);
    await expectError(await from("203.0.113.8"), 403, "forbidden_ip");
    await expectError(await from("2001:db9::1"), 403, "forbidden_ip");
    // X-Forwarded-For is believed only from a trusted proxy.
    expect((await from("127.0.0.1", "198.51.100.9")).status).toBe(200);
    await expectError(await from("192.0.2.1", "198.51.100.9"), 403, "forbidden_ip");
  });
});
