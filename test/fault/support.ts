// Shared pieces of the fault and abuse suite: an in-process service on a temp-file database,
// response checks (the error envelope, JSON-RPC answers), seeded worlds and request builders.
import { expect } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ERROR_STATUS } from "../../src/core/errors";
import { BASE, makeTestApp, type TestApp } from "../helpers/app";

export const MCP = "/api/v1/mcp";
export const STATEMENTS = "/api/v1/integration/statements";
export const IMPORTS = "/api/v1/integration/payments/imports";
export { TOOL_NAMES } from "../mcp/helpers";

/** Per-test timeout: property runs and a real server take longer than the default 5 s on a slow machine. */
export const SLOW = 60_000;

/** Runs per property; FAULT_RUNS_FACTOR multiplies them for longer exploratory runs. */
export function runs(n: number): number {
  return Math.max(1, Math.round(n * Number(process.env.FAULT_RUNS_FACTOR ?? 1)));
}

/** Fixed seeds keep failures reproducible; FAULT_SEED overrides them for exploratory runs. */
export function seed(base: number): number {
  const override = process.env.FAULT_SEED;
  return override ? Number(override) + base : base;
}

export interface FileTestApp extends TestApp {
  dbPath: string;
  dir: string;
  /** Closes both connections and removes the temp folder. */
  close(): void;
}

/**
 * The same wiring as makeTestApp (buildServices + createApp, manual clock, captured logs), on a
 * database file in a temp folder: a second (read-only) connection for the agent tools exists, and
 * file-level faults can be simulated.
 */
export function makeFileTestApp(env: Record<string, string> = {}): FileTestApp {
  const dir = mkdtempSync(join(tmpdir(), "svc-fault-"));
  const dbPath = join(dir, "svc.db");
  const t = makeTestApp(env, "2026-11-20T09:00:00Z", { dbPath });
  return Object.assign(t, {
    dbPath,
    dir,
    close() {
      t.services.store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  });
}

/** Sends raw bytes (or text) with any content type; nothing is encoded for the caller. */
export function rawRequest(
  t: TestApp,
  method: string,
  path: string,
  body: string | Uint8Array | undefined,
  headers: Record<string, string> = {},
): Promise<Response> {
  return t.app.handle(
    new Request(`${BASE}${path}`, {
      method,
      headers,
      body: body as string | Uint8Array<ArrayBuffer> | undefined,
    }),
  );
}

export interface Checked {
  status: number;
  text: string;
  json: unknown;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function describe(res: Response, text: string, context: string): string {
  return `${context}: HTTP ${res.status} ${text.slice(0, 300)}`;
}

/**
 * A REST answer to anything a client may send: never a 5xx, always X-Request-Id; an error is the
 * envelope {error: {code, message}} with the code's own status; no stack trace in a body.
 */
export async function expectCleanRest(res: Response, context = ""): Promise<Checked> {
  const text = await res.text();
  const where = describe(res, text, context);
  if (res.status >= 500) throw new Error(`server error for a client request. ${where}`);
  expect(res.headers.get("x-request-id"), where).toBeTruthy();
  expect(text, where).not.toContain("    at ");
  const json = parseJson(text);
  if (res.status >= 400) expectEnvelope(json, res.status, where);
  return { status: res.status, text, json };
}

/** The envelope shape, and that `code` is one of the specification's codes with this status. */
export function expectEnvelope(json: unknown, status: number, where = ""): { code: string; message: string } {
  const body = json as { error?: { code?: unknown; message?: unknown; details?: unknown } } | undefined;
  if (!body || typeof body !== "object" || !body.error || typeof body.error !== "object") {
    throw new Error(`not an error envelope. ${where}`);
  }
  const { code, message, details } = body.error;
  expect(typeof code, where).toBe("string");
  expect(typeof message, where).toBe("string");
  expect(ERROR_STATUS[code as keyof typeof ERROR_STATUS], where).toBe(status as never);
  if (details !== undefined) expect(typeof details === "object" && details !== null, where).toBe(true);
  expect(Object.keys(body), where).toEqual(["error"]);
  return { code: code as string, message: message as string };
}

/**
 * An agent endpoint answer: an HTTP error envelope (4xx; 503 only for service_unavailable), a
 * 202 with an empty body (notification), a 204 (DELETE), or HTTP 200 with one JSON-RPC object
 * carrying `jsonrpc: "2.0"` and exactly one of `result` / `error`.
 */
export async function expectCleanAgent(
  res: Response,
  context = "",
): Promise<Checked & { rpc?: { result?: unknown; error?: { code: number; message: string } } }> {
  const text = await res.text();
  const where = describe(res, text, context);
  expect(res.headers.get("x-request-id"), where).toBeTruthy();
  expect(text, where).not.toContain("    at ");
  const json = parseJson(text);
  if (res.status === 202 || res.status === 204) {
    expect(text, where).toBe("");
    return { status: res.status, text, json };
  }
  if (res.status >= 400) {
    const { code } = expectEnvelope(json, res.status, where);
    if (res.status >= 500) expect(code, where).toBe("service_unavailable");
    return { status: res.status, text, json };
  }
  expect(res.status, where).toBe(200);
  const rpc = json as { jsonrpc?: unknown; id?: unknown; result?: unknown; error?: unknown };
  expect(rpc && typeof rpc === "object" && !Array.isArray(rpc), where).toBe(true);
  expect(rpc.jsonrpc, where).toBe("2.0");
  expect("id" in rpc, where).toBe(true);
  expect("result" in rpc !== "error" in rpc, where).toBe(true);
  if ("error" in rpc) {
    const e = rpc.error as { code?: unknown; message?: unknown };
    expect([-32700, -32600, -32601, -32602, -32603], where).toContain(e.code as number);
    expect(typeof e.message, where).toBe("string");
  } else {
    expect(typeof rpc.result === "object" && rpc.result !== null, where).toBe(true);
  }
  return { status: res.status, text, json, rpc: rpc as never };
}

/** Nothing leaked onto Object.prototype by a body full of `__proto__` / `constructor` keys. */
export function expectPrototypesClean(): void {
  const probe = {} as Record<string, unknown>;
  for (const key of ["polluted", "isAdmin", "admin", "x", "status", "role"]) {
    expect(probe[key], `Object.prototype.${key}`).toBeUndefined();
  }
  expect(Object.keys(Object.prototype)).toEqual([]);
  expect(Object.keys(Array.prototype)).toEqual([]);
}

/** A company, two sandbox accounts, and tokens of every kind with a high rate limit. */
export function seedWorld(t: TestApp) {
  const company = t.fixtures.company();
  const account = t.fixtures.account(company.company_id, "sandbox", { alias: "main" });
  const other = t.fixtures.account(company.company_id, "sandbox", { alias: "other" });
  const grants = [
    { bank_account_id: account.bank_account_id, allow_read_statements: true, allow_send_payments: true },
    { bank_account_id: other.bank_account_id, allow_read_statements: true, allow_send_payments: true },
  ];
  const integration = t.fixtures.token(company.company_id, {
    read: true,
    send: true,
    accounts: grants,
    rate_limit_per_minute: 10_000,
  });
  const mcp = t.fixtures.token(company.company_id, {
    purpose: "mcp",
    accounts: grants.map((g) => ({ ...g, allow_send_payments: false })),
    rate_limit_per_minute: 10_000,
  });
  return { company, account, other, integration, mcp };
}

/** A fresh rate-limit window (the manual clock moves one minute). */
export function nextMinute(t: TestApp): void {
  t.clock.advance(60_000);
}

export function countRows(t: TestApp, table: string): number {
  return t.db.query<{ n: number }, []>(`SELECT COUNT(*) AS n FROM ${table}`).get()!.n;
}
