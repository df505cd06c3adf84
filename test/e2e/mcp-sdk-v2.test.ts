// lanes: sqlite postgres
// The official MCP SDK v2 client against the real server, in each of its ways of choosing the
// protocol revision: legacy (initialize and a session, 2025-11-25), auto (it asks server/discover
// and goes stateless) and pinned to 2026-07-28. Each lists the six tools, calls every one, and
// pages through statements and operations with the cursors the server signs.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import {
  Client,
  StreamableHTTPClientTransport,
  type VersionNegotiationMode,
} from "@modelcontextprotocol/client";
import { type AgentServer, startAgentServer, TOOL_NAMES } from "../helpers/agent-server";
import { expectToolAnswer } from "../helpers/tool-answers";

let agent: AgentServer;
let server: AgentServer["server"];
let token: string;
let accountId: string;
let statementId: string;
let dateFrom: string;
let dateTo: string;

beforeAll(async () => {
  // Three statements, so that list_statements has more than one page at limit 2.
  agent = await startAgentServer({ accountSuffix: "0043", statements: 3, opsPerDay: 12 });
  ({ server, token, accountId, statementId, dateFrom, dateTo } = agent);
});

afterAll(async () => {
  await agent?.stop();
});

async function connect(mode: VersionNegotiationMode): Promise<Client> {
  const client = new Client({ name: "svc-e2e-v2", version: "1.0.0" }, { versionNegotiation: { mode } });
  const transport = new StreamableHTTPClientTransport(new URL(`${server.url}/api/v1/mcp`), {
    authProvider: { token: async () => token },
  });
  await client.connect(transport);
  return client;
}

type Structured = Record<string, unknown> & { next_cursor?: string | null };

async function call(client: Client, name: string, args: Record<string, unknown>): Promise<Structured> {
  const result = await client.callTool({ name, arguments: args });
  expect(result.isError, `${name}: ${JSON.stringify(result.content)}`).toBeFalsy();
  const tool = (await client.listTools()).tools.find((t) => t.name === name)!;
  expectToolAnswer(tool, result);
  return result.structuredContent as Structured;
}

/** Follows next_cursor to the end; returns every item of `key`. */
async function allPages(client: Client, name: string, args: Record<string, unknown>, key: string) {
  const items: unknown[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 100; page++) {
    const out = await call(client, name, { ...args, ...(cursor ? { cursor } : {}) });
    items.push(...(out[key] as unknown[]));
    if (!out.next_cursor) return { items, pages: page + 1 };
    cursor = out.next_cursor;
  }
  throw new Error("no last page");
}

const MODES: [string, VersionNegotiationMode, "legacy" | "modern"][] = [
  ["legacy", "legacy", "legacy"],
  ["auto", "auto", "modern"],
  ["pinned 2026-07-28", { pin: "2026-07-28" }, "modern"],
];

describe("SDK v2 client", () => {
  for (const [label, mode, era] of MODES) {
    test(`${label}: six tools, each called, statements and operations paged`, async () => {
      const client = await connect(mode);
      try {
        expect(client.getProtocolEra()).toBe(era);
        expect(client.getNegotiatedProtocolVersion()).toBe(era === "modern" ? "2026-07-28" : "2025-11-25");
        const { tools } = await client.listTools();
        expect(tools.map((t) => t.name).sort()).toEqual(TOOL_NAMES);
        for (const tool of tools) expect(tool.annotations?.readOnlyHint).toBe(true);

        expect((await call(client, "list_companies", {})).companies).toHaveLength(1);
        expect((await call(client, "list_bank_accounts", {})).bank_accounts).toHaveLength(1);
        expect(await call(client, "get_balance", { bank_account_id: accountId })).toHaveProperty("balance");
        const statement = await call(client, "get_statement", { statement_id: statementId });
        expect(statement).toHaveProperty("operations");

        const statements = await allPages(
          client,
          "list_statements",
          { bank_account_id: accountId, limit: 2 },
          "statements",
        );
        expect({ items: statements.items.length, pages: statements.pages }).toEqual({ items: 3, pages: 2 });
        const ops = await allPages(
          client,
          "search_operations",
          { bank_account_id: accountId, date_from: dateFrom, date_to: dateTo, limit: 25 },
          "operations",
        );
        expect(ops.pages).toBeGreaterThan(2);
        const ids = ops.items.map((o) => (o as { operation_id: string }).operation_id);
        expect(new Set(ids).size).toBe(ids.length);

        // A cursor changed by the caller is refused as a tool error, not followed.
        const first = await call(client, "list_statements", { bank_account_id: accountId, limit: 2 });
        const tampered = `${first.next_cursor!.slice(0, -2)}AA`;
        const refused = await client.callTool({
          name: "list_statements",
          arguments: { bank_account_id: accountId, limit: 2, cursor: tampered },
        });
        expect(refused.isError).toBe(true);
        expect(JSON.stringify(refused.structuredContent)).toContain("validation_error");
      } finally {
        await client.close();
      }
    });
  }

  test("a cursor from one revision is good in the other (nothing of it lives in a session)", async () => {
    const legacy = await connect("legacy");
    const modern = await connect({ pin: "2026-07-28" });
    try {
      const page1 = await call(legacy, "list_statements", { bank_account_id: accountId, limit: 2 });
      const page2 = await call(modern, "list_statements", {
        bank_account_id: accountId,
        limit: 2,
        cursor: page1.next_cursor,
      });
      expect((page2.statements as unknown[]).length).toBe(1);
    } finally {
      await legacy.close();
      await modern.close();
    }
  });
});
