// `svc serve --demo`: on an empty database, a demo company with one account on each sandbox
// bank (those whose bank gives statements syncing themselves) and one token of each purpose,
// printed once with ready-to-paste commands.
import path from "node:path";
import type { AdminServices } from "./admin/areas";
import { shiftIsoDay } from "./formats/dates";
import { withAccountKey } from "./formats/validators";

export interface DemoResult {
  companyId: string;
  accounts: { bank: string; bank_account_id: string; alias: string }[];
  integrationToken: string;
  mcpToken: string;
}

const DEMO_BIK = "044525225";

/** `switchOnSync`: switches an account's sync on (decisions §16: the demo's sandbox accounts sync). */
export function seedDemo(
  admin: AdminServices,
  switchOnSync?: (bankAccountId: string) => void,
): DemoResult | null {
  if (admin.companies.list().length > 0) return null;
  const company = admin.companies.create({
    name: "ООО «Ромашка» (демо)",
    inn: "7719617469",
    kpp: "771901001",
  });
  const banks = [
    { bank: "sandbox", alias: "main", number: "40702810000000000001" },
    { bank: "sandbox_failing", alias: "failing", number: "40702810000000000002" },
    { bank: "sandbox_no_statements", alias: "nostmt", number: "40702810000000000003" },
  ];
  const accounts = banks.map((b) => {
    const account = admin.accounts.create({
      company_id: company.company_id,
      bank: b.bank,
      account_number: withAccountKey(b.number, DEMO_BIK),
      bik: DEMO_BIK,
      alias: b.alias,
    });
    if (b.bank !== "sandbox_no_statements") switchOnSync?.(account.bank_account_id);
    return { bank: b.bank, bank_account_id: account.bank_account_id, alias: account.alias };
  });
  const integration = admin.tokens.create({
    company_id: company.company_id,
    name: "demo integration",
    purpose: "integration",
    mode: "test",
    scope_read_statements: true,
    scope_send_payments: true,
    accounts: accounts.map((a) => ({
      bank_account_id: a.bank_account_id,
      allow_read_statements: true,
      allow_send_payments: true,
    })),
  });
  const mcp = admin.tokens.create({
    company_id: company.company_id,
    name: "demo agent",
    purpose: "mcp",
    mode: "test",
    scope_read_statements: true,
    accounts: accounts.map((a) => ({ bank_account_id: a.bank_account_id, allow_read_statements: true })),
  });
  return {
    companyId: company.company_id,
    accounts,
    integrationToken: integration.token,
    mcpToken: mcp.token,
  };
}

/** How the operator signs in to the admin pages of a demo. */
export interface DemoSignIn {
  /** The admin pages' address. */
  url: string;
  /** The admin token when this run generated it (shown once), else null. */
  token: string | null;
  /** Where the token is kept: "SVC_ADMIN_TOKEN", a file beside the database, or null (in memory). */
  source: string | null;
}

function signInLines(signIn: DemoSignIn): string[] {
  if (signIn.token !== null) {
    return [
      `Admin pages: ${signIn.url}`,
      `  sign in with the admin token: ${signIn.token}`,
      signIn.source
        ? `  (generated for this demo and kept in ${signIn.source}; set SVC_ADMIN_TOKEN to use your own)`
        : "",
    ].filter((l) => l !== "");
  }
  return [
    `Admin pages: ${signIn.url}`,
    `  sign in with the admin token from ${signIn.source ?? "SVC_ADMIN_TOKEN"}`,
  ];
}

/**
 * How this `svc` is run from a shell, for the commands a banner suggests: the binary by its path,
 * or the source through the project's own Bun (`svc` itself is on no PATH).
 */
function svcInvocation(): string {
  if (!import.meta.url.includes("/$bunfs/")) return "node_modules/.bin/bun run cli/svc.ts";
  const relative = path.relative(process.cwd(), process.execPath);
  return relative.startsWith("..") || path.isAbsolute(relative) ? process.execPath : `./${relative}`;
}

/** A `--demo` start on a database that already holds data: where it is and what to do next. */
export function demoAgainBanner(dbPath: string, signIn: DemoSignIn, svc = svcInvocation()): string {
  return [
    "",
    `Demo data already in ${dbPath}; its tokens were shown once, when it was created.`,
    ...signInLines(signIn),
    "New tokens: on the admin pages (Токены → Новый токен), or with",
    `  SVC_DB_PATH=${dbPath} ${svc} admin token create --company <company_id> --purpose integration --read-statements --account <bank_account_id>`,
    `To start over: stop svc and delete ${dbPath} (with its -wal and -shm files); the next start makes new demo data.`,
    "",
  ].join("\n");
}

/** `today` is the calendar date in the business time zone: a later date_to would be refused. */
export function demoBanner(demo: DemoResult, baseUrl: string, today: string, signIn?: DemoSignIn): string {
  const main = demo.accounts[0]!;
  const to = today;
  const from = `${to.slice(0, 8)}01`;
  return [
    "",
    "Demo data created. These tokens are shown once; keep them.",
    `  integration token: ${demo.integrationToken}`,
    `  agent (mcp) token: ${demo.mcpToken}`,
    "",
    "Accounts:",
    ...demo.accounts.map((a) => `  ${a.bank.padEnd(22)} ${a.bank_account_id} (alias ${a.alias})`),
    "",
    "Try (paste in a shell):",
    `  export SVC=${baseUrl} SVC_TOKEN=${demo.integrationToken} SVC_AGENT_TOKEN=${demo.mcpToken}`,
    "  # order a statement of this month, poll it until its status is ready, download the 1C file",
    `  curl -s -X POST $SVC/api/v1/integration/statements -H "Authorization: Bearer $SVC_TOKEN" \\`,
    `    -H 'Content-Type: application/json' \\`,
    `    -d '{"bank_account_id":"${main.bank_account_id}","external_id":"demo-1","date_from":"${from}","date_to":"${to}"}'`,
    `  curl -s $SVC/api/v1/integration/statements/<statement_id> -H "Authorization: Bearer $SVC_TOKEN"`,
    `  curl -s -OJ "$SVC/api/v1/integration/statements/<statement_id>/export?format=1c" -H "Authorization: Bearer $SVC_TOKEN"`,
    "  # main and failing order their own statements (sync): which days of the last 90 svc holds",
    `  curl -s "$SVC/api/v1/integration/bank-accounts/${main.bank_account_id}/coverage?date_from=${shiftIsoDay(to, -89)}&date_to=${to}" \\`,
    `    -H "Authorization: Bearer $SVC_TOKEN"`,
    "  # an agent call: open a session, then call a tool",
    `  SID=$(curl -s -D - -o /dev/null -X POST $SVC/api/v1/mcp -H "Authorization: Bearer $SVC_AGENT_TOKEN" \\`,
    `    -H 'Content-Type: application/json' \\`,
    `    -d '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"curl","version":"1"}}}' \\`,
    `    | awk -F': ' 'tolower($1)=="mcp-session-id"{print $2}' | tr -d '\\r')`,
    `  curl -s -X POST $SVC/api/v1/mcp -H "Authorization: Bearer $SVC_AGENT_TOKEN" -H "Mcp-Session-Id: $SID" \\`,
    `    -H 'Content-Type: application/json' \\`,
    `    -d '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"list_bank_accounts","arguments":{}}}'`,
    "",
    ...(signIn ? [...signInLines(signIn), ""] : []),
  ].join("\n");
}
