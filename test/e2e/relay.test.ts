// lanes: sqlite
// The stdio relay from source against the real server: the official SDK client over stdio,
// six read-only tools, calls, environment errors, and a stopped server.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { Client as ClientV2, type VersionNegotiationMode } from "@modelcontextprotocol/client";
import { StdioClientTransport as StdioClientTransportV2 } from "@modelcontextprotocol/client/stdio";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { TOOL_NAMES } from "../helpers/agent-server";
import { BUN, ROOT, type RunningProcess, seedToken, startServe, tempDir } from "../helpers/server";
import { expectToolAnswer } from "../helpers/tool-answers";

const RELAY = ["run", join(ROOT, "cli/svc-mcp.ts")];
const EXPECTED_TOOLS = TOOL_NAMES;

let dir: string;
let server: RunningProcess;
let token: string;
let accountId: string;

async function seedMcp(s: RunningProcess) {
  const { accountId, token } = await seedToken(s, { purpose: "mcp", name: "agent" });
  return { accountId, token };
}

async function connect(
  env: Record<string, string>,
  command: [string, ...string[]] = [BUN, ...RELAY],
): Promise<{ client: Client; stderr: string[] }> {
  const [bin, ...args] = command;
  const transport = new StdioClientTransport({
    command: bin,
    args,
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? "", ...env },
    stderr: "pipe",
  });
  const stderr: string[] = [];
  transport.stderr?.on("data", (d: Buffer) => stderr.push(d.toString()));
  const client = new Client({ name: "relay-e2e", version: "1" });
  await client.connect(transport);
  return { client, stderr };
}

async function runRelay(
  env: Record<string, string>,
  command: string[] = [BUN, ...RELAY],
): Promise<{ code: number; stdout: string; stderr: string }> {
  const proc = Bun.spawn(command, {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? "", ...env },
    stdin: "pipe",
    stdout: "pipe",
    stderr: "pipe",
  });
  const code = await proc.exited;
  return {
    code,
    stdout: await new Response(proc.stdout).text(),
    stderr: await new Response(proc.stderr).text(),
  };
}

beforeAll(async () => {
  dir = tempDir("svc-relay-");
  server = await startServe({ dbPath: join(dir, "svc.db") });
  ({ token, accountId } = await seedMcp(server));
});

afterAll(async () => {
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe("svc-mcp relay (from source)", () => {
  test("initialize, six read-only tools, calls", async () => {
    const { client, stderr } = await connect({ SVC_API_URL: `${server.url}/api/v1`, SVC_API_TOKEN: token });
    try {
      expect(client.getServerCapabilities()?.tools).toBeDefined();
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual(EXPECTED_TOOLS);
      for (const tool of tools) expect(tool.annotations?.readOnlyHint).toBe(true);

      const companies = await client.callTool({ name: "list_companies", arguments: {} });
      expect(companies.isError).toBe(false);
      expect((companies.structuredContent as { companies: unknown[] }).companies).toHaveLength(1);
      const answered = (name: string, result: Parameters<typeof expectToolAnswer>[1]) =>
        expectToolAnswer(tools.find((t) => t.name === name)!, result);
      answered("list_companies", companies);

      const accounts = await client.callTool({ name: "list_bank_accounts", arguments: {} });
      answered("list_bank_accounts", accounts);
      const list = (accounts.structuredContent as { bank_accounts: { bank_account_id: string }[] })
        .bank_accounts;
      expect(list.map((a) => a.bank_account_id)).toEqual([accountId]);

      const balance = await client.callTool({
        name: "get_balance",
        arguments: { bank_account_id: accountId },
      });
      answered("get_balance", balance);

      const statements = await client.callTool({
        name: "list_statements",
        arguments: { bank_account_id: accountId },
      });
      answered("list_statements", statements);

      const search = await client.callTool({
        name: "search_operations",
        arguments: { bank_account_id: accountId, date_from: "2026-01-01", date_to: "2026-01-31" },
      });
      answered("search_operations", search);
      // No statement holds January: the text says so, and structuredContent has the same coverage.
      expect((search.content as { text: string }[])[0]!.text.split("\n")[0]).toContain(
        "нет данных за 01.01–31.01.2026",
      );
      expect((search.structuredContent as { coverage: { complete: boolean } }).coverage.complete).toBe(false);

      // Unknown tool: 404 from the service, -32601 to the agent.
      const unknown = await client.callTool({ name: "send_payment", arguments: {} }).then(
        () => null,
        (e: { code?: number; message?: string }) => e,
      );
      expect(unknown?.code).toBe(-32601);
      expect(unknown?.message).toContain("not_found");

      expect(stderr.join("")).not.toContain(token);
    } finally {
      await client.close();
    }

    // Every call is audited with transport stdio and one session id for the process.
    const audit = (await (await server.admin("GET", "/audit-log?limit=100")).json()) as {
      entries: { action: string; transport: string; mcp_session_id: string }[];
    };
    const entries = audit.entries.filter((e) => e.transport === "stdio");
    expect(entries.map((e) => e.action).sort()).toEqual(
      [
        // The relay's own check of the service and the token when the host connects, then the host's list.
        "mcp.tools_list",
        "mcp.tools_list",
        "mcp.list_companies",
        "mcp.list_bank_accounts",
        "mcp.get_balance",
        "mcp.list_statements",
        "mcp.search_operations",
        "mcp.tools_call",
      ].sort(),
    );
    expect(new Set(entries.map((e) => e.mcp_session_id)).size).toBe(1);
  }, 30_000);

  test("bad environment exits 2 naming the variable", async () => {
    const url = `${server.url}/api/v1`;
    const cases: [Record<string, string>, string][] = [
      [{ SVC_API_URL: url }, "SVC_API_TOKEN"],
      [{ SVC_API_URL: url, SVC_API_TOKEN: "sk_nope" }, "SVC_API_TOKEN"],
      [{ SVC_API_TOKEN: token }, "SVC_API_URL"],
      [{ SVC_API_TOKEN: token, SVC_API_URL: server.url }, "SVC_API_URL"],
      [{ SVC_API_TOKEN: token, SVC_API_URL: "http://example.com/api/v1" }, "SVC_API_URL"],
    ];
    for (const [env, variable] of cases) {
      const r = await runRelay(env);
      expect(r.code).toBe(2);
      expect(r.stdout).toBe("");
      const lines = r.stderr.trim().split("\n");
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain(variable);
      expect(r.stderr).not.toContain(token);
    }
  }, 30_000);

  test("--version prints the package version", async () => {
    const r = await runRelay({});
    expect(r.code).toBe(2);
    const proc = Bun.spawn([BUN, ...RELAY, "--version"], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
    expect(await proc.exited).toBe(0);
    const pkg = (await Bun.file(join(ROOT, "package.json")).json()) as { version: string };
    expect((await new Response(proc.stdout).text()).trim()).toBe(pkg.version);
  });

  test("a stopped server gives an error for that request and the relay stays up", async () => {
    const own = await startServe({ dbPath: join(dir, "own.db") });
    const seeded = await seedMcp(own);
    const { client } = await connect({ SVC_API_URL: `${own.url}/api/v1`, SVC_API_TOKEN: seeded.token });
    try {
      expect((await client.listTools()).tools).toHaveLength(6);
      await own.stop();
      const failure = await client.listTools().then(
        () => null,
        (e: { code?: number }) => e,
      );
      expect(failure?.code).toBe(-32603);
      const again = await client.callTool({ name: "list_companies", arguments: {} }).then(
        () => null,
        (e: { code?: number }) => e,
      );
      expect(again?.code).toBe(-32603);
      // Still answering: ping is handled by the relay itself.
      expect(await client.ping()).toEqual({});
    } finally {
      await client.close();
      await own.stop();
    }
  }, 30_000);

  test("a refused token or a service that is down is said when the host connects, once in the message", async () => {
    const refused = await connect({
      SVC_API_URL: `${server.url}/api/v1`,
      SVC_API_TOKEN: `svc_test_${"x".repeat(40)}`,
    }).then(
      () => null,
      (e: Error) => e.message,
    );
    expect(refused).toContain("invalid_token");
    expect(refused?.match(/MCP error/g) ?? []).toHaveLength(1);
    const down = await connect({ SVC_API_URL: "http://127.0.0.1:9/api/v1", SVC_API_TOKEN: token }).then(
      () => null,
      (e: Error) => e.message,
    );
    expect(down).toContain("service_unavailable");
    expect(down).toContain("127.0.0.1:9");
  }, 30_000);

  test("an unknown tool's error reads once; a line that is not JSON gets -32700", async () => {
    const { client } = await connect({ SVC_API_URL: `${server.url}/api/v1`, SVC_API_TOKEN: token });
    try {
      const e = await client.callTool({ name: "no_such_tool", arguments: {} }).then(
        () => null,
        (err: Error & { code?: number }) => err,
      );
      expect(e?.code).toBe(-32601);
      expect(e?.message.match(/MCP error/g) ?? []).toHaveLength(1);
    } finally {
      await client.close();
    }
    const proc = Bun.spawn([BUN, ...RELAY], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? "", SVC_API_URL: `${server.url}/api/v1`, SVC_API_TOKEN: token },
      stdin: "pipe",
      stdout: "pipe",
      stderr: "pipe",
    });
    proc.stdin.write("this is not json\n");
    proc.stdin.end();
    const out = await new Response(proc.stdout).text();
    await proc.exited;
    const first = JSON.parse(out.trim().split("\n")[0] ?? "{}") as { id: unknown; error?: { code: number } };
    expect(first).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32700 } });
  }, 30_000);
});

describe("svc-mcp relay (compiled by make build)", () => {
  const binary = join(ROOT, "dist/svc-mcp");

  beforeAll(async () => {
    const make = Bun.spawn(["make", "build"], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
    const code = await make.exited;
    if (code !== 0) throw new Error(`make build failed: ${await new Response(make.stderr).text()}`);
  }, 120_000);

  test("lists six read-only tools and calls them; bad env exits 2", async () => {
    const { client } = await connect({ SVC_API_URL: `${server.url}/api/v1`, SVC_API_TOKEN: token }, [binary]);
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual(EXPECTED_TOOLS);
      for (const tool of tools) expect(tool.annotations?.readOnlyHint).toBe(true);
      const companies = await client.callTool({ name: "list_companies", arguments: {} });
      expect(companies.isError).toBe(false);
      const balance = await client.callTool({
        name: "get_balance",
        arguments: { bank_account_id: accountId },
      });
      expect(balance.isError).toBe(false);
    } finally {
      await client.close();
    }
    const bad = await runRelay({ SVC_API_TOKEN: token, SVC_API_URL: "http://example.com/api/v1" }, [binary]);
    expect(bad.code).toBe(2);
    expect(bad.stderr.trim().split("\n")).toHaveLength(1);
    expect(bad.stderr).toContain("SVC_API_URL");
    const version = await runRelay({}, [binary, "--version"]);
    expect(version.code).toBe(0);
    const pkg = (await Bun.file(join(ROOT, "package.json")).json()) as { version: string };
    expect(version.stdout.trim()).toBe(pkg.version);
  }, 30_000);
});

describe("svc-mcp relay and hosts of the stateless revision (2026-07-28)", () => {
  for (const [label, mode] of [
    ["pinned 2026-07-28", { pin: "2026-07-28" }],
    ["auto", "auto"],
    ["legacy", "legacy"],
  ] as [string, VersionNegotiationMode][]) {
    test(`the SDK v2 client, ${label}: tools listed and called through the relay`, async () => {
      const transport = new StdioClientTransportV2({
        command: BUN,
        args: RELAY,
        cwd: ROOT,
        env: { PATH: process.env.PATH ?? "", SVC_API_URL: `${server.url}/api/v1`, SVC_API_TOKEN: token },
        stderr: "pipe",
      });
      const client = new ClientV2({ name: "relay-v2", version: "1" }, { versionNegotiation: { mode } });
      await client.connect(transport);
      try {
        expect(client.getNegotiatedProtocolVersion()).toBe(label === "legacy" ? "2025-11-25" : "2026-07-28");
        const { tools } = await client.listTools();
        expect(tools.map((t) => t.name).sort()).toEqual(EXPECTED_TOOLS);
        const accounts = await client.callTool({ name: "list_bank_accounts", arguments: {} });
        expect(accounts.isError).toBeFalsy();
        expect(JSON.stringify(accounts.structuredContent)).toContain(accountId);
        expectToolAnswer(tools.find((t) => t.name === "list_bank_accounts")!, accounts);
        const search = await client.callTool({
          name: "search_operations",
          arguments: { bank_account_id: accountId, date_from: "2026-01-01", date_to: "2026-01-31" },
        });
        expectToolAnswer(tools.find((t) => t.name === "search_operations")!, search);
      } finally {
        await client.close();
      }
    });
  }
});
