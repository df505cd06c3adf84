// A real server (listening socket, temporary database) with a company, a sandbox account, an agent
// token and ready statements over the last ten days: what the MCP client tests connect to.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../../src/config";
import { silentLogger } from "../../src/core/logger";
import { withAccountKey } from "../../src/formats/validators";
import { type RunningServer, startServer } from "../../src/main";
import { TOOL_NAMES as TOOLS_IN_ORDER } from "../mcp/helpers";
import { serverStoreEnv } from "./pg";

/** The six read-only tools, sorted by name. */
export const TOOL_NAMES = [...TOOLS_IN_ORDER].sort();

export interface AgentServer {
  server: RunningServer;
  token: string;
  accountId: string;
  /** The first of the statements ordered. */
  statementId: string;
  dateFrom: string;
  dateTo: string;
  stop(): Promise<void>;
}

export async function startAgentServer(opts: {
  accountSuffix: string;
  statements?: number;
  opsPerDay?: number;
}): Promise<AgentServer> {
  const dir = mkdtempSync(join(tmpdir(), "svc-agent-"));
  const config = loadConfig({
    SVC_DB_PATH: join(dir, "svc.db"),
    SVC_PORT: "0",
    SVC_HOST: "127.0.0.1",
    SVC_SECRET_KEY: Buffer.alloc(32, 3).toString("base64"),
    ...serverStoreEnv(),
  });
  const server = await startServer(config, { logger: silentLogger });
  const { admin, statements, poller } = server.services;
  const company = admin.companies.create({ name: "ООО Тест", inn: "7719617469" });
  const account = admin.accounts.create({
    company_id: company.company_id,
    bank: "sandbox",
    account_number: withAccountKey(`4070281090000000${opts.accountSuffix.padStart(4, "0")}`, "044525225"),
    bik: "044525225",
    sandbox: opts.opsPerDay ? { ops_per_day: opts.opsPerDay } : undefined,
  });
  const token = admin.tokens.create({
    company_id: company.company_id,
    name: "agent",
    purpose: "mcp",
    mode: "test",
    scope_read_statements: true,
    accounts: [{ bank_account_id: account.bank_account_id, allow_read_statements: true }],
  }).token;
  const dateTo = server.services.today();
  const dateFrom = new Date(Date.parse(`${dateTo}T00:00:00Z`) - 9 * 86_400_000).toISOString().slice(0, 10);
  const ids: string[] = [];
  for (let i = 0; i < (opts.statements ?? 1); i++) {
    ids.push(statements.orderFromUi(account.bank_account_id, dateFrom, dateTo).statement_id);
  }
  await poller.idle();
  await poller.tick();
  await poller.idle();
  return {
    server,
    token,
    accountId: account.bank_account_id,
    statementId: ids[0]!,
    dateFrom,
    dateTo,
    stop: async () => {
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
