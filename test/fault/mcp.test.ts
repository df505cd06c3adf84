// lanes: sqlite postgres
// Hostile input on the agent endpoint: random JSON-RPC-ish objects, random methods and params,
// random tools/call arguments for each of the six tools, random session and protocol headers,
// broken bodies. Always a JSON-RPC answer (or 202 / 204 / an HTTP envelope), never a 5xx other
// than 503, always X-Request-Id, and exactly one audit entry per request that got past the
// HTTP checks.
import { beforeAll, describe, expect, test } from "bun:test";
import fc from "fast-check";
import { BASE, makeTestApp, type TestApp } from "../helpers/app";
import { initSession, readyStatement } from "../mcp/helpers";
import { type FieldModel, fieldObject, hostileBody, oddString, oddValue, validDate } from "./arbitraries";
import {
  countRows,
  expectCleanAgent,
  expectPrototypesClean,
  MCP,
  nextMinute,
  rawRequest,
  runs,
  SLOW,
  seed,
  seedWorld,
  TOOL_NAMES,
} from "./support";

const RUNS = 250;

let t: TestApp;
let world: ReturnType<typeof seedWorld>;
let session: string;
let statementId: string;

beforeAll(async () => {
  t = makeTestApp();
  world = seedWorld(t);
  statementId = await readyStatement(t, world.account.bank_account_id, "2026-11-01", "2026-11-10");
  session = await initSession(t, world.mcp.token);
});

/** Header values a client could send (a Request refuses CR, LF and non-Latin-1). */
const headerText = fc.stringMatching(/^[\x20-\x7e]{0,80}$/);

const sessionHeader = fc.oneof(
  { weight: 5, arbitrary: fc.constant("§session") },
  { weight: 1, arbitrary: fc.constant(null) },
  { weight: 1, arbitrary: fc.uuid() },
  { weight: 1, arbitrary: headerText },
);

const extraHeaders = fc.record(
  {
    "mcp-protocol-version": fc.oneof(
      fc.constantFrom("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05", "2099-01-01"),
      headerText,
    ),
    origin: fc.constantFrom("http://localhost:3000", "http://127.0.0.1", "https://evil.example", "null"),
    accept: fc.constantFrom("application/json, text/event-stream", "text/event-stream", "*/*", "text/html"),
  },
  { requiredKeys: [] },
);

function headersFor(sessionValue: string | null, extra: Record<string, string>): Record<string, string> {
  const headers: Record<string, string> = {
    authorization: `Bearer ${world.mcp.token}`,
    "content-type": "application/json",
    ...extra,
  };
  if (sessionValue !== null) headers["mcp-session-id"] = sessionValue === "§session" ? session : sessionValue;
  return headers;
}

const METHODS = [
  "initialize",
  "ping",
  "tools/list",
  "tools/call",
  "notifications/initialized",
  "notifications/cancelled",
  "resources/list",
  "prompts/get",
  "logging/setLevel",
  "completion/complete",
  "send_payment",
  "tools/call/../admin",
  "",
];

const rpcEnvelope = fc.record(
  {
    jsonrpc: fc.oneof({ weight: 5, arbitrary: fc.constant("2.0") }, { weight: 1, arbitrary: oddValue }),
    id: fc.oneof(fc.nat(), fc.string({ maxLength: 20 }), fc.constant(null), oddValue),
    method: fc.oneof(
      { weight: 3, arbitrary: fc.constantFrom(...METHODS) },
      { weight: 1, arbitrary: oddString },
    ),
    params: fc.oneof(
      fc.jsonValue({ maxDepth: 3 }),
      fc.record(
        {
          protocolVersion: fc.oneof(fc.constantFrom("2025-06-18", "1.0"), oddValue),
          capabilities: fc.jsonValue({ maxDepth: 2 }),
          clientInfo: fc.jsonValue({ maxDepth: 2 }),
          name: fc.oneof(fc.constantFrom(...TOOL_NAMES, "send_payment"), oddValue),
          arguments: fc.oneof(fc.dictionary(oddString, oddValue, { maxKeys: 4 }), oddValue),
        },
        { requiredKeys: [] },
      ),
    ),
  },
  { requiredKeys: [] },
);

/** Mostly the real id of the kind the argument wants, sometimes another kind, unknown or odd. */
const uuidish = (preferred: "§account" | "§statement") =>
  fc.oneof(
    { weight: 4, arbitrary: fc.constant(preferred) },
    { weight: 1, arbitrary: fc.constantFrom("§account", "§other", "§statement") },
    { weight: 1, arbitrary: fc.uuid() },
    { weight: 1, arbitrary: oddString },
  );

const rubles = fc.integer({ min: 0, max: 10_000_000_00 }).map((kopecks) => kopecks / 100);

function toolModel(name: (typeof TOOL_NAMES)[number]): FieldModel {
  const page = {
    limit: fc.oneof(fc.integer({ min: 1, max: 100 }), fc.integer({ min: -5, max: 200 })),
    cursor: fc.oneof(oddString, fc.base64String()),
  };
  switch (name) {
    case "list_companies":
    case "list_bank_accounts":
      return { anything: oddValue };
    case "get_balance":
      return { bank_account_id: uuidish("§account") };
    case "list_statements":
      return {
        bank_account_id: uuidish("§account"),
        status: fc.constantFrom("processing", "ready", "failed", "READY"),
        ...page,
      };
    case "get_statement":
      return { statement_id: uuidish("§statement") };
    case "search_operations":
      return {
        bank_account_id: uuidish("§account"),
        date_from: validDate,
        date_to: validDate,
        amount_min: fc.oneof(rubles, fc.constantFrom(0, 0.001, 1e21, 5e-324)),
        amount_max: fc.oneof(rubles, fc.constantFrom(0, 0.005, 1e21, 2 ** 53)),
        counterparty_inn: fc.oneof(fc.stringMatching(/^\d{10}$/), fc.stringMatching(/^\d{12}$/)),
        query: fc.oneof(
          { weight: 3, arbitrary: fc.constantFrom("оплата", "ООО", "договор", "НДС", "Оплата по счёту") },
          {
            weight: 2,
            arbitrary: fc.constantFrom(
              '"',
              "*",
              "NEAR",
              "AND OR NOT",
              "a:b",
              "(",
              "^x",
              "col:val",
              "-x",
              "x*y",
            ),
          },
          { weight: 2, arbitrary: oddString },
        ),
        direction: fc.oneof(fc.constantFrom("credit", "debit"), fc.constantFrom("both", "CREDIT", "")),
        ...page,
      };
  }
}

const REQUIRED: Record<(typeof TOOL_NAMES)[number], string[]> = {
  list_companies: [],
  list_bank_accounts: [],
  get_balance: ["bank_account_id"],
  list_statements: ["bank_account_id"],
  get_statement: ["statement_id"],
  search_operations: ["bank_account_id", "date_from", "date_to"],
};

/** Leaves out the (never valid) cursor and puts a period in order, so that many calls succeed. */
function plausible(args: Record<string, unknown>): Record<string, unknown> {
  const { cursor: _cursor, ...rest } = args;
  const { date_from: from, date_to: to } = rest;
  if (typeof from === "string" && typeof to === "string" && from > to) {
    return { ...rest, date_from: to, date_to: from };
  }
  return rest;
}

/** Replaces the placeholders with this world's ids. */
function bind(value: unknown): unknown {
  if (value === "§account") return world.account.bank_account_id;
  if (value === "§other") return world.other.bank_account_id;
  if (value === "§statement") return statementId;
  if (Array.isArray(value)) return value.map(bind);
  if (value && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, bind(v)]));
  }
  return value;
}

/** Sends one request and checks the answer and the audit invariant. */
async function send(
  method: "POST" | "DELETE",
  body: string | Uint8Array | undefined,
  headers: Record<string, string>,
  context: string,
) {
  const auditsBefore = countRows(t, "audit_log");
  const res = await rawRequest(t, method, MCP, body, headers);
  const checked = await expectCleanAgent(res, context);
  const added = countRows(t, "audit_log") - auditsBefore;
  const where = `${context}: HTTP ${checked.status} ${checked.text.slice(0, 200)}`;
  // Every request past the HTTP checks is audited once; a refused one (envelope) is not.
  expect(added, where).toBe(checked.status < 400 ? 1 : 0);
  return checked;
}

describe("agent endpoint under hostile input", () => {
  test(
    "random JSON-RPC-ish objects, methods, params and headers",
    async () => {
      nextMinute(t);
      const rpcCodes = new Set<number>();
      await fc.assert(
        fc.asyncProperty(rpcEnvelope, sessionHeader, extraHeaders, async (message, sessionValue, extra) => {
          const checked = await send(
            "POST",
            JSON.stringify(message),
            headersFor(sessionValue, extra),
            `rpc ${JSON.stringify(message).slice(0, 200)}`,
          );
          if (checked.rpc?.error) rpcCodes.add(checked.rpc.error.code);
          // A request (with an id) gets its own id back whenever the id was usable.
          const id = (message as { id?: unknown }).id;
          if (checked.status === 200 && (typeof id === "string" || Number.isFinite(id as number))) {
            expect((checked.json as { id: unknown }).id).toEqual(id as never);
          }
        }),
        { numRuns: runs(400), seed: seed(3000) },
      );
      for (const code of [-32600, -32601]) expect(rpcCodes.has(code)).toBe(true);
      expectPrototypesClean();
    },
    SLOW,
  );

  for (const [i, name] of TOOL_NAMES.entries()) {
    test(
      `tools/call ${name} with random arguments: a tool result or -32602, never anything else`,
      async () => {
        nextMinute(t);
        const outcomes = new Set<string>();
        await fc.assert(
          fc.asyncProperty(
            fc.oneof(
              {
                weight: 4,
                arbitrary: fieldObject(toolModel(name), {
                  validWeight: 8,
                  required: REQUIRED[name],
                  strays: false,
                }).map(plausible),
              },
              { weight: 3, arbitrary: fieldObject(toolModel(name)) },
              { weight: 1, arbitrary: oddValue },
            ),
            async (args) => {
              const message = {
                jsonrpc: "2.0",
                id: 1,
                method: "tools/call",
                params: { name, arguments: bind(args) },
              };
              const text = JSON.stringify(message);
              const checked = await send(
                "POST",
                text,
                headersFor("§session", {}),
                `${name} ${JSON.stringify(args).slice(0, 200)}`,
              );
              if (Buffer.byteLength(text) > 16 * 1024) {
                expect(checked.status).toBe(413);
                return;
              }
              expect(checked.status).toBe(200);
              if (checked.rpc?.error) {
                expect(checked.rpc.error.code).toBe(-32602);
                outcomes.add("-32602");
                return;
              }
              const result = checked.rpc!.result as {
                isError: boolean;
                content: { type: string; text: string }[];
                structuredContent: { error?: { code: string } };
                _meta: { notice: string };
              };
              expect(typeof result.isError).toBe("boolean");
              expect(typeof result._meta.notice).toBe("string");
              expect(result.content[0]!.type).toBe("text");
              // No full 20-digit account number in any tool result.
              expect(checked.text).not.toMatch(/(?<!\d)\d{20}(?!\d)/);
              outcomes.add(result.isError ? result.structuredContent.error!.code : "ok");
            },
          ),
          { numRuns: runs(RUNS), seed: seed(3100 + i) },
        );
        // Every tool is reached past its argument checks.
        expect([...outcomes]).toEqual(expect.arrayContaining(["ok", "validation_error"]));
      },
      SLOW,
    );
  }

  test(
    "broken bodies: bytes, truncated JSON, deep nesting, proto keys, odd content types",
    async () => {
      nextMinute(t);
      const model: FieldModel = {
        jsonrpc: fc.constant("2.0"),
        id: fc.nat(),
        method: fc.constantFrom(...METHODS),
        params: fc.jsonValue({ maxDepth: 2 }),
      };
      await fc.assert(
        fc.asyncProperty(
          hostileBody(model),
          fc.constantFrom("application/json", "text/plain", "multipart/form-data; boundary=x", ""),
          sessionHeader,
          async (body, contentType, sessionValue) => {
            const headers = headersFor(sessionValue, {});
            headers["content-type"] = contentType;
            await send("POST", body.data, headers, `body [${body.kind}] as ${contentType}`);
          },
        ),
        { numRuns: runs(RUNS), seed: seed(3200) },
      );
      expectPrototypesClean();
    },
    SLOW,
  );

  test(
    "DELETE with random session ids: 204 or an envelope; the live session survives",
    async () => {
      nextMinute(t);
      await fc.assert(
        fc.asyncProperty(
          fc.oneof(fc.uuid(), headerText, fc.constant(null)),
          extraHeaders,
          async (value, extra) => {
            const headers = headersFor(null, extra);
            if (value !== null) headers["mcp-session-id"] = value;
            await send("DELETE", undefined, headers, `DELETE ${value}`);
          },
        ),
        { numRuns: runs(100), seed: seed(3300) },
      );
      const ping = await send(
        "POST",
        JSON.stringify({ jsonrpc: "2.0", id: 7, method: "ping" }),
        headersFor("§session", {}),
        "ping after the DELETEs",
      );
      expect(ping.rpc?.result).toEqual({});
    },
    SLOW,
  );

  test(
    "over 16 KB is 413 with the envelope, with or without Content-Length; GET is 405",
    async () => {
      nextMinute(t);
      const big = JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "ping",
        params: { pad: "x".repeat(17 * 1024) },
      });
      const res = await send("POST", big, headersFor("§session", {}), "big");
      expect(res.status).toBe(413);
      const streamed = await t.app.handle(
        new Request(`${BASE}${MCP}`, {
          method: "POST",
          headers: headersFor("§session", {}),
          body: new Blob([big]).stream(),
          duplex: "half",
        } as RequestInit),
      );
      expect((await expectCleanAgent(streamed)).status).toBe(413);
      const get = await rawRequest(t, "GET", MCP, undefined, headersFor("§session", {}));
      expect((await expectCleanAgent(get)).status).toBe(405);
      expect(get.headers.get("allow")).toBe("POST, DELETE");
    },
    SLOW,
  );
});
