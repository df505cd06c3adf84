// Prints a real answer of each agent tool, as docs/agents.md shows them: the demo company of
// `svc serve --demo` on the clock of 2026-11-26 (Europe/Moscow), its account `main` with the
// statements of October and of 1–20 November ordered, and each tool called once over the agent
// endpoint. The text is what a model reads; structuredContent is cut to its first items.
//   bun run scripts/agent-answers.ts
import { seedDemo } from "../src/demo";
import { makeTestApp } from "../test/helpers/app";
import { callTool, initSession, readyStatement } from "../test/mcp/helpers";

const t = makeTestApp({}, "2026-11-26T09:00:00Z");
const demo = seedDemo(t.services.admin)!;
const main = demo.accounts.find((a) => a.alias === "main")!.bank_account_id;
const session = await initSession(t, demo.mcpToken);
const october = await readyStatement(t, main, "2026-10-01", "2026-10-31");
await readyStatement(t, main, "2026-11-01", "2026-11-20");
await readyStatement(t, main, "2026-11-26", "2026-11-26");

/** Arrays cut to their first `keep` items, with how many were left out. */
function cut(value: unknown, keep: number): unknown {
  if (Array.isArray(value)) {
    const kept = value.slice(0, keep).map((v) => cut(v, keep));
    return value.length > keep ? [...kept, `… ${value.length - keep} more`] : kept;
  }
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, cut(v, keep)]));
  }
  return value;
}

const calls: [string, Record<string, unknown>][] = [
  ["list_companies", {}],
  ["list_bank_accounts", {}],
  ["get_balance", { bank_account_id: main }],
  ["list_statements", { bank_account_id: main, limit: 2 }],
  ["get_statement", { statement_id: october }],
  [
    "search_operations",
    {
      bank_account_id: main,
      date_from: "2026-10-25",
      date_to: "2026-11-30",
      query: "транспортных",
      limit: 5,
    },
  ],
];
for (const [name, args] of calls) {
  const r = await callTool(t, demo.mcpToken, session, name, args);
  const lines = r.content[0]!.text.split("\n");
  const text = lines.length > 8 ? [...lines.slice(0, 7), `… ${lines.length - 7} more lines`] : lines;
  process.stdout.write(
    `### ${name} ${JSON.stringify(args)}\n\ncontent[0].text:\n\n\`\`\`text\n${text.join("\n")}\n\`\`\`\n\n` +
      `structuredContent:\n\n\`\`\`json\n${JSON.stringify(cut(r.structuredContent, 2), null, 2)}\n\`\`\`\n\n`,
  );
}
