// Reference peer for the agent-endpoint benchmark: the official MCP TypeScript SDK on Node +
// Express, stateful Streamable HTTP (one transport and one McpServer per session, JSON responses,
// no SSE), a bearer check against a token list, and the same get_balance tool answering from memory.
// It does what the SDK's own examples do, nothing tuned. Run: node bench/peer/server.mjs
//   PEER_PORT      port to listen on (0 = any free port; the chosen port is printed as JSON)
//   PEER_TOKENS    comma-separated bearer tokens that are accepted
//   PEER_ACCOUNT   bank_account_id known to get_balance
import { randomUUID } from "node:crypto";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import express from "express";
import * as z from "zod";

const tokens = new Set((process.env.PEER_TOKENS ?? "").split(",").filter((t) => t.length > 0));
const account = process.env.PEER_ACCOUNT ?? "00000000-0000-4000-8000-000000000000";
const balances = new Map([
  [account, { balance: 1234567.89, currency: "RUB", as_of: new Date().toISOString() }],
]);

function buildServer() {
  const server = new McpServer({ name: "peer", version: "1.0.0" }, { capabilities: { tools: {} } });
  server.registerTool(
    "get_balance",
    {
      title: "Get cached account balance",
      description: "Returns the last cached balance of one bank account.",
      inputSchema: { bank_account_id: z.string().uuid() },
      annotations: { readOnlyHint: true },
    },
    async ({ bank_account_id }) => {
      const cached = balances.get(bank_account_id);
      if (!cached) {
        return { isError: true, content: [{ type: "text", text: JSON.stringify({ error: "not_found" }) }] };
      }
      const out = { bank_account_id, ...cached, stale: false };
      return { content: [{ type: "text", text: JSON.stringify(out) }], structuredContent: out };
    },
  );
  return server;
}

/** @type {Map<string, {transport: StreamableHTTPServerTransport, token: string}>} */
const sessions = new Map();

const app = express();
app.use(express.json({ limit: "16kb" }));
app.use("/mcp", (req, res, next) => {
  const auth = req.headers.authorization ?? "";
  const token = auth.startsWith("Bearer ") ? auth.slice(7) : "";
  if (!tokens.has(token)) {
    res.status(401).json({ error: { code: "invalid_token" } });
    return;
  }
  req.token = token;
  next();
});

app.post("/mcp", async (req, res) => {
  const sessionId = req.headers["mcp-session-id"];
  let entry = typeof sessionId === "string" ? sessions.get(sessionId) : undefined;
  if (entry && entry.token !== req.token) entry = undefined;
  if (!entry) {
    if (sessionId !== undefined || !isInitializeRequest(req.body)) {
      res
        .status(400)
        .json({ jsonrpc: "2.0", error: { code: -32000, message: "No valid session" }, id: null });
      return;
    }
    const token = req.token;
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      enableJsonResponse: true,
      onsessioninitialized: (id) => {
        sessions.set(id, { transport, token });
      },
    });
    transport.onclose = () => {
      if (transport.sessionId) sessions.delete(transport.sessionId);
    };
    await buildServer().connect(transport);
    await transport.handleRequest(req, res, req.body);
    return;
  }
  await entry.transport.handleRequest(req, res, req.body);
});

const server = app.listen(Number(process.env.PEER_PORT ?? 0), "127.0.0.1", () => {
  process.stdout.write(`${JSON.stringify({ msg: "listening", port: server.address().port })}\n`);
});
process.on("SIGTERM", () => server.close(() => process.exit(0)));
