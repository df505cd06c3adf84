// lanes: sqlite postgres
// What a model reads in content[0].text (decisions §15): a first line that says what the answer
// holds, then one compact line per item; structuredContent keeps every field.
import { describe, expect, test } from "bun:test";
import { Tiktoken } from "js-tiktoken/lite";
import o200kBase from "js-tiktoken/ranks/o200k_base";
import { seedDemo } from "../../src/demo";
import { formatRubles } from "../../src/formats/money";
import { makeTestApp } from "../helpers/app";
import { callTool, initSession, readyStatement, type ToolResultBody } from "./helpers";

interface Party {
  name: string;
  inn: string;
}
interface Op {
  doc_date: string;
  direction: "credit" | "debit";
  amount: number;
  doc_number: string;
  purpose: string;
  payer: Party;
  payee: Party;
}
interface Summary {
  operations_count: number;
  total_credit: number;
  total_debit: number;
  opening_balance: number | null;
  closing_balance: number | null;
  first_doc_date: string | null;
  last_doc_date: string | null;
}

const OPERATION_LINE =
  /^(\d{4}-\d{2}-\d{2}) \| ([+−])([\d ]+,\d{2}) \| (.*?) \| ИНН (\S+) \| № (.*?) \| (.*)$/u;

const rub = (amount: number) => formatRubles(Math.round(amount * 100));

async function agent(opts: { ops_per_day?: number } = {}) {
  const t = makeTestApp();
  const w = t.fixtures.world({ purpose: "mcp", ops_per_day: opts.ops_per_day });
  const session = await initSession(t, w.token);
  const call = (name: string, args: Record<string, unknown> = {}) =>
    callTool(t, w.token, session, name, args);
  return { t, w, call, accountId: w.account.bank_account_id };
}

function textOf(r: ToolResultBody): string {
  expect(r.isError).toBe(false);
  expect(r.content).toHaveLength(1);
  expect(r.content[0]!.type).toBe("text");
  return r.content[0]!.text;
}

/** The operation lines of a text, parsed; every other line is left out. */
function operationLines(text: string) {
  return text
    .split("\n")
    .map((line) => OPERATION_LINE.exec(line))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => ({
      date: m[1]!,
      sign: m[2]!,
      amount: m[3]!,
      counterparty: m[4]!,
      inn: m[5]!,
      number: m[6]!,
      purpose: m[7]!,
    }));
}

/** The line a model must find for `op`: its date, signed amount, the other party, number, purpose. */
function expectLineOf(line: ReturnType<typeof operationLines>[number], op: Op) {
  const other = op.direction === "credit" ? op.payer : op.payee;
  expect(line.date).toBe(op.doc_date);
  expect(line.sign).toBe(op.direction === "credit" ? "+" : "−");
  expect(line.amount).toBe(rub(op.amount));
  expect(line.counterparty).toBe(other.name.replace(/\s+/g, " ").trim());
  expect(line.inn).toBe(other.inn || "—");
  expect(line.purpose).toBe(op.purpose.replace(/\s+/g, " ").trim());
}

describe("get_statement", () => {
  test("a summary with balances and turnovers, and one line per operation in the text", async () => {
    const { t, call, accountId } = await agent();
    const id = await readyStatement(t, accountId, "2026-11-01", "2026-11-10");
    const r = await call("get_statement", { statement_id: id });
    const text = textOf(r);
    const ops = r.structuredContent.operations as Op[];
    const summary = r.structuredContent.summary as Summary;
    expect(ops.length).toBeGreaterThan(0);
    expect(summary.operations_count).toBe(ops.length);
    const sum = (d: "credit" | "debit") =>
      ops.filter((o) => o.direction === d).reduce((s, o) => s + Math.round(o.amount * 100), 0) / 100;
    expect(summary.total_credit).toBeCloseTo(sum("credit"), 2);
    expect(summary.total_debit).toBeCloseTo(sum("debit"), 2);
    expect(typeof summary.opening_balance).toBe("number");
    expect(summary.closing_balance).toBeCloseTo(
      summary.opening_balance! + summary.total_credit - summary.total_debit,
      2,
    );
    expect(summary.first_doc_date).toBe(ops.map((o) => o.doc_date).sort()[0]!);
    expect(summary.last_doc_date).toBe(
      ops
        .map((o) => o.doc_date)
        .sort()
        .at(-1)!,
    );

    // Not the JSON of structuredContent: the first line says the period, count, totals, balances.
    expect(() => JSON.parse(text)).toThrow();
    const first = text.split("\n")[0]!;
    expect(first).toContain("01.11–10.11.2026");
    expect(first).toContain(`${ops.length} операц`);
    expect(first).toContain(`+${rub(summary.total_credit)}`);
    expect(first).toContain(`−${rub(summary.total_debit)}`);
    expect(first).toContain(rub(summary.opening_balance!));
    expect(first).toContain(rub(summary.closing_balance!));
    const lines = operationLines(text);
    expect(lines).toHaveLength(ops.length);
    lines.forEach((line, i) => {
      expectLineOf(line, ops[i]!);
    });
    // No account number in full, as in structuredContent.
    expect(text).not.toMatch(/\d{20}/);
  });

  test("more than 500 operations: the summary in words and where to go next, no lines", async () => {
    const { t, call, accountId } = await agent({ ops_per_day: 30 });
    const id = await readyStatement(t, accountId, "2026-10-21", "2026-11-20");
    const r = await call("get_statement", { statement_id: id });
    const text = textOf(r);
    const summary = r.structuredContent.summary as Summary;
    expect(summary.operations_count).toBeGreaterThan(500);
    expect(typeof summary.opening_balance).toBe("number");
    expect(typeof summary.closing_balance).toBe("number");
    expect(r.structuredContent.operations).toBeUndefined();
    expect(operationLines(text)).toHaveLength(0);
    expect(text).toContain(`${summary.operations_count} операц`);
    expect(text).toContain(`+${rub(summary.total_credit)}`);
    expect(text).toContain("search_operations");
  });

  test("a failed statement says so in words", async () => {
    const t = makeTestApp();
    const w = t.fixtures.world({ purpose: "mcp", bank: "sandbox_failing" });
    const session = await initSession(t, w.token);
    const id = await readyStatement(t, w.account.bank_account_id, "2026-11-01", "2026-11-05");
    const r = await callTool(t, w.token, session, "get_statement", { statement_id: id });
    const text = textOf(r);
    const statement = r.structuredContent.statement as { status: string; error: { code: string } };
    expect(statement.status).toBe("failed");
    expect(text).toContain(statement.error.code);
    expect(operationLines(text)).toHaveLength(0);
  });
});

describe("search_operations", () => {
  test("the first line carries the totals of every match and names the days without data", async () => {
    const { t, call, accountId } = await agent();
    // Statements for 20.10–26.10 and 01.11–05.11; nothing ordered for 27.10–31.10.
    await readyStatement(t, accountId, "2026-10-20", "2026-10-26");
    await readyStatement(t, accountId, "2026-11-01", "2026-11-05");
    const args = { bank_account_id: accountId, date_from: "2026-10-25", date_to: "2026-11-02", limit: 5 };
    const r = await call("search_operations", args);
    const text = textOf(r);
    const totals = r.structuredContent.totals as { count: number; total_credit: number; total_debit: number };
    const ops = r.structuredContent.operations as Op[];
    expect(totals.count).toBeGreaterThan(ops.length);
    const [first, ...rest] = text.split("\n");
    expect(first).toContain("25.10–02.11.2026");
    expect(first).toContain(`${totals.count} операц`);
    expect(first).toContain(`+${rub(totals.total_credit)}`);
    expect(first).toContain(`−${rub(totals.total_debit)}`);
    // The gap in words, on the first line: a model cannot miss it.
    expect(first).toContain("нет данных за 27.10–31.10");
    expect((r.structuredContent.coverage as { complete: boolean }).complete).toBe(false);
    const lines = operationLines(rest.join("\n"));
    expect(lines).toHaveLength(ops.length);
    lines.forEach((line, i) => {
      expectLineOf(line, ops[i]!);
    });
    // The next page from the text alone: the same totals, the next lines.
    const cursor = /cursor="([^"]+)"/.exec(text)?.[1];
    expect(cursor).toBe(r.structuredContent.next_cursor as string);
    const next = await call("search_operations", { ...args, cursor });
    expect(textOf(next).split("\n")[0]).toBe(
      first!.replace(
        `на этой странице ${ops.length}`,
        `на этой странице ${(next.structuredContent.operations as Op[]).length}`,
      ),
    );
  });

  test("every day held says so; March with nothing ordered finds nothing and says the days have no data", async () => {
    const { t, call, accountId } = await agent();
    await readyStatement(t, accountId, "2026-11-01", "2026-11-10");
    const full = textOf(
      await call("search_operations", {
        bank_account_id: accountId,
        date_from: "2026-11-02",
        date_to: "2026-11-09",
      }),
    );
    expect(full.split("\n")[0]).toContain("Данные есть за каждый день периода");
    const march = await call("search_operations", {
      bank_account_id: accountId,
      date_from: "2026-03-01",
      date_to: "2026-03-31",
    });
    const first = textOf(march).split("\n")[0]!;
    expect(first).toContain("ничего не найдено");
    expect(first).toContain("нет данных за 01.03–31.03.2026");
    expect((march.structuredContent.totals as { count: number }).count).toBe(0);
  });

  test("today is partial and the days after it have not come", async () => {
    const { t, call, accountId } = await agent();
    await readyStatement(t, accountId, "2026-11-15", "2026-11-20");
    const first = textOf(
      await call("search_operations", {
        bank_account_id: accountId,
        date_from: "2026-11-15",
        date_to: "2026-11-25",
      }),
    ).split("\n")[0]!;
    expect(first).toContain("за 20.11.2026 данные неполные");
    expect(first).toContain("21.11–25.11.2026 ещё не наступили");
    expect(first).not.toContain("нет данных");
  });

  test("limit 50 on the demo account's October fits in 4,000 tokens", async () => {
    const t = makeTestApp({}, "2026-11-26T09:00:00Z");
    const demo = seedDemo(t.services.admin)!;
    const main = demo.accounts.find((a) => a.alias === "main")!;
    const session = await initSession(t, demo.mcpToken);
    await readyStatement(t, main.bank_account_id, "2026-10-01", "2026-10-31");
    const r = await callTool(t, demo.mcpToken, session, "search_operations", {
      bank_account_id: main.bank_account_id,
      date_from: "2026-10-01",
      date_to: "2026-10-31",
      limit: 50,
    });
    const text = textOf(r);
    expect(operationLines(text)).toHaveLength(50);
    expect(new Tiktoken(o200kBase).encode(text).length).toBeLessThanOrEqual(4_000);
  });
});

describe("the other tools", () => {
  test("list_companies, list_bank_accounts, get_balance, list_statements: one line per item", async () => {
    const { t, w, call, accountId } = await agent();
    const companies = textOf(await call("list_companies"));
    expect(companies).toContain(w.company.company_id);
    expect(companies).toContain("ИНН 7719617469");

    const accounts = textOf(await call("list_bank_accounts"));
    expect(accounts.split("\n").filter((l) => l.includes(accountId))).toHaveLength(1);

    expect(textOf(await call("get_balance", { bank_account_id: accountId }))).toContain("неизвестен");
    // A statement up to today brings the balance the bank reports.
    await readyStatement(t, accountId, "2026-11-16", "2026-11-20");
    const balance = await call("get_balance", { bank_account_id: accountId });
    expect(textOf(balance)).toContain(rub(balance.structuredContent.balance as number));

    await readyStatement(t, accountId, "2026-10-01", "2026-10-31");
    const first = await call("list_statements", { bank_account_id: accountId, limit: 1 });
    const text = textOf(first);
    const statements = first.structuredContent.statements as { statement_id: string }[];
    expect(text).toContain(statements[0]!.statement_id);
    // The next page is reachable from the text alone.
    const cursor = first.structuredContent.next_cursor as string;
    expect(text).toContain(`cursor="${cursor}"`);
    const last = textOf(await call("list_statements", { bank_account_id: accountId, cursor }));
    expect(last).not.toContain("cursor=");
  });
});

describe("the budget of a model's context (o200k_base)", () => {
  test("the demo account's October statement fits in 12,000 tokens of text", async () => {
    const t = makeTestApp({}, "2026-11-26T09:00:00Z");
    const demo = seedDemo(t.services.admin)!;
    const main = demo.accounts.find((a) => a.alias === "main")!;
    const session = await initSession(t, demo.mcpToken);
    const id = await readyStatement(t, main.bank_account_id, "2026-10-01", "2026-10-31");
    const r = await callTool(t, demo.mcpToken, session, "get_statement", { statement_id: id });
    const text = textOf(r);
    const tokens = new Tiktoken(o200kBase).encode(text).length;
    const count = (r.structuredContent.summary as Summary).operations_count;
    expect(operationLines(text)).toHaveLength(count);
    expect(tokens).toBeLessThanOrEqual(12_000);
  });
});
