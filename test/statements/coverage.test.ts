// lanes: sqlite postgres
// Day coverage in search_operations (decisions §15): which days of the asked period ready
// statements hold, fetched after the day ended (covered), only during it (partial), or not at all
// (missing), in the business time zone; imports count, orders still processing or failed do not.
import { describe, expect, test } from "bun:test";
import { json, makeTestApp, type TestApp } from "../helpers/app";
import { callTool, initSession, readyStatement } from "../mcp/helpers";
import { bankFile, importFile } from "./import-support";

interface Coverage {
  complete: boolean;
  covered: { date_from: string; date_to: string }[];
  partial: { date: string; as_of: string }[];
  missing: { date_from: string; date_to: string }[];
}

function sandboxAgent(t: TestApp, bank = "sandbox") {
  const company = t.fixtures.company();
  const account = t.fixtures.account(company.company_id, bank);
  const accountId = account.bank_account_id;
  const token = t.fixtures.token(company.company_id, {
    purpose: "mcp",
    accounts: [{ bank_account_id: accountId, allow_read_statements: true }],
  }).token;
  // A session of its own per call: the tests move the clock past a session's lifetime.
  const search = async (args: Record<string, unknown>) =>
    callTool(t, token, await initSession(t, token), "search_operations", {
      bank_account_id: accountId,
      ...args,
    });
  const coverage = async (from: string, to: string) => {
    const r = await search({ date_from: from, date_to: to });
    expect(r.isError).toBe(false);
    return r.structuredContent.coverage as Coverage;
  };
  return { accountId, search, coverage };
}

const range = (date_from: string, date_to: string) => ({ date_from, date_to });

describe("search_operations coverage", () => {
  test("a period fully held by a statement fetched after it ended is complete, on every page", async () => {
    const t = makeTestApp();
    const a = sandboxAgent(t);
    await readyStatement(t, a.accountId, "2026-11-01", "2026-11-10");
    expect(await a.coverage("2026-11-01", "2026-11-10")).toEqual({
      complete: true,
      covered: [range("2026-11-01", "2026-11-10")],
      partial: [],
      missing: [],
    });
    const first = await a.search({ date_from: "2026-11-03", date_to: "2026-11-08", limit: 1 });
    const cursor = first.structuredContent.next_cursor as string;
    expect(cursor).toBeString();
    const second = await a.search({ date_from: "2026-11-03", date_to: "2026-11-08", limit: 1, cursor });
    for (const page of [first, second]) {
      expect(page.structuredContent.coverage).toEqual({
        complete: true,
        covered: [range("2026-11-03", "2026-11-08")],
        partial: [],
        missing: [],
      });
    }
  });

  test("gaps: missing ranges at both ends and between statements", async () => {
    const t = makeTestApp();
    const a = sandboxAgent(t);
    await readyStatement(t, a.accountId, "2026-11-03", "2026-11-05");
    await readyStatement(t, a.accountId, "2026-11-08", "2026-11-09");
    // Overlapping and adjacent statements make one range.
    await readyStatement(t, a.accountId, "2026-11-09", "2026-11-10");
    expect(await a.coverage("2026-11-01", "2026-11-13")).toEqual({
      complete: false,
      covered: [range("2026-11-03", "2026-11-05"), range("2026-11-08", "2026-11-10")],
      partial: [],
      missing: [
        range("2026-11-01", "2026-11-02"),
        range("2026-11-06", "2026-11-07"),
        range("2026-11-11", "2026-11-13"),
      ],
    });
    // Nothing at all.
    expect(await a.coverage("2026-10-01", "2026-10-02")).toEqual({
      complete: false,
      covered: [],
      partial: [],
      missing: [range("2026-10-01", "2026-10-02")],
    });
  });

  test("today fetched today is partial as of the fetch; a statement fetched the next day covers it", async () => {
    // 09:00 UTC is 12:00 in Moscow, on 2026-11-20.
    const t = makeTestApp({}, "2026-11-20T09:00:00Z");
    const a = sandboxAgent(t);
    await readyStatement(t, a.accountId, "2026-11-18", "2026-11-20");
    expect(await a.coverage("2026-11-18", "2026-11-20")).toEqual({
      complete: false,
      covered: [range("2026-11-18", "2026-11-19")],
      partial: [{ date: "2026-11-20", as_of: "2026-11-20T09:00:00.000Z" }],
      missing: [],
    });

    // Later the same day: a newer fetch moves as_of, the day stays partial.
    t.clock.set("2026-11-20T15:00:00Z");
    await readyStatement(t, a.accountId, "2026-11-20", "2026-11-20");
    expect((await a.coverage("2026-11-20", "2026-11-20")).partial).toEqual([
      { date: "2026-11-20", as_of: "2026-11-20T15:00:00.000Z" },
    ]);

    // The next morning in Moscow.
    t.clock.set("2026-11-21T06:00:00Z");
    await readyStatement(t, a.accountId, "2026-11-20", "2026-11-21");
    // Days after today are missing: nothing can hold them yet.
    expect(await a.coverage("2026-11-18", "2026-11-23")).toEqual({
      complete: false,
      covered: [range("2026-11-18", "2026-11-20")],
      partial: [{ date: "2026-11-21", as_of: "2026-11-21T06:00:00.000Z" }],
      missing: [range("2026-11-22", "2026-11-23")],
    });
  });

  test("a day ends in the business time zone: 23:30 UTC is already the next day in Moscow", async () => {
    const moscow = makeTestApp({}, "2026-11-19T23:30:00Z");
    const m = sandboxAgent(moscow);
    await readyStatement(moscow, m.accountId, "2026-11-18", "2026-11-19");
    expect(await m.coverage("2026-11-18", "2026-11-19")).toEqual({
      complete: true,
      covered: [range("2026-11-18", "2026-11-19")],
      partial: [],
      missing: [],
    });

    const utc = makeTestApp({ SVC_TIMEZONE: "UTC" }, "2026-11-19T23:30:00Z");
    const u = sandboxAgent(utc);
    await readyStatement(utc, u.accountId, "2026-11-18", "2026-11-19");
    expect(await u.coverage("2026-11-18", "2026-11-19")).toEqual({
      complete: false,
      covered: [range("2026-11-18", "2026-11-18")],
      partial: [{ date: "2026-11-19", as_of: "2026-11-19T23:30:00.000Z" }],
      missing: [],
    });
  });

  test("statements still processing or failed hold no day", async () => {
    const t = makeTestApp();
    const a = sandboxAgent(t);
    // Ordered, never polled: processing.
    const processing = t.services.statements.orderFromUi(a.accountId, "2026-11-01", "2026-11-05");
    expect(processing.status).toBe("processing");
    const nothing = {
      complete: false,
      covered: [],
      partial: [],
      missing: [range("2026-11-01", "2026-11-05")],
    };
    expect(await a.coverage("2026-11-01", "2026-11-05")).toEqual(nothing);

    const f = sandboxAgent(t, "sandbox_failing");
    const failed = await readyStatement(t, f.accountId, "2026-11-01", "2026-11-05");
    expect(t.services.statementRepo.findById(failed)?.status).toBe("failed");
    expect(await f.coverage("2026-11-01", "2026-11-05")).toEqual(nothing);
  });

  test("an imported 1C file covers its period, however long", async () => {
    const t = makeTestApp({}, "2026-11-20T09:00:00Z");
    const company = t.fixtures.company();
    const account = t.fixtures.account(company.company_id, "file");
    const accountId = account.bank_account_id;
    const grant = [{ bank_account_id: accountId, allow_read_statements: true }];
    const integration = t.fixtures.token(company.company_id, { mode: "live", accounts: grant }).token;
    const agent = t.fixtures.token(company.company_id, {
      purpose: "mcp",
      mode: "live",
      accounts: grant,
    }).token;
    const number = t.services.accounts.findById(accountId)?.accountNumber as string;

    // Three years and a day, leap day included.
    const file = bankFile(number, "2023-11-01", "2026-11-01", { opsPerDay: 1 });
    const res = await importFile(t, integration, accountId, "three-years", file.bytes);
    expect(res.status).toBe(201);
    expect((await json<{ status: string }>(res)).status).toBe("ready");
    const days = t.db
      .query<{ n: number }, [string]>("SELECT count(*) AS n FROM statement_days WHERE bank_account_id = ?")
      .get(accountId)!.n;
    expect(days).toBe(365 + 366 + 365 + 1);

    const session = await initSession(t, agent);
    const search = (from: string, to: string) =>
      callTool(t, agent, session, "search_operations", {
        bank_account_id: accountId,
        date_from: from,
        date_to: to,
      });
    expect((await search("2024-02-01", "2024-03-31")).structuredContent.coverage).toEqual({
      complete: true,
      covered: [range("2024-02-01", "2024-03-31")],
      partial: [],
      missing: [],
    });
    expect((await search("2026-10-20", "2026-11-20")).structuredContent.coverage).toEqual({
      complete: false,
      covered: [range("2026-10-20", "2026-11-01")],
      partial: [],
      missing: [range("2026-11-02", "2026-11-20")],
    });
  });
});
