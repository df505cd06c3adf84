// Small helpers for raw JSON-RPC calls against the agent endpoint.
import { expect } from "bun:test";
import type { ServiceOverrides } from "../../src/container";
import type { McpSession, SessionStore } from "../../src/mcp";
import { makeTestApp, type TestApp } from "../helpers/app";

export const MCP = "/api/v1/mcp";

/** The six tools, in the order tools/list gives them. */
export const TOOL_NAMES = [
  "list_companies",
  "list_bank_accounts",
  "get_balance",
  "list_statements",
  "get_statement",
  "search_operations",
] as const;

export interface RpcResponse {
  jsonrpc: string;
  id: string | number | null;
  result?: Record<string, unknown>;
  error?: { code: number; message: string; data?: unknown };
}

/** An operation in a tool's structuredContent, as the tests read it. */
export interface Op {
  operation_id: string;
  doc_date: string;
  direction: "credit" | "debit";
  amount: number;
  purpose: string;
  payer: { name: string; inn: string };
  payee: { name: string; inn: string };
}

export interface ToolResultBody {
  content: { type: string; text: string }[];
  structuredContent: Record<string, unknown>;
  isError: boolean;
  _meta: { notice: string };
}

let nextId = 1;

export function post(
  t: TestApp,
  token: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<Response> {
  return t.request("POST", MCP, { token, body, headers });
}

/** initialize; returns the session id. */
export async function initSession(
  t: TestApp,
  token: string,
  protocolVersion = "2025-06-18",
): Promise<string> {
  const res = await post(t, token, {
    jsonrpc: "2.0",
    id: nextId++,
    method: "initialize",
    params: { protocolVersion, capabilities: {}, clientInfo: { name: "test", version: "1" } },
  });
  expect(res.status).toBe(200);
  const session = res.headers.get("mcp-session-id");
  expect(session).toBeTruthy();
  return session as string;
}

export async function rpc(
  t: TestApp,
  token: string,
  session: string | null,
  method: string,
  params?: unknown,
  headers: Record<string, string> = {},
): Promise<RpcResponse> {
  const h: Record<string, string> = { ...headers };
  if (session !== null) h["mcp-session-id"] = session;
  const res = await post(t, token, { jsonrpc: "2.0", id: nextId++, method, params }, h);
  expect(res.status).toBe(200);
  return (await res.json()) as RpcResponse;
}

export async function callTool(
  t: TestApp,
  token: string,
  session: string,
  name: string,
  args: Record<string, unknown> = {},
): Promise<ToolResultBody> {
  const body = await rpc(t, token, session, "tools/call", { name, arguments: args });
  if (body.error) throw new Error(`tools/call ${name} failed: ${JSON.stringify(body.error)}`);
  return body.result as unknown as ToolResultBody;
}

/** Orders a statement "via UI" and lets the poller make it ready. */
export async function readyStatement(
  t: TestApp,
  accountId: string,
  from: string,
  to: string,
): Promise<string> {
  const s = t.services.statements.orderFromUi(accountId, from, to);
  await t.services.poller.idle();
  await t.services.poller.tick();
  await t.services.poller.idle();
  return s.statement_id;
}

/** Like makeTestApp, with service overrides (e.g. a session store that fails). */
export function makeTestAppWith(overrides: ServiceOverrides, env: Record<string, string> = {}): TestApp {
  return makeTestApp(env, "2026-11-20T09:00:00Z", { overrides });
}

/** A session store whose every call fails, as an unreachable shared store would. */
export class FailingSessionStore implements SessionStore {
  private fail(): never {
    throw new Error("session store unreachable");
  }
  async create(): Promise<void> {
    this.fail();
  }
  async get(): Promise<McpSession | null> {
    this.fail();
  }
  async extend(): Promise<void> {
    this.fail();
  }
  async delete(): Promise<void> {
    this.fail();
  }
  async deleteExpired(): Promise<number> {
    this.fail();
  }
}
