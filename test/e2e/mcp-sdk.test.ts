// lanes: sqlite postgres
// The official MCP SDK client against the real server (a listening socket, a temp database file):
// connect over Streamable HTTP, list exactly six read-only tools, call each one.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { RunningServer } from "../../src/main";
import { type AgentServer, startAgentServer, TOOL_NAMES } from "../helpers/agent-server";
import { expectToolAnswer } from "../helpers/tool-answers";

const EXPECTED_TOOLS = TOOL_NAMES;

let agent: AgentServer;
let server: RunningServer;
let token: string;
let accountId: string;
let statementId: string;
let dateFrom: string;
let dateTo: string;

beforeAll(async () => {
  agent = await startAgentServer({ accountSuffix: "0042" });
  ({ server, token, accountId, statementId, dateFrom, dateTo } = agent);
});

afterAll(async () => {
  await agent?.stop();
});

async function connect(): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const client = new Client({ name: "svc-e2e", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(`${server.url}/api/v1/mcp`), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  await client.connect(transport);
  return { client, transport };
}

describe("MCP SDK client against the real server", () => {
  test("connects, negotiates a version and gets a session", async () => {
    const { client, transport } = await connect();
    expect(transport.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(client.getServerVersion()?.name).toBe("svc");
    expect(client.getServerCapabilities()?.tools).toBeDefined();
    expect(client.getInstructions()).toContain("untrusted");
    await client.ping();
    await transport.terminateSession();
    await client.close();
  });

  test("lists exactly six tools, each read-only", async () => {
    const { client } = await connect();
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(EXPECTED_TOOLS);
    for (const tool of tools) {
      expect(tool.annotations).toEqual({
        readOnlyHint: true,
        destructiveHint: false,
        idempotentHint: true,
        openWorldHint: false,
      });
      expect(tool.title).toBeTruthy();
      expect(tool.inputSchema.type).toBe("object");
      expect(tool.outputSchema?.type).toBe("object");
    }
    await client.close();
  });

  test("calls every tool successfully (outputs validated by the SDK against outputSchema)", async () => {
    const { client } = await connect();
    const calls: [string, Record<string, unknown>][] = [
      ["list_companies", {}],
      ["list_bank_accounts", {}],
      ["get_balance", { bank_account_id: accountId }],
      ["list_statements", { bank_account_id: accountId }],
      ["get_statement", { statement_id: statementId }],
      ["search_operations", { bank_account_id: accountId, date_from: dateFrom, date_to: dateTo }],
    ];
    const { tools } = await client.listTools();
    for (const [name, args] of calls) {
      const result = await client.callTool({ name, arguments: args });
      expect({ name, isError: result.isError }).toEqual({ name, isError: false });
      expect(result.structuredContent).toBeDefined();
      expectToolAnswer(tools.find((t) => t.name === name)!, result);
      expect((result._meta as { notice?: string } | undefined)?.notice).toContain("untrusted");
      expect(JSON.stringify(result)).not.toMatch(/\d{20}/);
    }
    const statement = (
      await client.callTool({ name: "get_statement", arguments: { statement_id: statementId } })
    ).structuredContent as { statement: { status: string }; operations: unknown[] };
    expect(statement.statement.status).toBe("ready");
    expect(statement.operations.length).toBeGreaterThan(0);
    await client.close();
  });

  test("tool-level errors reach the SDK client as isError results (outputSchema admits them)", async () => {
    const { client } = await connect();
    const missing = await client.callTool({
      name: "get_statement",
      arguments: { statement_id: "00000000-0000-4000-8000-000000000000" },
    });
    expect(missing.isError).toBe(true);
    expect(missing.structuredContent).toEqual({ error: { code: "not_found", message: expect.any(String) } });
    const invalid = await client.callTool({ name: "get_balance", arguments: { bank_account_id: "nope" } });
    expect(invalid.isError).toBe(true);
    expect((invalid.structuredContent as { error: { code: string } }).error.code).toBe("validation_error");
    await client.close();
  });

  test("a write-sounding tool is a protocol error, not a result", async () => {
    const { client } = await connect();
    await expect(client.callTool({ name: "send_payment", arguments: {} })).rejects.toThrow(
      /-32601|not found/i,
    );
    await client.close();
  });
});
