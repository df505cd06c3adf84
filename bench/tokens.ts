// What agent answers cost a model's context (decisions §15): tokens of the text a model reads
// (content[0].text) and of structuredContent, counted with the o200k_base encoding. The demo
// account `main` (svc serve --demo) and its October 2026 statement, as an agent host would see it,
// and an account of about 500 operations a month. Runs in-process on the clock of 2026-11-26.
import { Tiktoken } from "js-tiktoken/lite";
import o200kBase from "js-tiktoken/ranks/o200k_base";
import { seedDemo } from "../src/demo";
import { makeTestApp } from "../test/helpers/app";
import { callTool, initSession, readyStatement } from "../test/mcp/helpers";

export interface TokenRow {
  answer: string;
  operations: number;
  text_tokens: number;
  json_tokens: number;
  /** The budget of §15, where it sets one. */
  budget: number | null;
}

const encoding = new Tiktoken(o200kBase);
const tokens = (text: string) => encoding.encode(text).length;

async function answers(
  label: string,
  opsPerDay: number | null,
  budgets: { statement: number | null; search50: number | null },
): Promise<TokenRow[]> {
  const t = makeTestApp({}, "2026-11-26T09:00:00Z");
  let accountId: string;
  let token: string;
  if (opsPerDay === null) {
    const demo = seedDemo(t.services.admin)!;
    accountId = demo.accounts.find((a) => a.alias === "main")!.bank_account_id;
    token = demo.mcpToken;
  } else {
    const w = t.fixtures.world({ purpose: "mcp", ops_per_day: opsPerDay });
    accountId = w.account.bank_account_id;
    token = w.token;
  }
  const session = await initSession(t, token);
  const statementId = await readyStatement(t, accountId, "2026-10-01", "2026-10-31");
  const rows: TokenRow[] = [];
  const measure = async (
    answer: string,
    tool: string,
    args: Record<string, unknown>,
    budget: number | null,
  ) => {
    const r = await callTool(t, token, session, tool, args);
    if (r.isError) throw new Error(`${tool}: ${r.content[0]?.text}`);
    const ops = r.structuredContent.operations as unknown[] | undefined;
    rows.push({
      answer: `${label}: ${answer}`,
      operations: ops?.length ?? 0,
      text_tokens: tokens(r.content[0]!.text),
      json_tokens: tokens(JSON.stringify(r.structuredContent)),
      budget,
    });
  };
  await measure(
    "get_statement October 2026",
    "get_statement",
    { statement_id: statementId },
    budgets.statement,
  );
  const period = { bank_account_id: accountId, date_from: "2026-10-01", date_to: "2026-10-31" };
  await measure(
    "search_operations limit 50",
    "search_operations",
    { ...period, limit: 50 },
    budgets.search50,
  );
  await measure("search_operations limit 100", "search_operations", { ...period, limit: 100 }, null);
  return rows;
}

export async function tokenRows(): Promise<TokenRow[]> {
  return [
    ...(await answers("demo main", null, { statement: 12_000, search50: 4_000 })),
    // 16 a day: 496 operations in October, get_statement's most that it lists line by line.
    ...(await answers("500-operation account", 16, { statement: null, search50: 4_000 })),
  ];
}

if (import.meta.main) {
  for (const row of await tokenRows()) {
    const budget =
      row.budget === null
        ? ""
        : ` (budget ${row.budget}: ${row.text_tokens <= row.budget ? "met" : "MISSED"})`;
    process.stdout.write(
      `${row.answer}: ${row.operations} operations, text ${row.text_tokens} tokens, JSON ${row.json_tokens}${budget}\n`,
    );
  }
}
