// lanes: sqlite postgres
// Accounts that keep themselves fresh (decisions §16): switched on through the admin API, svc
// orders the missing days itself (source "sync") in pieces of at most 31 days, oldest first, then
// each interval the days from the last covered one to today; bank refusals back it off; the
// coverage calls (REST and admin) answer what the agent tools compute.
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import type { StatementRow } from "../../src/statements/repository";
import { json, makeTestApp, type TestApp } from "../helpers/app";
import { expectError } from "../helpers/envelope";
import { parsePrometheus, sampleValue } from "../helpers/prometheus";
import { ROOT } from "../helpers/server";

const HOUR = 3_600_000;
const METRICS_TOKEN = "metrics-scrape-token-0123";

interface SyncView {
  bank_account_id: string;
  enabled: boolean;
  since: string;
  interval_minutes: number;
  last_run_at: string | null;
  next_run_at: string | null;
  last_error: string | null;
}

const range = (date_from: string, date_to: string) => ({ date_from, date_to });

async function putSync(t: TestApp, id: string, body: unknown) {
  return t.admin("PUT", `/bank-accounts/${id}/sync`, body);
}

async function enable(t: TestApp, id: string, body: Record<string, unknown> = {}): Promise<SyncView> {
  const res = await putSync(t, id, { enabled: true, ...body });
  expect(res.status).toBe(200);
  return json<SyncView>(res);
}

/** One pass of the sync, the bank requests it sends, and one poll pass (the sandbox is ready then). */
async function syncPass(t: TestApp): Promise<number> {
  const ordered = await t.services.syncRunner.runOnce();
  await t.services.poller.idle();
  await t.services.poller.tick();
  await t.services.poller.idle();
  return ordered;
}

async function bankRequests(t: TestApp, id: string) {
  const res = await t.admin("GET", `/sandbox/requests?bank_account_id=${id}`);
  const { requests } = await json<{ requests: { kind: string; date_from: string; date_to: string }[] }>(res);
  return requests
    .filter((r) => r.kind === "statement_request")
    .map((r) => range(r.date_from, r.date_to))
    .sort((a, b) => (a.date_from < b.date_from ? -1 : a.date_from > b.date_from ? 1 : 0));
}

function syncWorld(bank = "sandbox") {
  const t = makeTestApp({ SVC_METRICS_TOKEN: METRICS_TOKEN });
  const company = t.fixtures.company();
  const account = t.fixtures.account(company.company_id, bank);
  const id = account.bank_account_id;
  const token = t.fixtures.token(company.company_id, {
    accounts: [{ bank_account_id: id, allow_read_statements: true }],
  }).token;
  return { t, id, token, companyId: company.company_id };
}

describe("sync settings", () => {
  test("off until switched on; GET shows the defaults, PUT what was set", async () => {
    const { t, id } = syncWorld();
    const before = await json<SyncView>(await t.admin("GET", `/bank-accounts/${id}/sync`));
    expect(before).toEqual({
      bank_account_id: id,
      enabled: false,
      since: "2026-08-22",
      interval_minutes: 60,
      last_run_at: null,
      next_run_at: null,
      last_error: null,
    });
    const on = await enable(t, id, { since: "2026-11-01", interval_minutes: 30 });
    expect(on).toMatchObject({ enabled: true, since: "2026-11-01", interval_minutes: 30, last_error: null });
    // Switched on, it runs at once (the answer shows it due), then every interval.
    expect(on.next_run_at).toBe("2026-11-20T09:00:00.000Z");
    expect(await json<SyncView>(await t.admin("GET", `/bank-accounts/${id}/sync`))).toEqual({
      ...on,
      last_run_at: "2026-11-20T09:00:00.000Z",
      next_run_at: "2026-11-20T09:30:00.000Z",
    });
    const off = await json<SyncView>(await putSync(t, id, { enabled: false }));
    expect(off).toMatchObject({
      enabled: false,
      since: "2026-11-01",
      interval_minutes: 30,
      next_run_at: null,
    });
    const audit = await json<{ entries: { action: string; target: string }[] }>(
      await t.admin("GET", "/audit-log?action=admin.account.sync"),
    );
    expect(audit.entries.map((e) => e.target)).toEqual([id, id]);
  });

  test("bad input is 400 validation_error naming the field; sandbox_no_statements is 501", async () => {
    const { t, id, companyId } = syncWorld();
    const refused = async (body: unknown, field: string, account = id) => {
      const res = await putSync(t, account, body);
      const error = await expectError(res, 400, "validation_error");
      expect(error.field).toBe(field);
    };
    await refused({ enabled: true, since: "2026-11-21" }, "since");
    await refused({ enabled: true, since: "2023-11-19" }, "since");
    await refused({ enabled: true, since: "2026-02-30" }, "since");
    await refused({ enabled: true, interval_minutes: 4 }, "interval_minutes");
    await refused({ enabled: true, interval_minutes: 1441 }, "interval_minutes");
    await refused({ since: "2026-11-01" }, "enabled");
    expect((await putSync(t, id, { enabled: true, since: "2023-11-20", interval_minutes: 5 })).status).toBe(
      200,
    );
    expect((await putSync(t, id, { enabled: true, interval_minutes: 1440 })).status).toBe(200);
    const file = t.fixtures.account(companyId, "file").bank_account_id;
    await refused({ enabled: true }, "enabled", file);
    const none = t.fixtures.account(companyId, "sandbox_no_statements").bank_account_id;
    await expectError(await putSync(t, none, { enabled: true }), 501, "bank_not_supported");
    await expectError(await putSync(t, crypto.randomUUID(), { enabled: true }), 404, "not_found");
  });
});

describe("sync runs", () => {
  test("the missing days in pieces of at most 31 days, oldest first, each once; then today again each interval", async () => {
    const { t, id } = syncWorld();
    await enable(t, id);
    expect(await syncPass(t)).toBe(3);
    expect(await bankRequests(t, id)).toEqual([
      range("2026-08-22", "2026-09-21"),
      range("2026-09-22", "2026-10-22"),
      range("2026-10-23", "2026-11-20"),
    ]);
    // Ordinary statements: listed with their source, audited as statement.sync.
    const page = await json<{ statements: { source: string; status: string; date_from: string }[] }>(
      await t.admin("GET", `/statements?bank_account_id=${id}`),
    );
    expect(page.statements.map((s) => [s.source, s.status])).toEqual([
      ["sync", "ready"],
      ["sync", "ready"],
      ["sync", "ready"],
    ]);
    const audit = await json<{ entries: { actor: string }[] }>(
      await t.admin("GET", "/audit-log?action=statement.sync"),
    );
    expect(audit.entries.map((e) => e.actor)).toEqual(["system", "system", "system"]);

    // Not due again before the interval: nothing is ordered twice.
    expect(await syncPass(t)).toBe(0);
    expect(t.services.syncs.runAccount(id)).toEqual([]);
    // An interval later only today, which is not final yet.
    t.clock.advance(HOUR);
    expect(await syncPass(t)).toBe(1);
    // The next day: yesterday (fetched during it, partial) and today, in one piece.
    t.clock.set("2026-11-21T06:00:00Z");
    expect(await syncPass(t)).toBe(1);
    const requests = await bankRequests(t, id);
    expect(requests.slice(-2)).toEqual([
      range("2026-11-20", "2026-11-20"),
      range("2026-11-20", "2026-11-21"),
    ]);
    expect(requests).toHaveLength(5);
    const view = await json<SyncView>(await t.admin("GET", `/bank-accounts/${id}/sync`));
    expect(view.last_run_at).toBe("2026-11-21T06:00:00.000Z");
    expect(view.next_run_at).toBe("2026-11-21T07:00:00.000Z");
  });

  test("days held by an ordered or processing statement are not ordered again", async () => {
    const { t, id, token } = syncWorld();
    const order = await t.request("POST", "/api/v1/integration/statements", {
      token,
      body: { bank_account_id: id, date_from: "2026-11-01", date_to: "2026-11-10", external_id: "own" },
    });
    expect(order.status).toBe(201);
    await t.services.poller.idle();
    await t.services.poller.tick();
    await t.services.poller.idle();
    await enable(t, id, { since: "2026-10-25" });
    expect(await syncPass(t)).toBe(2);
    expect(await bankRequests(t, id)).toEqual([
      range("2026-10-25", "2026-10-31"),
      range("2026-11-01", "2026-11-10"),
      range("2026-11-11", "2026-11-20"),
    ]);
  });

  test("bank refusals back off 2, 4 … intervals and show last_error", async () => {
    const { t, id } = syncWorld("sandbox_failing");
    await enable(t, id, { since: "2026-11-15" });
    expect(await syncPass(t)).toBe(1);
    let view = await json<SyncView>(await t.admin("GET", `/bank-accounts/${id}/sync`));
    expect(view.last_error).toBeString();
    expect(view.next_run_at).toBe("2026-11-20T11:00:00.000Z");
    t.clock.advance(HOUR);
    expect(await syncPass(t)).toBe(0);
    t.clock.advance(HOUR);
    expect(await syncPass(t)).toBe(1);
    view = await json<SyncView>(await t.admin("GET", `/bank-accounts/${id}/sync`));
    expect(view.next_run_at).toBe("2026-11-20T15:00:00.000Z");
  });

  test("a ready piece of a later run clears last_error and the backoff; one of an earlier run does not", async () => {
    const { t, id } = syncWorld("sandbox_failing");
    await enable(t, id, { since: "2026-11-20" });
    await syncPass(t);
    const piece = (run: number) =>
      ({ bank_account_id: id, source: "sync", sync_key: `${run}/2026-11-20/2026-11-20` }) as StatementRow;
    t.services.syncs.pieceSettled(piece(1), { status: "ready" });
    expect((await json<SyncView>(await t.admin("GET", `/bank-accounts/${id}/sync`))).last_error).toBeString();
    t.services.syncs.pieceSettled(piece(2), { status: "ready" });
    expect((await json<SyncView>(await t.admin("GET", `/bank-accounts/${id}/sync`))).last_error).toBeNull();
    // No failures left: the next run an interval after the last, as before any refusal…
    t.clock.advance(HOUR);
    expect(await syncPass(t)).toBe(1);
    // …whose refusal is the first in a row again: two intervals, not four.
    const view = await json<SyncView>(await t.admin("GET", `/bank-accounts/${id}/sync`));
    expect(view.next_run_at).toBe("2026-11-20T12:00:00.000Z");
  });

  test("at most a day between runs however many refusals", async () => {
    const { t, id } = syncWorld("sandbox_failing");
    await enable(t, id, { since: "2026-11-19", interval_minutes: 1440 });
    expect(await syncPass(t)).toBe(1);
    const view = await json<SyncView>(await t.admin("GET", `/bank-accounts/${id}/sync`));
    expect(view.next_run_at).toBe("2026-11-21T09:00:00.000Z");
  });
});

describe("coverage", () => {
  test("REST and admin answer the same coverage as the agent tools compute", async () => {
    const { t, id, token } = syncWorld();
    await enable(t, id, { since: "2026-11-01" });
    await syncPass(t);
    const expected = {
      bank_account_id: id,
      date_from: "2026-10-30",
      date_to: "2026-11-21",
      complete: false,
      covered: [range("2026-11-01", "2026-11-19")],
      partial: [{ date: "2026-11-20", as_of: "2026-11-20T09:00:00.000Z" }],
      missing: [range("2026-10-30", "2026-10-31"), range("2026-11-21", "2026-11-21")],
    };
    const query = "date_from=2026-10-30&date_to=2026-11-21";
    const rest = await t.request("GET", `/api/v1/integration/bank-accounts/${id}/coverage?${query}`, {
      token,
    });
    expect(rest.status).toBe(200);
    expect(await json(rest)).toEqual(expected);
    expect(await json(await t.admin("GET", `/bank-accounts/${id}/coverage?${query}`))).toEqual(expected);
  });

  test("bad periods are validation_error; other accounts and tokens are refused", async () => {
    const { t, id, token, companyId } = syncWorld();
    const get = (q: string, account = id, tk = token) =>
      t.request("GET", `/api/v1/integration/bank-accounts/${account}/coverage?${q}`, { token: tk });
    const field = async (res: Response, name: string) =>
      expect((await expectError(res, 400, "validation_error")).field).toBe(name);
    await field(await get("date_from=2025-11-01&date_to=2026-11-02"), "date_to");
    await field(await get("date_from=2026-11-02&date_to=2026-11-01"), "date_from");
    await field(await get("date_from=2026-13-01&date_to=2026-11-01"), "date_from");
    expect((await get("date_from=2025-11-20&date_to=2026-11-20")).status).toBe(200);
    const other = t.fixtures.account(companyId).bank_account_id;
    await expectError(await get("date_from=2026-11-01&date_to=2026-11-02", other), 403, "forbidden_account");
    await expectError(
      await get("date_from=2026-11-01&date_to=2026-11-02", "not-a-uuid"),
      400,
      "invalid request body",
    );
    const agent = t.fixtures.token(companyId, {
      purpose: "mcp",
      accounts: [{ bank_account_id: id, allow_read_statements: true }],
    }).token;
    await expectError(
      await get("date_from=2026-11-01&date_to=2026-11-02", id, agent),
      403,
      "forbidden_purpose",
    );
    await expectError(
      await get("date_from=2026-11-01&date_to=2026-11-02", id, "svc_test_nope"),
      401,
      "invalid_token_format",
    );
    await expectError(
      await t.admin(
        "GET",
        `/bank-accounts/${crypto.randomUUID()}/coverage?date_from=2026-11-01&date_to=2026-11-02`,
      ),
      404,
      "not_found",
    );
  });
});

describe("svc_sync_lag_seconds", () => {
  test("per syncing account: now minus the end of its newest final day", async () => {
    const { t, id } = syncWorld();
    await enable(t, id, { since: "2026-11-01" });
    const scrape = async () =>
      parsePrometheus(await (await t.request("GET", "/metrics", { token: METRICS_TOKEN })).text());
    // Nothing final yet: counted from the start of `since` (Moscow midnight, 21:00 UTC before).
    expect(sampleValue(await scrape(), "svc_sync_lag_seconds", { bank_account_id: id })).toBe(
      (Date.parse("2026-11-20T09:00:00Z") - Date.parse("2026-10-31T21:00:00Z")) / 1000,
    );
    await syncPass(t);
    // 2026-11-19 is final: it ended at 21:00 UTC, twelve hours ago.
    const samples = await scrape();
    expect(sampleValue(samples, "svc_sync_lag_seconds", { bank_account_id: id })).toBe(12 * 3600);
    // The alert rules in ops/ watch metrics this scrape has.
    const rules = Bun.YAML.parse(await Bun.file(join(ROOT, "ops/alerts.yml")).text()) as {
      groups: { rules: { alert: string; expr: string }[] }[];
    };
    const exprs = rules.groups.flatMap((g) => g.rules.map((r) => r.expr));
    expect(exprs.some((e) => e.startsWith("svc_sync_lag_seconds"))).toBe(true);
    for (const expr of exprs) {
      const metric = /^[a-z_]+/.exec(expr)?.[0] ?? "";
      expect(samples.some((x) => x.name === metric)).toBe(true);
    }
  });
});
