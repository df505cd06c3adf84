// lanes: sqlite
// Floods without a token against a real `svc serve` on 127.0.0.1 (decisions §20): what the
// server stores and how much memory it takes stay bounded, whatever an address sends. Outcomes
// only (statuses, rows, file sizes, resident memory), in bounded loops; never times.
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { ADMIN_TOKEN } from "../helpers/app";
import { type RunningProcess, startServe, tempDir } from "../helpers/server";

const LIMIT = 20;
const MB = 1024 * 1024;

let dir: string;
let dbPath: string;
let server: RunningProcess;

beforeAll(async () => {
  dir = tempDir("svc-abuse-");
  dbPath = join(dir, "svc.db");
  // Each flood comes from an address of its own (through the trusted proxy header), so that one
  // flood's count does not hide another's.
  server = await startServe({
    dbPath,
    env: { SVC_PUBLIC_RATE_LIMIT_PER_MINUTE: String(LIMIT), SVC_TRUST_PROXY: "127.0.0.1" },
  });
});

// A harness limit: the server finishes what it was sent (37.5 MB bodies among it) before it exits.
afterAll(async () => {
  await server?.stop();
}, 30_000);

/** Bytes of the database and its WAL. */
function databaseBytes(): number {
  let total = 0;
  for (const file of [dbPath, `${dbPath}-wal`]) if (existsSync(file)) total += statSync(file).size;
  return total;
}

function count(sql: string): number {
  const db = new Database(dbPath, { readonly: true });
  try {
    return (db.query(sql).get() as { n: number }).n;
  } finally {
    db.close();
  }
}

/** Sends `n` requests one after another; the statuses, by status. */
async function flood(n: number, send: (i: number) => Promise<Response>): Promise<Map<number, number>> {
  const statuses = new Map<number, number>();
  for (let i = 0; i < n; i++) {
    const res = await send(i);
    await res.arrayBuffer();
    statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
  }
  return statuses;
}

/** Requests that got past the limit: a flood that crosses a minute boundary gets two windows. */
const admitted = (statuses: Map<number, number>) =>
  [...statuses].filter(([status]) => status !== 429).reduce((sum, [, n]) => sum + n, 0);

const N = 300;

describe("floods without a token", () => {
  test("POST /oauth/register with 15 KB bodies: 429 slow_down past the limit, rows and file growth bounded", async () => {
    const before = databaseBytes();
    const redirectUris = Array.from(
      { length: 20 },
      (_, i) => `http://127.0.0.1:${1000 + i}/${"r".repeat(680)}`,
    );
    const body = JSON.stringify({ redirect_uris: redirectUris, token_endpoint_auth_method: "none" });
    expect(body.length).toBeGreaterThan(14_000);
    const statuses = await flood(N, () =>
      fetch(`${server.url}/oauth/register`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-forwarded-for": "198.51.100.1" },
        body,
      }),
    );
    expect(admitted(statuses)).toBeLessThanOrEqual(2 * LIMIT);
    expect(statuses.get(429) ?? 0).toBeGreaterThanOrEqual(N - 2 * LIMIT);
    const refused = await fetch(`${server.url}/oauth/register`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-forwarded-for": "198.51.100.1" },
      body,
    });
    if (refused.status === 429) {
      expect(((await refused.json()) as { error: string }).error).toBe("slow_down");
      expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    }
    expect(count("SELECT count(*) AS n FROM oauth_clients")).toBeLessThanOrEqual(2 * LIMIT + 1);
    // 300 registrations of 15 KB would be 4.5 MB of rows (and as much again in the WAL).
    expect(databaseBytes() - before).toBeLessThan(3 * MB);
  });

  test("GET /oauth/authorize with a 7,000-character state: pending requests bounded", async () => {
    const registered = await fetch(`${server.url}/oauth/register`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-forwarded-for": "198.51.100.2" },
      body: JSON.stringify({ redirect_uris: ["http://127.0.0.1:9/cb"], token_endpoint_auth_method: "none" }),
    });
    expect(registered.status).toBe(201);
    const { client_id } = (await registered.json()) as { client_id: string };
    const query = new URLSearchParams({
      response_type: "code",
      client_id,
      redirect_uri: "http://127.0.0.1:9/cb",
      code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
      code_challenge_method: "S256",
      state: "s".repeat(7000),
    });
    const statuses = await flood(N, () =>
      fetch(`${server.url}/oauth/authorize?${query}`, {
        redirect: "manual",
        headers: { "x-forwarded-for": "198.51.100.2" },
      }),
    );
    expect(admitted(statuses)).toBeLessThanOrEqual(2 * LIMIT);
    expect(statuses.get(429) ?? 0).toBeGreaterThanOrEqual(N - 2 * LIMIT);
    expect(count("SELECT count(*) AS n FROM oauth_requests")).toBeLessThanOrEqual(2 * LIMIT);
  });

  test("wrong-token POST /admin/login: 429 past the limit, audit rows bounded, the right token still signs in", async () => {
    const before = count("SELECT count(*) AS n FROM audit_log WHERE action = 'admin.ui.sign_in'");
    const origin = server.url;
    const form = (token: string) => ({
      method: "POST",
      redirect: "manual" as const,
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        origin,
        "x-forwarded-for": "198.51.100.3",
      },
      body: new URLSearchParams({ token }).toString(),
    });
    const statuses = await flood(N, (i) => fetch(`${server.url}/admin/login`, form(`wrong-${i}`)));
    expect(admitted(statuses)).toBeLessThanOrEqual(2 * LIMIT);
    expect(statuses.get(429) ?? 0).toBeGreaterThanOrEqual(N - 2 * LIMIT);
    // One entry for the address's first refusal and one for its lockout, per window.
    const rows = count("SELECT count(*) AS n FROM audit_log WHERE action = 'admin.ui.sign_in'") - before;
    expect(rows).toBeLessThanOrEqual(4);
    expect(rows).toBeGreaterThanOrEqual(2);
    const signIn = await fetch(`${server.url}/admin/login`, form(ADMIN_TOKEN));
    expect(signIn.status).toBe(303);
  });
});

/** The server's peak resident memory so far (VmHWM), in bytes. */
function peakRss(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = /VmHWM:\s+(\d+) kB/.exec(status)?.[1];
  return Number(kb) * 1024;
}

describe("large bodies without a token", () => {
  test("8 concurrent 37.5 MB bodies to the upload routes: all 401/413/415, peak memory bounded", async () => {
    const pid = server.proc.pid;
    const baseline = peakRss(pid);
    const big = new Uint8Array(37.5 * MB).fill(0x20);
    big[0] = 0x5b; // "[": a JSON array of spaces, were it ever parsed
    big[big.length - 1] = 0x5d;
    const targets: [string, Record<string, string>][] = [
      ["/api/v1/integration/statements/import", { "content-type": "application/json" }],
      ["/api/v1/integration/payments/imports", { "content-type": "application/json" }],
      ["/admin/statements/import", { "content-type": "application/json" }],
      ["/api/v1/integration/statements/import", { "content-type": "multipart/form-data; boundary=x" }],
    ];
    const statuses: number[] = [];
    for (let round = 0; round < 3; round++) {
      const answers = await Promise.all(
        Array.from({ length: 8 }, (_, i) => {
          const [path, headers] = targets[i % targets.length]!;
          return fetch(`${server.url}${path}`, { method: "POST", headers, body: big }).then(
            async (res) => {
              await res.arrayBuffer();
              return res.status;
            },
            // The server may close the connection before the client has sent everything.
            () => 0,
          );
        }),
      );
      statuses.push(...answers);
    }
    const answered = statuses.filter((s) => s !== 0);
    expect(answered.length).toBeGreaterThan(0);
    // Refused before a byte of the body is read: by its declared size, its type or its token.
    for (const s of answered) expect([401, 413, 415]).toContain(s);
    // Before: every body was read whole and parsed (about 550 MB per request). Now none is read.
    expect(peakRss(pid) - baseline).toBeLessThan(200 * MB);
  });
});
