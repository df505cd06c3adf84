// lanes: sqlite postgres
// The six tools from an agent's point of view: shapes, limits, paging, search, access.
import { describe, expect, test } from "bun:test";
import { searchWords } from "../../src/db/operation-filter";
import { ftsQuery } from "../../src/db/sqlite/operations-search";
import { maskLongNumbers } from "../../src/mcp/views";
import { makeTestApp } from "../helpers/app";
import { callTool, initSession, type Op, readyStatement, type ToolResultBody } from "./helpers";

async function agent(opts: { ops_per_day?: number } = {}) {
  const t = makeTestApp();
  const w = t.fixtures.world({ purpose: "mcp", ops_per_day: opts.ops_per_day });
  const session = await initSession(t, w.token);
  const call = (name: string, args: Record<string, unknown> = {}) =>
    callTool(t, w.token, session, name, args);
  return { t, w, session, call, accountId: w.account.bank_account_id };
}

function expectToolError(r: ToolResultBody, code: string) {
  expect(r.isError).toBe(true);
  expect((r.structuredContent.error as { code: string }).code).toBe(code);
  expect(typeof (r.structuredContent.error as { message: string }).message).toBe("string");
  expect(r.content[0]?.type).toBe("text");
  expect(r._meta.notice).toMatch(/untrusted/);
}

function ops(r: ToolResultBody): Op[] {
  expect(r.isError).toBe(false);
  return r.structuredContent.operations as Op[];
}

async function searchAll(
  call: (n: string, a: Record<string, unknown>) => Promise<ToolResultBody>,
  args: Record<string, unknown>,
) {
  const all: Op[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const r = await call("search_operations", cursor ? { ...args, cursor } : args);
    all.push(...ops(r));
    cursor = r.structuredContent.next_cursor as string | null;
    pages += 1;
  } while (cursor !== null && pages < 100);
  return { all, pages };
}

describe("result shape", () => {
  test("success: compact text for a model, every field in structuredContent, isError false, _meta.notice", async () => {
    const { call, w } = await agent();
    const r = await call("list_companies");
    expect(r.isError).toBe(false);
    expect(r.content[0]!.text).toContain(`company_id ${w.company.company_id}`);
    expect(() => JSON.parse(r.content[0]!.text)).toThrow();
    expect(r._meta.notice).toMatch(/untrusted/);
    expect(r.structuredContent).toEqual({
      companies: [{ company_id: w.company.company_id, name: "ООО Ромашка", inn: "7719617469", kpp: null }],
    });
  });
});

describe("list_bank_accounts and access", () => {
  test("lists only the accounts the token may read", async () => {
    const t = makeTestApp();
    const company = t.fixtures.company();
    const readable = t.fixtures.account(company.company_id);
    const notAllowed = t.fixtures.account(company.company_id);
    t.fixtures.account(company.company_id); // no grant at all
    const token = t.fixtures.token(company.company_id, {
      purpose: "mcp",
      accounts: [
        { bank_account_id: readable.bank_account_id, allow_read_statements: true },
        { bank_account_id: notAllowed.bank_account_id, allow_read_statements: false },
      ],
    });
    const session = await initSession(t, token.token);
    const r = await callTool(t, token.token, session, "list_bank_accounts");
    const accounts = r.structuredContent.bank_accounts as { bank_account_id: string }[];
    expect(accounts.map((a) => a.bank_account_id)).toEqual([readable.bank_account_id]);
    expect(accounts[0]).toMatchObject({
      company_id: company.company_id,
      bank: "sandbox",
      bik: "044525225",
      currency: "RUB",
    });
    // The same access policy as REST: tool-level errors.
    const refused = await callTool(t, token.token, session, "get_balance", {
      bank_account_id: notAllowed.bank_account_id,
    });
    expectToolError(refused, "forbidden_account");
    // It says why, as REST does (decisions §19).
    expect(refused.structuredContent).toMatchObject({ error: { details: { reason: "no_allow" } } });
    const other = t.fixtures.world({ purpose: "mcp" });
    expectToolError(
      await callTool(t, token.token, session, "get_balance", {
        bank_account_id: other.account.bank_account_id,
      }),
      "forbidden_company",
    );
    expectToolError(
      await callTool(t, token.token, session, "list_statements", { bank_account_id: crypto.randomUUID() }),
      "not_found",
    );
  });
});

describe("get_balance", () => {
  test("no cached value: null and stale; after a statement up to today: cached, then stale after the limit", async () => {
    const { t, call, accountId } = await agent();
    const empty = await call("get_balance", { bank_account_id: accountId });
    expect(empty.structuredContent).toEqual({
      bank_account_id: accountId,
      balance: null,
      currency: "RUB",
      as_of: null,
      stale: true,
    });
    await readyStatement(t, accountId, "2026-11-10", "2026-11-20");
    const cached = (await call("get_balance", { bank_account_id: accountId })).structuredContent;
    expect(typeof cached.balance).toBe("number");
    expect(cached.stale).toBe(false);
    const account = t.services.accounts.findById(accountId)!;
    expect(cached).toEqual({ ...t.services.statements.balance(account) });
    t.clock.advance(3601_000);
    expect((await call("get_balance", { bank_account_id: accountId })).structuredContent.stale).toBe(true);
  });

  test("a balance written after a first call is the next call's answer (admin refresh, a statement)", async () => {
    const { t, w, accountId } = await agent();
    const account = t.services.accounts.findById(accountId)!;
    // A new session for each look: days pass in between.
    const balance = async () =>
      (
        await callTool(t, w.token, await initSession(t, w.token), "get_balance", {
          bank_account_id: accountId,
        })
      ).structuredContent;
    expect((await t.admin("POST", `/bank-accounts/${accountId}/balance/refresh`)).status).toBe(200);
    const first = await balance();
    expect(first.as_of).toBe("2026-11-20T09:00:00.000Z");
    expect(await balance()).toEqual(first);

    t.clock.advance(3 * 86_400_000);
    expect((await t.admin("POST", `/bank-accounts/${accountId}/balance/refresh`)).status).toBe(200);
    const refreshed = await balance();
    expect(refreshed.as_of).toBe("2026-11-23T09:00:00.000Z");
    expect(refreshed).toEqual({ ...t.services.statements.balance(account) });
    expect(refreshed.balance).not.toBe(first.balance);

    // A statement up to today stores its closing balance as the cached one.
    t.clock.advance(3_600_000);
    await readyStatement(t, accountId, "2026-11-20", "2026-11-23");
    const fromStatement = await balance();
    expect(fromStatement.as_of).not.toBe(refreshed.as_of);
    expect(fromStatement).toEqual({ ...t.services.statements.balance(account) });
  });
});

describe("list_statements", () => {
  test("shows ui-sourced statements and those ordered by another token, newest first, paged", async () => {
    const { t, w, call, accountId } = await agent();
    const integration = t.fixtures.token(w.company.company_id, {
      purpose: "integration",
      accounts: [{ bank_account_id: accountId, allow_read_statements: true }],
    });
    const ui = t.services.statements.orderFromUi(accountId, "2026-11-01", "2026-11-05");
    t.clock.advance(1000);
    const res = await t.request("POST", "/api/v1/integration/statements", {
      token: integration.token,
      body: {
        bank_account_id: accountId,
        external_id: "erp-1",
        date_from: "2026-11-06",
        date_to: "2026-11-10",
      },
    });
    expect(res.status).toBe(201);
    const viaToken = (await res.json()) as { statement_id: string };
    const r = await call("list_statements", { bank_account_id: accountId });
    const list = r.structuredContent.statements as {
      statement_id: string;
      source: string;
      account_number_masked: string;
    }[];
    expect(list.map((s) => [s.statement_id, s.source])).toEqual([
      [viaToken.statement_id, "integration"],
      [ui.statement_id, "ui"],
    ]);
    expect(r.structuredContent.next_cursor).toBeNull();

    for (let i = 0; i < 22; i++) {
      t.clock.advance(1000);
      t.services.statements.orderFromUi(accountId, "2026-11-01", "2026-11-02");
    }
    const first = await call("list_statements", { bank_account_id: accountId });
    expect((first.structuredContent.statements as unknown[]).length).toBe(20);
    const second = await call("list_statements", {
      bank_account_id: accountId,
      cursor: first.structuredContent.next_cursor,
    });
    const ids = [
      ...(first.structuredContent.statements as { statement_id: string }[]),
      ...(second.structuredContent.statements as { statement_id: string }[]),
    ].map((s) => s.statement_id);
    expect(ids).toHaveLength(24);
    expect(new Set(ids).size).toBe(24);
    expect(second.structuredContent.next_cursor).toBeNull();
    expectToolError(
      await call("list_statements", { bank_account_id: accountId, limit: 101 }),
      "validation_error",
    );
    expectToolError(
      await call("list_statements", { bank_account_id: accountId, cursor: "garbage" }),
      "validation_error",
    );
    const processing = await call("list_statements", {
      bank_account_id: accountId,
      status: "processing",
      limit: 100,
    });
    expect((processing.structuredContent.statements as unknown[]).length).toBe(24);
  });
});

describe("get_statement", () => {
  test("up to 500 operations: statement and all operations in rubles", async () => {
    const { t, call, accountId } = await agent();
    const id = await readyStatement(t, accountId, "2026-11-01", "2026-11-10");
    const r = await call("get_statement", { statement_id: id });
    const statement = r.structuredContent.statement as { status: string; operations_count: number };
    expect(statement.status).toBe("ready");
    expect(ops(r)).toHaveLength(statement.operations_count);
    expect((r.structuredContent.summary as { operations_count: number }).operations_count).toBe(
      ops(r).length,
    );
    for (const op of ops(r))
      expect(Math.abs(op.amount * 100 - Math.round(op.amount * 100))).toBeLessThan(1e-6);
  });

  test("more than 500 operations: summary and a hint naming search_operations", async () => {
    const { t, call, accountId } = await agent({ ops_per_day: 30 });
    const id = await readyStatement(t, accountId, "2026-10-21", "2026-11-20");
    const r = await call("get_statement", { statement_id: id });
    expect(r.isError).toBe(false);
    const statement = r.structuredContent.statement as { operations_count: number };
    expect(statement.operations_count).toBeGreaterThan(500);
    expect(r.structuredContent.operations).toBeUndefined();
    const summary = r.structuredContent.summary as Record<string, unknown>;
    expect(summary.operations_count).toBe(statement.operations_count);
    expect(typeof summary.total_credit).toBe("number");
    expect(typeof summary.total_debit).toBe("number");
    expect(summary.first_doc_date).toBe("2026-10-21");
    expect((summary.last_doc_date as string) <= "2026-11-20").toBe(true);
    expect(r.structuredContent.hint).toContain("search_operations");
    expect(r.content[0]!.text.length).toBeLessThan(4000);
  });

  test("processing: not_ready; unknown or unreadable: not_found", async () => {
    const { t, call, accountId } = await agent();
    const s = t.services.statements.orderFromUi(accountId, "2026-11-01", "2026-11-05");
    await t.services.poller.idle();
    expectToolError(await call("get_statement", { statement_id: s.statement_id }), "not_ready");
    expectToolError(await call("get_statement", { statement_id: crypto.randomUUID() }), "not_found");
    const other = t.fixtures.world({ purpose: "mcp" });
    const foreign = await readyStatement(t, other.account.bank_account_id, "2026-11-01", "2026-11-05");
    expectToolError(await call("get_statement", { statement_id: foreign }), "not_found");
    expectToolError(await call("get_statement", { statement_id: "x" }), "validation_error");
  });
});

describe("search_operations", () => {
  test("period limits and argument validation are tool-level validation_error", async () => {
    const { call, accountId } = await agent();
    const base = { bank_account_id: accountId, date_from: "2026-08-23", date_to: "2026-11-20" }; // 90 days
    expect((await call("search_operations", base)).isError).toBe(false);
    const bad: Record<string, unknown>[] = [
      { ...base, date_from: "2026-08-22" }, // 91 days
      { ...base, limit: 101 },
      { ...base, limit: 0 },
      { ...base, limit: 1.5 },
      { ...base, date_from: "2026-02-30" },
      { ...base, date_from: "2026-11-21" },
      { ...base, amount_min: -1 },
      { ...base, amount_min: 1.005 },
      { ...base, amount_min: 10, amount_max: 5 },
      { ...base, amount_min: "10" },
      { ...base, counterparty_inn: "123" },
      { ...base, direction: "sideways" },
      { ...base, query: "" },
      { ...base, query: "-- !!" },
      { ...base, cursor: "not-a-cursor" },
      { ...base, unexpected: true },
      { bank_account_id: accountId },
    ];
    for (const args of bad) {
      const r = await call("search_operations", args);
      expect({ args, code: (r.structuredContent.error as { code?: string } | undefined)?.code }).toEqual({
        args,
        code: "validation_error",
      });
    }
  });

  test("default limit 50; cursor paging in a stable (doc_date, operation_id) order without duplicates", async () => {
    const { t, call, accountId } = await agent({ ops_per_day: 10 });
    await readyStatement(t, accountId, "2026-10-21", "2026-11-10");
    // An overlapping statement: shared operations must come back once.
    await readyStatement(t, accountId, "2026-11-01", "2026-11-20");
    const args = { bank_account_id: accountId, date_from: "2026-10-21", date_to: "2026-11-20" };
    const first = await call("search_operations", args);
    expect(ops(first)).toHaveLength(50);
    expect(first.structuredContent.next_cursor).toBeString();

    const { all, pages } = await searchAll(call, { ...args, limit: 37 });
    const expected = t.db
      .query<{ n: number }, [string]>("SELECT COUNT(*) AS n FROM operations WHERE bank_account_id = ?")
      .get(accountId)!.n;
    expect(all).toHaveLength(expected);
    expect(pages).toBe(Math.ceil(expected / 37));
    expect(new Set(all.map((o) => o.operation_id)).size).toBe(all.length);
    const keys = all.map((o) => `${o.doc_date}|${o.operation_id}`);
    expect(keys).toEqual([...keys].sort());
    // The first page of the default size is the head of the same order.
    expect(ops(first).map((o) => o.operation_id)).toEqual(all.slice(0, 50).map((o) => o.operation_id));
    // Same request, same answer.
    expect(ops(await call("search_operations", args))).toEqual(ops(first));
  });

  test("Cyrillic free text, case-insensitive, prefix, in purpose and names", async () => {
    const { t, call, accountId } = await agent({ ops_per_day: 10 });
    await readyStatement(t, accountId, "2026-10-21", "2026-11-20");
    const args = { bank_account_id: accountId, date_from: "2026-10-21", date_to: "2026-11-20", limit: 100 };
    const upper = ops(await call("search_operations", { ...args, query: "ЗАРАБОТНАЯ" }));
    expect(upper.length).toBeGreaterThan(0);
    for (const op of upper) expect(op.purpose).toMatch(/заработн/i);
    expect(upper.some((op) => op.purpose.includes("Заработная плата"))).toBe(true);
    const lower = ops(await call("search_operations", { ...args, query: "заработная ПЛАТА" }));
    expect(lower.map((o) => o.operation_id)).toEqual(upper.map((o) => o.operation_id));
    const prefix = ops(await call("search_operations", { ...args, query: "заработ" }));
    const prefixIds = new Set(prefix.map((o) => o.operation_id));
    for (const op of upper) expect(prefixIds.has(op.operation_id)).toBe(true);
    for (const op of prefix) expect(`${op.purpose} ${op.payer.name} ${op.payee.name}`).toMatch(/заработ/i);
    // A counterparty name.
    const name = upper[0]!.direction === "debit" ? upper[0]!.payee.name : upper[0]!.payer.name;
    const byName = ops(
      await call("search_operations", { ...args, query: name.split(" ")[0]!.toUpperCase() }),
    );
    expect(byName.length).toBeGreaterThan(0);
    // FTS syntax in user text is just text: no error, no injection.
    for (const q of ['"', "purpose:зарплата", "NEAR(a b)", "a OR b", "*", "x AND NOT y", 'ООО"Ромашка']) {
      const r = await call("search_operations", { ...args, query: q });
      const code = (r.structuredContent.error as { code?: string } | undefined)?.code;
      expect({ q, ok: !r.isError || code === "validation_error" }).toEqual({ q, ok: true });
    }
  });

  test("counterparty_inn, amount range and direction filters", async () => {
    const { t, call, accountId } = await agent({ ops_per_day: 10 });
    await readyStatement(t, accountId, "2026-10-21", "2026-11-20");
    const args = { bank_account_id: accountId, date_from: "2026-10-21", date_to: "2026-11-20", limit: 100 };
    const { all } = await searchAll(call, args);
    const counterparty = (o: Op) => (o.direction === "credit" ? o.payer.inn : o.payee.inn);
    const inn = counterparty(all[3]!);
    const byInn = ops(await call("search_operations", { ...args, counterparty_inn: inn }));
    expect(byInn.length).toBe(all.filter((o) => counterparty(o) === inn).length);
    for (const o of byInn) expect(counterparty(o)).toBe(inn);

    const amounts = all.map((o) => o.amount).sort((a, b) => a - b);
    const min = amounts[Math.floor(amounts.length / 4)]!;
    const max = amounts[Math.floor((amounts.length * 3) / 4)]!;
    const ranged = await searchAll(call, { ...args, amount_min: min, amount_max: max });
    expect(ranged.all.length).toBe(all.filter((o) => o.amount >= min && o.amount <= max).length);
    for (const o of ranged.all) expect(o.amount >= min && o.amount <= max).toBe(true);

    const credits = await searchAll(call, { ...args, direction: "credit" });
    expect(credits.all.length).toBe(all.filter((o) => o.direction === "credit").length);
    expect(credits.all.every((o) => o.direction === "credit")).toBe(true);
  });

  test("reads stored operations only: nothing before a statement is ready, and the bank is not called", async () => {
    const { t, call, accountId } = await agent();
    const before = t.services.sandboxLog.list(accountId).length;
    const r = await call("search_operations", {
      bank_account_id: accountId,
      date_from: "2026-11-01",
      date_to: "2026-11-20",
    });
    expect(ops(r)).toEqual([]);
    expect(t.services.sandboxLog.list(accountId).length).toBe(before);
  });
});

describe("helpers", () => {
  test("ftsQuery quotes every word as an FTS5 string with a prefix star", () => {
    expect(ftsQuery(searchWords("Зарплата плата") as string[])).toBe('"Зарплата"* "плата"*');
    // Longer than the longest prefix index: cut to 8 characters (the matches are checked whole).
    expect(ftsQuery(searchWords("Заработная счёт-фактуре") as string[])).toBe('"Заработн"* "счет-фактуре"*');
    expect(ftsQuery(searchWords('ООО "Рога') as string[])).toBe('"ООО"* """Рога"*');
    expect(searchWords("  -- ** ")).toEqual({ refused: "no_words" });
  });

  test("searchWords leaves out parts of one character at a word's end, and words of no longer part", () => {
    expect(searchWords("1 2 3 4 5 6 7 8 9 0 1 2")).toEqual({ refused: "no_words" });
    expect(searchWords("т.ч. A-1 - я")).toEqual({ refused: "no_words" });
    expect(searchWords("оплата 1 по №15/2 Йошкар-О счёт-а-фактура")).toEqual([
      "оплата",
      "по",
      "№15",
      "Йошкар",
      "счет-а-фактура",
    ]);
    expect(searchWords("ab cd ef gh ij kl mn op")).toHaveLength(8);
    expect(searchWords("ab cd ef gh ij kl mn op qr")).toEqual({ refused: "too_many_words", words: 9 });
    // Short words do not count toward the cap.
    expect(searchWords("ab cd ef gh ij kl mn op 1 2 3 4")).toHaveLength(8);
  });

  test("maskLongNumbers hides any run of 20+ digits in free text", () => {
    expect(maskLongNumbers("на счёт 40702810900000000001 по договору 12")).toBe(
      "на счёт 4070************0001 по договору 12",
    );
    expect(maskLongNumbers("no digits")).toBe("no digits");
  });
});
