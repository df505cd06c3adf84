// lanes: postgres
// The rate limiter shared through PostgreSQL (src/db/pg/rate-limiter.ts) against the in-process one:
// the same decisions for the same hits (one behaviour, run against both), the same statuses and
// headers through the token guard, exact counts from three separate processes on one database
// (three limiters, then three HTTP servers), old windows swept, and an unreachable database failing
// each hit in bounded time as 503.
import { beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import postgres, { type Sql } from "postgres";
import { InMemoryRateLimiter } from "../../src/auth/rate-limiter";
import { type Clock, ManualClock } from "../../src/core/clock";
import type { RateLimiter } from "../../src/core/rate-window";
import { PostgresRateLimiter } from "../../src/db/pg/rate-limiter";
import { BASE, json, makeTestApp, type TestApp } from "../helpers/app";
import { expectError } from "../helpers/envelope";
import { connect, migratedDatabase } from "../helpers/pg";
import { ROOT, tempDir } from "../helpers/server";

const START = "2026-11-20T09:00:10.500Z";
const NEXT_MINUTE = "2026-11-20T09:01:00.000Z";
const unix = (iso: string) => Date.parse(iso) / 1000;

// A database of this file's own, built by the PostgreSQL migrations (the limiter's table included),
// dropped when the file ends (test/helpers/pg.ts).
let databaseUrl = "";
let sql: Sql;

beforeAll(async () => {
  databaseUrl = await migratedDatabase();
  sql = connect(databaseUrl, 8);
});

const uniqueKey = () => `token-${crypto.randomUUID()}`;

const implementations: [name: string, make: (clock: Clock) => RateLimiter][] = [
  ["in memory", (clock) => new InMemoryRateLimiter(clock)],
  ["PostgreSQL", (clock) => new PostgresRateLimiter(sql, clock)],
];

for (const [name, make] of implementations) {
  describe(`rate limiter behaviour: ${name}`, () => {
    test("windows are whole wall-clock minutes: reset at the next one, Retry-After the seconds to it", async () => {
      const clock = new ManualClock(START);
      const limiter = make(clock);
      const key = uniqueKey();
      expect(await limiter.hit(key, 10)).toEqual({
        allowed: true,
        limit: 10,
        remaining: 9,
        resetUnix: unix(NEXT_MINUTE),
        retryAfterSeconds: 50, // 49.5 s, rounded up
      });
      clock.set("2026-11-20T09:00:59.999Z");
      expect(await limiter.hit(key, 10)).toMatchObject({ remaining: 8, retryAfterSeconds: 1 });
      clock.set(NEXT_MINUTE);
      expect(await limiter.hit(key, 10)).toEqual({
        allowed: true,
        limit: 10,
        remaining: 9,
        resetUnix: unix("2026-11-20T09:02:00Z"),
        retryAfterSeconds: 60,
      });
    });

    test("remaining counts down to 0; past the limit every hit is refused with 0; keys count apart", async () => {
      const limiter = make(new ManualClock(START));
      const key = uniqueKey();
      const decisions = [];
      for (let i = 0; i < 5; i++) decisions.push(await limiter.hit(key, 3));
      expect(decisions.map((d) => [d.allowed, d.remaining])).toEqual([
        [true, 2],
        [true, 1],
        [true, 0],
        [false, 0],
        [false, 0],
      ]);
      expect(new Set(decisions.map((d) => `${d.limit} ${d.resetUnix} ${d.retryAfterSeconds}`))).toEqual(
        new Set([`3 ${unix(NEXT_MINUTE)} 50`]),
      );
      expect(await limiter.hit(uniqueKey(), 3)).toMatchObject({ allowed: true, remaining: 2 });
    });

    test("a new window starts every count again", async () => {
      const clock = new ManualClock(START);
      const limiter = make(clock);
      const key = uniqueKey();
      for (let i = 0; i < 3; i++) await limiter.hit(key, 2);
      expect(await limiter.hit(key, 2)).toMatchObject({ allowed: false, remaining: 0 });
      clock.advance(60_000);
      expect(await limiter.hit(key, 2)).toMatchObject({ allowed: true, remaining: 1 });
    });

    test("hits in flight together: exactly the limit pass, each remaining value once", async () => {
      const limiter = make(new ManualClock(START));
      const key = uniqueKey();
      const decisions = await Promise.all(Array.from({ length: 50 }, () => limiter.hit(key, 20)));
      const passed = decisions.filter((d) => d.allowed);
      expect(passed.map((d) => d.remaining).sort((a, b) => a - b)).toEqual(
        Array.from({ length: 20 }, (_, i) => i),
      );
      expect(decisions.filter((d) => !d.allowed).every((d) => d.remaining === 0)).toBe(true);
    });
  });
}

describe("through the token guard", () => {
  const shared = (clock: Clock) => new PostgresRateLimiter(sql, clock);

  /** A test app whose limiter (the in-memory one when none is given) reads the app's clock. */
  function appWith(limiter?: (clock: Clock) => RateLimiter): TestApp {
    let t: TestApp | undefined;
    const appClock: Clock = { now: () => t!.clock.now() };
    t = makeTestApp({}, START, { overrides: limiter ? { rateLimiter: limiter(appClock) } : {} });
    return t;
  }

  /** Statuses, codes and rate-limit headers of 5 requests at limit 3, then one in the next minute. */
  async function responses(t: TestApp) {
    const w = t.fixtures.world();
    t.services.admin.tokens.patch(w.tokenId, { rate_limit_per_minute: 3 });
    const seen = [];
    for (let i = 0; i < 6; i++) {
      if (i === 5) t.clock.set(NEXT_MINUTE);
      const res = await t.request("GET", "/api/v1/integration/statements", { token: w.token });
      const headers = Object.fromEntries(
        ["x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset", "retry-after"].map((h) => [
          h,
          res.headers.get(h),
        ]),
      );
      seen.push({
        status: res.status,
        headers,
        code: res.ok ? null : (await json<{ error: { code: string } }>(res)).error.code,
      });
    }
    return seen;
  }

  test("the same statuses, codes and headers as with the in-memory limiter", async () => {
    const inMemory = await responses(appWith());
    const onPostgres = await responses(appWith(shared));
    expect(onPostgres).toEqual(inMemory);
    expect(
      onPostgres.map((r) => [r.status, r.headers["x-ratelimit-remaining"], r.headers["retry-after"]]),
    ).toEqual([
      [200, "2", null],
      [200, "1", null],
      [200, "0", null],
      [429, "0", "50"],
      [429, "0", "50"],
      [200, "2", null],
    ]);
  });

  test("the agent endpoint, the stdio relay's paths and the payment upload wait for it too", async () => {
    const t = appWith(shared);
    const initialize = {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "test", version: "1" } },
    };
    const routes = [
      {
        purpose: "mcp",
        send: false,
        status: 200,
        call: (token: string) => t.request("POST", "/api/v1/mcp", { token, body: initialize }),
      },
      {
        purpose: "mcp",
        send: false,
        status: 200,
        call: (token: string) =>
          t.request("GET", "/api/v1/mcp/tools", {
            token,
            headers: { "x-mcp-session-id": crypto.randomUUID() },
          }),
      },
      {
        purpose: "integration",
        send: true,
        status: 400,
        // A multipart form without its file: past the limiter, the upload refuses it (400); a body
        // that is not multipart at all would be refused before the token (415).
        call: (token: string) =>
          t.app.handle(
            new Request(`${BASE}/api/v1/integration/payments/imports`, {
              method: "POST",
              headers: { authorization: `Bearer ${token}` },
              body: new FormData(),
            }),
          ),
      },
    ] as const;
    for (const route of routes) {
      const w = t.fixtures.world({ purpose: route.purpose, send: route.send });
      t.services.admin.tokens.patch(w.tokenId, { rate_limit_per_minute: 1 });
      const first = await route.call(w.token);
      // Past the limiter: 200, or the upload's refusal of a request without a file.
      expect([first.status, first.headers.get("x-ratelimit-remaining")]).toEqual([route.status, "0"]);
      const second = await route.call(w.token);
      expect(second.headers.get("retry-after")).toBe("50");
      await expectError(second, 429, "rate_limited");
    }
  });
});

test("the counters' table is UNLOGGED, keyed by (key, window_start_ms)", async () => {
  const [table] = await sql<{ persistence: string; key: string }[]>`
    SELECT c.relpersistence AS persistence, pg_get_constraintdef(k.oid) AS key
      FROM pg_class c JOIN pg_constraint k ON k.conrelid = c.oid AND k.contype = 'p'
     WHERE c.relname = 'rate_limit_hits'`;
  expect(table).toEqual({ persistence: "u", key: "PRIMARY KEY (key, window_start_ms)" });
});

test("old windows are swept by the first hit of a later window; the previous one stays", async () => {
  const clock = new ManualClock(START);
  const limiter = new PostgresRateLimiter(sql, clock);
  const key = uniqueKey();
  const windows = async () =>
    (
      await sql<{ window_start_ms: string }[]>`
        SELECT window_start_ms::text FROM rate_limit_hits WHERE key = ${key} ORDER BY window_start_ms`
    ).map((r) => Number(r.window_start_ms) / 1000);
  await limiter.hit(key, 5);
  clock.advance(60_000);
  await limiter.hit(key, 5);
  expect(await windows()).toEqual([unix("2026-11-20T09:00:00Z"), unix("2026-11-20T09:01:00Z")]);
  clock.advance(60_000);
  await limiter.hit(key, 5);
  expect(await windows()).toEqual([unix("2026-11-20T09:01:00Z"), unix("2026-11-20T09:02:00Z")]);
});

/** One Bun process per entry of `envs`, each running `script`; stdout is read line by line. */
function spawnReplicas(script: string, envs: Record<string, string>[]) {
  return envs.map((env) => {
    const proc = Bun.spawn([process.execPath, "-e", script], {
      cwd: ROOT,
      env: { ...process.env, REPLICA_DATABASE_URL: databaseUrl, REPLICA_NOW: START, ...env },
      stdin: "pipe",
      stdout: "pipe",
      stderr: "inherit",
    });
    return { proc, out: lines(proc.stdout) };
  });
}

async function* lines(stream: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let buffered = "";
  for await (const chunk of stream) {
    buffered += decoder.decode(chunk, { stream: true });
    let end = buffered.indexOf("\n");
    while (end >= 0) {
      yield buffered.slice(0, end);
      buffered = buffered.slice(end + 1);
      end = buffered.indexOf("\n");
    }
  }
}

const imported = (path: string) => JSON.stringify(join(ROOT, path));

// A limiter's replica: its own postgres.js pool and limiter; connects, says "ready", waits for
// "go" on stdin, fires its hits all at once and prints their decisions as one JSON line.
const LIMITER_REPLICA = `
  const { default: postgres } = await import("postgres");
  const { PostgresRateLimiter } = await import(${imported("src/db/pg/rate-limiter.ts")});
  const { ManualClock } = await import(${imported("src/core/clock.ts")});
  const sql = postgres(process.env.REPLICA_DATABASE_URL, { max: 8, onnotice: () => {} });
  const limiter = new PostgresRateLimiter(sql, new ManualClock(process.env.REPLICA_NOW));
  // Every connection of the pool open before the start.
  await Promise.all(Array.from({ length: 8 }, () => sql\`SELECT pg_sleep(0.05)\`));
  console.log("ready");
  for await (const _ of console) break;
  const hits = Number(process.env.REPLICA_HITS);
  const decisions = await Promise.all(
    Array.from({ length: hits }, () => limiter.hit(process.env.REPLICA_KEY, 100)),
  );
  console.log(JSON.stringify(decisions));
  await sql.end({ timeout: 5 });
`;

test("3 processes, 200 hits at once against a limit of 100: exactly 100 pass, remaining 99…0 once each", async () => {
  const key = uniqueKey();
  const replicas = spawnReplicas(
    LIMITER_REPLICA,
    [67, 67, 66].map((hits) => ({ REPLICA_KEY: key, REPLICA_HITS: String(hits) })),
  );
  try {
    for (const r of replicas) expect((await r.out.next()).value).toBe("ready");
    for (const r of replicas) {
      r.proc.stdin.write("go\n");
      await r.proc.stdin.flush();
    }
    const decisions = [];
    for (const r of replicas) {
      decisions.push(...JSON.parse((await r.out.next()).value as string));
      expect(await r.proc.exited).toBe(0);
    }
    expect(decisions.length).toBe(200);
    const passed = decisions.filter((d) => d.allowed);
    const refused = decisions.filter((d) => !d.allowed);
    expect(passed.map((d) => d.remaining).sort((a, b) => a - b)).toEqual(
      Array.from({ length: 100 }, (_, i) => i),
    );
    expect(refused.length).toBe(100);
    expect(refused.every((d) => d.remaining === 0)).toBe(true);
    expect(new Set(decisions.map((d) => `${d.limit} ${d.resetUnix} ${d.retryAfterSeconds}`))).toEqual(
      new Set([`100 ${unix(NEXT_MINUTE)} 50`]),
    );
    const [row] = await sql<{ used: number }[]>`SELECT used FROM rate_limit_hits WHERE key = ${key}`;
    expect(row?.used).toBe(200);
  } finally {
    for (const r of replicas) r.proc.kill();
  }
}, 60_000);

// An HTTP replica: the whole app (the test app's wiring, its clock fixed at REPLICA_NOW) on the
// shared SQLite file, its limiter on the shared PostgreSQL, served on a free port it prints.
const HTTP_REPLICA = `
  const { default: postgres } = await import("postgres");
  const { PostgresRateLimiter } = await import(${imported("src/db/pg/rate-limiter.ts")});
  const { makeTestApp } = await import(${imported("test/helpers/app.ts")});
  const sql = postgres(process.env.REPLICA_DATABASE_URL, { max: 8, onnotice: () => {} });
  let t;
  const rateLimiter = new PostgresRateLimiter(sql, { now: () => t.clock.now() });
  t = makeTestApp({}, process.env.REPLICA_NOW, { dbPath: process.env.REPLICA_DB_PATH, overrides: { rateLimiter } });
  await Promise.all(Array.from({ length: 8 }, () => sql\`SELECT pg_sleep(0.05)\`));
  const server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: (request) => t.app.handle(request) });
  console.log(String(server.port));
  for await (const _ of console) break;
  server.stop(true);
  await sql.end({ timeout: 5 });
`;

test("3 servers on one database, 200 requests at once spread over them, a token of 100/minute: exactly 100 pass, with today's headers", async () => {
  const dbPath = join(tempDir(), "svc.db");
  const seed = makeTestApp({}, START, { dbPath });
  const w = seed.fixtures.world();
  seed.services.admin.tokens.patch(w.tokenId, { rate_limit_per_minute: 100 });
  const replicas = spawnReplicas(
    HTTP_REPLICA,
    [1, 2, 3].map(() => ({ REPLICA_DB_PATH: dbPath })),
  );
  try {
    const ports: number[] = [];
    for (const r of replicas) ports.push(Number((await r.out.next()).value));
    const responses = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        fetch(`http://127.0.0.1:${ports[i % 3]}/api/v1/integration/statements`, {
          headers: { authorization: `Bearer ${w.token}` },
        }),
      ),
    );
    const seen = await Promise.all(
      responses.map(async (res) => ({
        status: res.status,
        limit: res.headers.get("x-ratelimit-limit"),
        remaining: Number(res.headers.get("x-ratelimit-remaining")),
        reset: res.headers.get("x-ratelimit-reset"),
        retryAfter: res.headers.get("retry-after"),
        code: res.ok ? null : (await json<{ error: { code: string } }>(res)).error.code,
      })),
    );
    const passed = seen.filter((r) => r.status === 200);
    const limited = seen.filter((r) => r.status === 429);
    expect([passed.length, limited.length]).toEqual([100, 100]);
    expect(passed.map((r) => r.remaining).sort((a, b) => a - b)).toEqual(
      Array.from({ length: 100 }, (_, i) => i),
    );
    expect(passed.every((r) => r.retryAfter === null && r.code === null)).toBe(true);
    expect(new Set(limited.map((r) => `${r.remaining} ${r.retryAfter} ${r.code}`))).toEqual(
      new Set(["0 50 rate_limited"]),
    );
    expect(new Set(seen.map((r) => `${r.limit} ${r.reset}`))).toEqual(new Set([`100 ${unix(NEXT_MINUTE)}`]));
    for (const r of replicas) {
      r.proc.stdin.write("stop\n");
      await r.proc.stdin.flush();
      expect(await r.proc.exited).toBe(0);
    }
  } finally {
    for (const r of replicas) r.proc.kill();
  }
}, 60_000);

describe("an unreachable database", () => {
  /** A port nothing listens on any more. */
  function closedPort(): number {
    const listener = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
    const port = listener.port;
    listener.stop(true);
    return port;
  }

  test("a refused connection fails the hit, and the guard answers 503 service_unavailable", async () => {
    const unreachable = postgres(`postgres://svc@127.0.0.1:${closedPort()}/postgres`, {
      max: 2,
      onnotice: () => {},
    });
    try {
      const limiter = new PostgresRateLimiter(unreachable, new ManualClock(START));
      await expect(limiter.hit(uniqueKey(), 10)).rejects.toMatchObject({ code: "ECONNREFUSED" });

      let t: TestApp | undefined;
      t = makeTestApp({}, START, {
        overrides: { rateLimiter: new PostgresRateLimiter(unreachable, { now: () => t!.clock.now() }) },
      });
      const w = t.fixtures.world();
      const res = await t.request("GET", "/api/v1/integration/statements", { token: w.token });
      expect(res.headers.get("retry-after")).toBe("1");
      expect(res.headers.get("x-ratelimit-remaining")).toBeNull();
      await expectError(res, 503, "service_unavailable");
      expect(t.logs.some((l) => l.includes("rate limit store failed") && l.includes("ECONNREFUSED"))).toBe(
        true,
      );
    } finally {
      await unreachable.end({ timeout: 1 });
    }
  });

  test("a server that accepts and never answers: the hit fails after the limiter's timeout", async () => {
    const silent = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
    const unanswered = postgres(`postgres://svc@127.0.0.1:${silent.port}/postgres`, {
      max: 2,
      onnotice: () => {},
    });
    try {
      const limiter = new PostgresRateLimiter(unanswered, new ManualClock(START), 200);
      await expect(limiter.hit(uniqueKey(), 10)).rejects.toThrow("no answer from PostgreSQL in 200 ms");
    } finally {
      await unanswered.end({ timeout: 0 });
      silent.stop(true);
    }
  });
});
