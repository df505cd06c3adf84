// lanes: sqlite postgres
// Read-only by construction: six tools, all annotated read-only, and the tools' database handle
// refuses writes. No tool result ever carries a 20-digit number.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../../src/config";
import { buildServices } from "../../src/container";
import { ManualClock } from "../../src/core/clock";
import { silentLogger } from "../../src/core/logger";
import { migrate, openDatabase } from "../../src/db/open";
import { TOOL_DEFINITIONS } from "../../src/mcp/tools";
import { listTools, READ_ONLY_ANNOTATIONS } from "../../src/mcp/tools/registry";
import { makeTestApp } from "../helpers/app";
import { callTool, initSession, readyStatement, TOOL_NAMES } from "./helpers";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe("the tool registry", () => {
  test("holds exactly the six tools of the contract, each annotated read-only", () => {
    const t = makeTestApp();
    const tools = listTools(t.services.mcp.tools);
    expect(tools.map((x) => x.name).sort()).toEqual([...TOOL_NAMES].sort());
    expect(TOOL_DEFINITIONS).toHaveLength(6);
    for (const tool of tools) {
      expect(tool.annotations).toEqual({
        readOnlyHint: true,
        destructiveHint: false,
        idempotentHint: true,
        openWorldHint: false,
      });
      expect(tool.annotations).toBe(READ_ONLY_ANNOTATIONS);
      expect(tool.title.length).toBeGreaterThan(0);
      expect(tool.description.length).toBeGreaterThan(40);
      expect(tool.inputSchema).toMatchObject({ type: "object", additionalProperties: false });
      expect(tool.outputSchema).toMatchObject({ type: "object" });
      expect(tool.name).not.toMatch(/send|pay|order|refresh|create|update|delete|write|submit/);
    }
  });

  test("the tools' database handle refuses writes (file database, read-only connection)", () => {
    const dir = mkdtempSync(join(tmpdir(), "svc-mcp-ro-"));
    dirs.push(dir);
    const path = join(dir, "svc.db");
    const database = openDatabase(path);
    migrate(database.db);
    const config = loadConfig({ SVC_DB_PATH: path });
    const services = buildServices(config, database, new ManualClock(), silentLogger);
    const store = services.store;
    if (store.kind !== "sqlite") throw new Error("a SQLite store was built");
    const ro = store.readDatabase;
    const tools = services.mcp.tools;
    try {
      expect(ro).not.toBe(database.sqlite);
      expect(tools.deps.read.port).toBe(store.readPort);
      expect(() =>
        store.readPort
          .prepare(
            "INSERT INTO companies (id, name, inn, kpp, created_at) VALUES ('y', 'y', '1', NULL, 'now')",
          )
          .run(),
      ).toThrow();
      expect(() =>
        ro.run("INSERT INTO companies (id, name, inn, kpp, created_at) VALUES ('x', 'x', '1', NULL, 'now')"),
      ).toThrow();
      expect(() => ro.run("DELETE FROM mcp_sessions")).toThrow();
      expect(() => ro.run("CREATE TABLE evil (x)")).toThrow();
      expect(() =>
        ro.run(
          "PRAGMA query_only = OFF; INSERT INTO audit_log (at, actor, action, outcome) VALUES ('a','b','c','d')",
        ),
      ).toThrow();
      // The primary still writes, and the read-only handle sees it.
      const company = services.admin.companies.create({ name: "ООО Запись", inn: "7719617469" });
      expect(tools.deps.read.company(company.company_id)?.name).toBe("ООО Запись");
    } finally {
      store.close();
    }
  });
});

describe("masking", () => {
  test("no 20-digit number in any tool result, success or error", async () => {
    const t = makeTestApp();
    const w = t.fixtures.world({ purpose: "mcp" });
    const accountId = w.account.bank_account_id;
    const statementId = await readyStatement(t, accountId, "2026-11-01", "2026-11-20");
    const session = await initSession(t, w.token);
    const calls: [string, Record<string, unknown>][] = [
      ["list_companies", {}],
      ["list_bank_accounts", {}],
      ["get_balance", { bank_account_id: accountId }],
      ["list_statements", { bank_account_id: accountId }],
      ["get_statement", { statement_id: statementId }],
      [
        "search_operations",
        { bank_account_id: accountId, date_from: "2026-11-01", date_to: "2026-11-20", limit: 100 },
      ],
      ["get_balance", { bank_account_id: crypto.randomUUID() }],
      ["get_statement", { statement_id: "40702810900000000001" }],
    ];
    let operations = 0;
    for (const [name, args] of calls) {
      const result = await callTool(t, w.token, session, name, args);
      const text = JSON.stringify(result);
      expect({ name, match: text.match(/\d{20}/)?.[0] ?? null }).toEqual({ name, match: null });
      expect(result._meta.notice).toBeTruthy();
      const ops =
        (result.structuredContent.operations as
          | { direction: string; payer: Record<string, unknown>; payee: Record<string, unknown> }[]
          | undefined) ?? [];
      operations += ops.length;
      const allowed = ["account_masked", "bank_bik", "bank_name", "inn", "kpp", "name"];
      for (const op of ops) {
        for (const party of [op.payer, op.payee]) {
          expect(Object.keys(party).every((k) => allowed.includes(k))).toBe(true);
          expect(party.account_masked).toMatch(/^\d{4}\*{12}\d{4}$/);
        }
        // The account's own side names no bank: it is the same in every operation.
        const own = op.direction === "debit" ? op.payer : op.payee;
        const other = op.direction === "debit" ? op.payee : op.payer;
        expect(own).not.toHaveProperty("bank_name");
        expect(other.bank_name).toBeTruthy();
      }
    }
    expect(operations).toBeGreaterThan(50);
    const accounts = (await callTool(t, w.token, session, "list_bank_accounts")).structuredContent
      .bank_accounts as { account_number_masked: string }[];
    expect(accounts[0]?.account_number_masked).toMatch(/^\d{4}\*{12}\d{4}$/);
  });
});
