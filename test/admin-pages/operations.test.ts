// lanes: sqlite postgres
// The operator's console (decisions §19) through app.handle(): the accounts overview (balance with
// its refresh, the 90-day coverage strip, the newest statement), an account's operations browsed
// with search_operations' filters (the same totals as the agent tool), paging, the CSV of the
// match, the refusals in Russian, and bank logins typed field by field.
import { beforeAll, describe, expect, test } from "bun:test";
import { type Browser, signIn } from "../helpers/admin-browser";
import { makeTestApp, type TestApp } from "../helpers/app";
import { callTool, initSession, readyStatement } from "../mcp/helpers";

interface Row {
  id: string;
  direction: string;
  kopecks: number;
}

/** The operations a page lists (their data attributes). */
function rowsOf(html: string): Row[] {
  return [...html.matchAll(/data-operation-id="([^"]+)" data-direction="([^"]+)" data-kopecks="(\d+)"/g)].map(
    (m) => ({ id: m[1]!, direction: m[2]!, kopecks: Number(m[3]) }),
  );
}

/** The totals line: count, credit and debit in kopecks. */
function totalsOf(html: string): { count: number; credit: number; debit: number } {
  const m =
    /Найдено: (\d+)<\/strong><span> · поступления: ([\d\u00A0,]+)\u00A0₽ · списания: ([\d\u00A0,]+)\u00A0₽/.exec(
      html,
    );
  if (!m) throw new Error("no totals on the page");
  const k = (text: string) => Number(text.replace(/[\u00A0,]/g, ""));
  return { count: Number(m[1]), credit: k(m[2]!), debit: k(m[3]!) };
}

const nextOf = (html: string) => /rel="next" href="([^"]+)"/.exec(html)?.[1]?.replaceAll("&amp;", "&");

let t: TestApp;
let b: Browser;
let accountId: string;
let ops: string;
/** The agent tool's search over the same account, for the same totals. */
let agentSearch: (args: Record<string, unknown>) => Promise<{ count: number; credit: number; debit: number }>;

beforeAll(async () => {
  t = makeTestApp();
  const w = t.fixtures.world({ purpose: "mcp", ops_per_day: 8 });
  accountId = w.account.bank_account_id;
  ops = `/admin/accounts/${accountId}/operations`;
  // 21.10–10.11 stored; the last 30 days (22.10–20.11) lack 11.11–20.11.
  await readyStatement(t, accountId, "2026-10-21", "2026-11-10");
  b = await signIn(t);
  const session = await initSession(t, w.token);
  agentSearch = async (args) => {
    const r = await callTool(t, w.token, session, "search_operations", {
      bank_account_id: accountId,
      ...args,
    });
    const totals = r.structuredContent.totals as { count: number; total_credit: number; total_debit: number };
    return {
      count: totals.count,
      credit: Math.round(totals.total_credit * 100),
      debit: Math.round(totals.total_debit * 100),
    };
  };
}, 60_000);

describe("the operations browser", () => {
  test("opens on the last 30 days: the agent tool's totals, the days without data named, 50 a page", async () => {
    const res = await b.get(ops);
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html).toContain('value="22.10.2026"');
    expect(html).toContain('value="20.11.2026"');
    const totals = totalsOf(html);
    expect(totals).toEqual(await agentSearch({ date_from: "2026-10-22", date_to: "2026-11-20" }));
    expect(totals.count).toBeGreaterThan(100);
    expect(rowsOf(html)).toHaveLength(50);
    expect(html).toContain("нет данных за 11.11.2026\u00A0— 20.11.2026");
    // Dates and amounts the Russian way; the details of each operation are on the page.
    expect(html).toMatch(/<td class="nowrap">\d{2}\.\d{2}\.2026<\/td>/);
    expect(html).toMatch(/[+−]\d{1,3}(\u00A0\d{3})*,\d{2}\u00A0₽/);
    expect(html).toContain("<summary>реквизиты</summary>");
    expect(html).toContain("Плательщик");
  });

  test("every filter of search_operations: the rows match it and the totals are the agent tool's", async () => {
    const period = { date_from: "01.11.2026", date_to: "10.11.2026" };
    const iso = { date_from: "2026-11-01", date_to: "2026-11-10" };
    const page = async (filters: Record<string, string>) => {
      const res = await b.get(`${ops}?${new URLSearchParams({ ...period, ...filters })}`);
      expect(res.status).toBe(200);
      return res.text();
    };

    const credit = await page({ direction: "credit" });
    expect(rowsOf(credit).every((r) => r.direction === "credit")).toBe(true);
    expect(totalsOf(credit)).toEqual(await agentSearch({ ...iso, direction: "credit" }));
    expect(totalsOf(credit).debit).toBe(0);

    const ranged = await page({ amount_min: "1 000,00", amount_max: "50 000" });
    expect(rowsOf(ranged).length).toBeGreaterThan(0);
    expect(rowsOf(ranged).every((r) => r.kopecks >= 100_000 && r.kopecks <= 5_000_000)).toBe(true);
    expect(totalsOf(ranged)).toEqual(await agentSearch({ ...iso, amount_min: 1000, amount_max: 50_000 }));

    // An INN and a word from the first operation on the page.
    const all = await page({});
    const inn = /ИНН (\d{10}|\d{12})</.exec(all)![1]!;
    const byInn = await page({ counterparty_inn: inn });
    expect(totalsOf(byInn)).toEqual(await agentSearch({ ...iso, counterparty_inn: inn }));
    expect(totalsOf(byInn).count).toBeGreaterThan(0);
    expect(totalsOf(byInn).count).toBeLessThan(totalsOf(all).count);

    const byText = await page({ query: "оплата" });
    expect(totalsOf(byText)).toEqual(await agentSearch({ ...iso, query: "оплата" }));
    expect(totalsOf(byText).count).toBeLessThan(totalsOf(all).count);
    // What was typed stays in the form.
    expect(byText).toContain('value="оплата"');
  });

  test("pages walk the whole match once, in order; «В начало» goes back", async () => {
    let href: string | undefined = `${ops}?date_from=21.10.2026&date_to=10.11.2026`;
    const seen: string[] = [];
    let pages = 0;
    let total = 0;
    while (href && pages < 20) {
      const html = await (await b.get(href)).text();
      total = totalsOf(html).count;
      seen.push(...rowsOf(html).map((r) => r.id));
      if (pages > 0) expect(html).toContain("В начало");
      href = nextOf(html);
      pages += 1;
    }
    expect(href).toBeUndefined();
    expect(pages).toBe(Math.ceil(total / 50));
    expect(seen).toHaveLength(total);
    expect(new Set(seen).size).toBe(total);
  });

  test("the match as CSV: the exports' columns, every operation once, amounts as numbers", async () => {
    const query = "date_from=01.11.2026&date_to=10.11.2026&direction=debit";
    const html = await (await b.get(`${ops}?${query}`)).text();
    expect(html).toContain(`${ops}/csv?`);
    const res = await b.get(`${ops}/csv?${query}`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/csv; charset=utf-8");
    expect(res.headers.get("content-disposition")).toMatch(/^attachment; filename="operations_.+\.csv"$/);
    const bytes = new Uint8Array(await res.arrayBuffer());
    expect([...bytes.slice(0, 3)]).toEqual([0xef, 0xbb, 0xbf]); // the byte order mark, for spreadsheets
    const text = new TextDecoder().decode(bytes);
    expect(text.startsWith("doc_date,doc_number,amount,currency,direction,")).toBe(true);
    // Every record is a debit of the period (purposes may hold commas and line breaks: count by date).
    expect(text.match(/\r\n2026-11-(0[1-9]|10),/g)?.length).toBe(totalsOf(html).count);
    expect(text).not.toContain(",credit,");
    // Refused filters are a page, not a file.
    const bad = await b.get(`${ops}/csv?date_from=01.11.2026&date_to=99.11.2026`);
    expect(bad.status).toBe(400);
    expect(bad.headers.get("content-type")).toContain("text/html");
  });

  test("refusals name the form's fields in Russian and keep what was typed", async () => {
    const refused = async (query: string, message: string) => {
      const res = await b.get(`${ops}?${query}`);
      expect(res.status).toBe(400);
      const html = await res.text();
      expect(html).toContain(message);
      return html;
    };
    const bad = await refused("date_from=31.02.2026&date_to=10.11.2026", "Дата «с»: дата в виде дд.мм.гггг");
    expect(bad).toContain('value="31.02.2026"');
    await refused("date_from=2026-11-01&date_to=10.11.2026", "Дата «с»: дата в виде дд.мм.гггг");
    await refused("date_from=10.11.2026&date_to=01.11.2026", "Дата «с» позже даты «по»");
    await refused("date_from=01.01.2026&date_to=10.11.2026", "Период: Период поиска не длиннее 90 дней");
    await refused(
      "date_from=01.11.2026&date_to=10.11.2026&amount_min=5&amount_max=1",
      "Сумма «от» больше суммы «до»",
    );
    await refused("date_from=01.11.2026&date_to=10.11.2026&amount_min=-5", "Сумма «от»: сумма в рублях");
    await refused(
      "date_from=01.11.2026&date_to=10.11.2026&counterparty_inn=123",
      "ИНН контрагента: 10 или 12 цифр",
    );
    await refused("date_from=01.11.2026&date_to=10.11.2026&query=%D0%B0", "Текст: нет слов для поиска");
    await refused("date_from=01.11.2026&date_to=10.11.2026&cursor=bm9wZQ", "Неверная ссылка на страницу");
    expect((await b.get("/admin/accounts/00000000-0000-4000-8000-000000000000/operations")).status).toBe(404);
  });
});

describe("a search over its budget", () => {
  test("is refused on the page, asking to narrow it, and no file is started", async () => {
    // On SQLite 20 candidate rows; on PostgreSQL no time at all.
    const small = makeTestApp({}, "2026-11-20T09:00:00Z", {
      overrides: { searchLimits: { candidateRows: 20, textLookups: 4_000, postgresMs: 0 } },
    });
    const account = small.fixtures.world({ ops_per_day: 8 }).account.bank_account_id;
    await readyStatement(small, account, "2026-11-01", "2026-11-10");
    const browser = await signIn(small);
    const query = "date_from=01.11.2026&date_to=10.11.2026&query=%D1%81%D1%83%D0%B2%D0%B5%D0%BD%D0%B8%D1%80";
    const page = await browser.get(`/admin/accounts/${account}/operations?${query}`);
    expect(page.status).toBe(400);
    expect(await page.text()).toContain("Поиск слишком широк");
    const file = await browser.get(`/admin/accounts/${account}/operations/csv?${query}`);
    expect(file.status).toBe(400);
    expect(await file.text()).toContain("Поиск слишком широк");
  });
});

describe("the accounts overview", () => {
  test("balance with its refresh, the 90-day coverage strip and the newest statement", async () => {
    const before = await (await b.get("/admin/accounts")).text();
    expect(before).toContain("остаток неизвестен");
    // The strip: 23.08–20.11, the 21 stored days covered (fetched on 20.11, after they ended).
    expect(before).toContain("23.08.2026\u00A0— 20.11.2026 · полностью: 21, частично: 0, нет данных: 69");
    expect(before.match(/class="day covered"/g)).toHaveLength(21);
    expect(before).toContain('title="21.10.2026: выписка есть"');
    expect(before).toContain("Последняя: 21.10.2026\u00A0— 10.11.2026");
    expect(before).toContain(`href="/admin/accounts/${accountId}/operations"`);

    const refresh = await b.post(`/admin/accounts/${accountId}/balance/refresh`, { back: "/admin/accounts" });
    expect(refresh.status).toBe(303);
    expect(refresh.headers.get("location")).toBe("/admin/accounts");
    const after = await (await b.get("/admin/accounts")).text();
    expect(after).toMatch(/Остаток счёта \w+: -?\d{1,3}(\u00A0\d{3})*,\d{2}\u00A0₽/);
    expect(after).toMatch(/<div class="amount">-?\d{1,3}(\u00A0\d{3})*,\d{2}\u00A0₽<\/div>/);
    expect(after).toContain("на 20.11.2026 12:00"); // 09:00 UTC in Moscow
    expect(after).not.toContain("устарел");
    expect(t.services.admin.audit.page({ action: "admin.balance.refresh" }).entries[0]?.target).toBe(
      accountId,
    );

    // An hour and a second later the balance is stale (SVC_BALANCE_STALE_SECONDS, 3600).
    t.clock.advance(3_601_000);
    expect(await (await b.get(`/admin/accounts/${accountId}`)).text()).toContain("устарел");
    t.clock.advance(-3_601_000);

    // The account's own page: the same parts, and back to itself after a refresh.
    const own = await b.post(`/admin/accounts/${accountId}/balance/refresh`, {
      back: `/admin/accounts/${accountId}`,
    });
    expect(own.headers.get("location")).toBe(`/admin/accounts/${accountId}`);
    const elsewhere = await b.post(`/admin/accounts/${accountId}/balance/refresh`, {
      back: "https://example.com/",
    });
    expect(elsewhere.headers.get("location")).toBe("/admin/accounts");
  });

  test("a bank login is typed field by field for its bank kind; a missing field is refused", async () => {
    const t2 = makeTestApp();
    const b2 = await signIn(t2);
    const company = t2.fixtures.company();
    const form = {
      company_id: company.company_id,
      bank: "tochka",
      account_number: "40702810938000000001",
      bik: "044525225",
      alias: "tochka",
    };
    const page = await (await b2.get("/admin/accounts")).text();
    expect(page).not.toContain('name="credentials"');
    // A DirectBank login is typed here only to replace one: a new account there has its own form.
    expect(page).not.toContain('value="directbank/login"');
    expect(page).toContain('name="login_tochka_jwt_token"');
    expect(page).toContain('name="login_tochka_oauth_client_secret"');

    const missing = await b2.post("/admin/accounts", {
      ...form,
      login_kind: "tochka/oauth",
      login_tochka_oauth_client_id: "app",
    });
    expect(missing.status).toBe(400);
    expect(await missing.text()).toContain("Заполните поле «Секрет приложения (client_secret)»");
    const wrongBank = await b2.post("/admin/accounts", {
      ...form,
      bank: "sandbox",
      login_kind: "tochka/jwt",
      login_tochka_jwt_token: "x",
    });
    expect(wrongBank.status).toBe(400);
    expect(await wrongBank.text()).toContain("для другого банка");

    const ok = await b2.post("/admin/accounts", {
      ...form,
      login_kind: "tochka/oauth",
      login_tochka_oauth_client_id: "app-id",
      login_tochka_oauth_client_secret: "app-secret",
      // The other kind's fields are ignored.
      login_tochka_jwt_token: "ignored",
    });
    expect(ok.status).toBe(303);
    const account = t2.services.admin.accounts.list()[0]!;
    expect(account.credentials_status).toBe("consent_required");
    const record = t2.services.admin.accounts.find(account.bank_account_id);
    expect(t2.services.connections.read(record.connectionId!)).toEqual({
      kind: "oauth",
      client_id: "app-id",
      client_secret: "app-secret",
    });
    const listed = await (await b2.get("/admin/accounts")).text();
    expect(listed).toContain("Точка");
    expect(listed).not.toContain("app-secret");

    // A new login replaces it: a JWT key.
    const replaced = await b2.post(`/admin/accounts/${account.bank_account_id}/credentials`, {
      login_kind: "tochka/jwt",
      login_tochka_jwt_token: "real.jwt.key",
    });
    expect(replaced.status).toBe(303);
    expect(t2.services.connections.read(record.connectionId!)).toEqual({
      kind: "jwt",
      token: "real.jwt.key",
    });
    expect(t2.services.admin.accounts.list()[0]!.credentials_status).toBe("active");
  });
});
