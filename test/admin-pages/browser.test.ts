// lanes: sqlite
// The admin pages in a real browser: Debian's Chromium driven by playwright-core against the real
// server (`svc serve` on a free port). `make test` installs Chromium first (scripts/ensure-chromium.sh).
// When Chromium is missing or cannot start, this file fails with the reason; it never skips.
// Every page is also visited once at 1024, 1366 and 1920 px: nothing wider than the window or its
// card, no word broken inside, every word of the interface Russian; screenshots of each page at
// each width go to test/artifacts/ (git-ignored), named admin-<page>-<width>.png.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { type Browser, chromium, type Page } from "playwright-core";
import { withAccountKey } from "../../src/formats/validators";
import { ADMIN_TOKEN } from "../helpers/app";
import { freePort, ROOT, type RunningProcess, startServe, tempDir } from "../helpers/server";
import { pkce, REDIRECT } from "../oauth/support";
import { BANK_BIC, type FakeDirectBank, startFakeDirectBank } from "../support/fake-directbank";

const CHROMIUM = "/usr/bin/chromium";
const ARTIFACTS = join(ROOT, "test/artifacts");
// New tokens default to test mode: the accounts here are sandbox accounts.
const RAW_TOKEN_RE = /^svc_test_[0-9A-Za-z]{40}$/;

let browser: Browser;
let server: RunningProcess;
let accountId: string;
let dataDir: string | undefined;
/** What the sweep of every page visits: a busy account with statements, a token of the company. */
let busyAccountId: string;
let busyCompanyId: string;
let sweepTokenId: string;
/** An agent host's sign-in waiting for the operator: its consent page. */
let consentPath: string;
/** A bank that speaks 1C:DirectBank, whose settings name two accounts (the «Счета в банке» page). */
let directbank: FakeDirectBank | undefined;
let directbankAccountId: string;

async function launch(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`${CHROMIUM} is missing: run scripts/ensure-chromium.sh (make test does) to install it`);
  }
  try {
    return await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: [
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
      ],
    });
  } catch (error) {
    throw new Error(`Chromium at ${CHROMIUM} could not be launched: ${(error as Error).message}`);
  }
}

async function shot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: join(ARTIFACTS, `admin-${name}.png`), fullPage: true });
}

beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  browser = await launch();
  dataDir = tempDir("svc-admin-pages-");
  // Statements are fetched at the next poll: every 100 ms here.
  // Its own address known before it starts: an agent host's sign-in names it (the consent page).
  const port = freePort();
  server = await startServe({
    dbPath: join(dataDir, "svc.db"),
    env: {
      SVC_BANK_POLL_INTERVAL_MS: "100",
      SVC_PORT: String(port),
      SVC_PUBLIC_URL: `http://127.0.0.1:${port}`,
      // Bank logins are sealed with it (the DirectBank account).
      SVC_SECRET_KEY: Buffer.alloc(32, 7).toString("base64"),
    },
  });
  const company = (await (
    await server.admin("POST", "/companies", { name: "ООО Браузер", inn: "7719617469" })
  ).json()) as { company_id: string };
  const account = (await (
    await server.admin("POST", "/bank-accounts", {
      company_id: company.company_id,
      bank: "sandbox",
      account_number: "40702810938000000001",
      bik: "044525225",
      alias: "main",
    })
  ).json()) as { bank_account_id: string };
  accountId = account.bank_account_id;
  await seedTheSweep();
}, 60_000);

const post = async <T>(path: string, body: unknown): Promise<T> => {
  const res = await server.admin("POST", path, body);
  if (res.status >= 300) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
};

/**
 * What makes the pages full: a company whose name holds quotes, accounts of several banks, two
 * ready statements of 31 days and one that fails, tokens with accounts, addresses and limits.
 */
async function seedTheSweep(): Promise<void> {
  const company = await post<{ company_id: string }>("/companies", {
    name: "ООО «Василёк и партнёры»",
    inn: "7707083893",
    kpp: "773601001",
  });
  busyCompanyId = company.company_id;
  const account = (bank: string, n: number, alias: string, sandbox?: object) =>
    post<{ bank_account_id: string }>("/bank-accounts", {
      company_id: company.company_id,
      bank,
      account_number: withAccountKey(`4070281090000000${String(n).padStart(4, "0")}`, "044525225"),
      bik: "044525225",
      alias,
      sandbox,
    });
  busyAccountId = (await account("sandbox", 11, "operations", { ops_per_day: 12 })).bank_account_id;
  const failing = (await account("sandbox_failing", 12, "failing")).bank_account_id;
  const file = (await account("file", 13, "files")).bank_account_id;
  // Two months back from yesterday in Moscow; the statements page shows both and a failure.
  const day = (back: number) =>
    new Date(Date.now() + 3 * 3_600_000 - back * 86_400_000).toISOString().slice(0, 10);
  for (const [from, to] of [
    [day(62), day(32)],
    [day(31), day(1)],
  ])
    await post("/statements", { bank_account_id: busyAccountId, date_from: from, date_to: to });
  await post("/statements", { bank_account_id: failing, date_from: day(3), date_to: day(1) });
  await post(`/bank-accounts/${busyAccountId}/balance/refresh`, {});
  const grants = [busyAccountId, failing, file].map((id) => ({
    bank_account_id: id,
    allow_read_statements: true,
  }));
  const token = await post<{ api_token_id: string }>("/tokens", {
    company_id: company.company_id,
    name: "Бухгалтерия «Василька»",
    purpose: "integration",
    mode: "live",
    scope_read_statements: true,
    accounts: grants,
    allowed_ips: ["10.0.0.0/8", "192.168.100.0/24", "2001:db8::/32"],
    rate_limit_per_minute: 600,
  });
  sweepTokenId = token.api_token_id;
  await post("/tokens", {
    company_id: company.company_id,
    name: "Агент финансового директора",
    purpose: "mcp",
    mode: "test",
    scope_read_statements: true,
    accounts: grants.slice(0, 1),
  });
  consentPath = await pendingConsent("Claude для «Василька»");
  directbank = startFakeDirectBank();
  directbank.addUser("statements", "s3cret");
  const numbers = [
    withAccountKey("40702810900000000777", BANK_BIC),
    withAccountKey("40702840100000000778", BANK_BIC),
  ];
  for (const number of numbers) directbank.addAccount(number, { opening: 0, operations: [] });
  directbankAccountId = (
    await post<{ bank_account_id: string }>("/bank-accounts", {
      company_id: company.company_id,
      bank: "directbank",
      account_number: numbers[0],
      bik: BANK_BIC,
      alias: "directbank",
      credentials: {
        kind: "directbank",
        settings: directbank.settingsXml({ accounts: numbers }),
        login: "statements",
        password: "s3cret",
      },
    })
  ).bank_account_id;
  // Until every statement has its answer from the bank.
  for (let i = 0; i < 200; i++) {
    const res = await server.admin("GET", "/statements");
    const { statements } = (await res.json()) as { statements: { status: string }[] };
    if (statements.length === 3 && statements.every((st) => st.status !== "processing")) return;
    await Bun.sleep(100);
  }
  throw new Error("the statements did not become ready");
}

/** An agent host registers and asks to sign in: the consent page the operator is sent to. */
async function pendingConsent(clientName: string): Promise<string> {
  const registered = await fetch(`${server.url}/oauth/register`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      client_name: clientName,
      redirect_uris: [REDIRECT],
      token_endpoint_auth_method: "none",
    }),
  });
  if (registered.status !== 201) throw new Error(`register: ${registered.status} ${await registered.text()}`);
  const { client_id } = (await registered.json()) as { client_id: string };
  const query = new URLSearchParams({
    response_type: "code",
    client_id,
    redirect_uri: REDIRECT,
    code_challenge: pkce().challenge,
    code_challenge_method: "S256",
    scope: "statements:read",
    resource: `${server.url}/mcp`,
    state: "sweep",
  });
  const res = await fetch(`${server.url}/oauth/authorize?${query}`, { redirect: "manual" });
  const location = res.headers.get("location");
  if (res.status !== 302 && res.status !== 303)
    throw new Error(`authorize: ${res.status} ${await res.text()}`);
  if (!location?.startsWith("/admin/oauth/consent/"))
    throw new Error(`authorize sent the browser to ${location}`);
  return location;
}

afterAll(async () => {
  await browser?.close();
  await directbank?.stop();
  await server?.stop();
  // The exit-time cleanup of tempDir does not run reliably once Chromium has been driven here.
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

describe("admin pages in Chromium", () => {
  test("sign in, create an agent token (shown once), use it, revoke it, find both in the audit log and the chart", async () => {
    const context = await browser.newContext({ viewport: { width: 1360, height: 900 } });
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: server.url });
    const page = await context.newPage();
    const cspErrors: string[] = [];
    page.on("console", (m) => {
      if (m.type() === "error" && /Content Security Policy/i.test(m.text())) cspErrors.push(m.text());
    });

    // Any page without a session lands on the sign-in form.
    await page.goto(`${server.url}/admin/tokens`);
    expect(new URL(page.url()).pathname).toBe("/admin/login");
    await page.fill('input[name="token"]', "wrong-token-wrong-token-wrong-token");
    await page.click('button[type="submit"]');
    expect(await page.textContent(".flash.error")).toContain("Неверный токен администратора");
    await page.fill('input[name="token"]', ADMIN_TOKEN);
    await Promise.all([page.waitForURL("**/admin/tokens"), page.click('button[type="submit"]')]);
    const cookies = await context.cookies();
    const session = cookies.find((c) => c.name === "svc_admin_session");
    expect(session).toMatchObject({ httpOnly: true, sameSite: "Strict", path: "/admin", secure: false });
    await shot(page, "1-tokens");

    // The agent form: no payment rights anywhere.
    await page.selectOption('select[name="purpose"]', "mcp");
    await Promise.all([
      page.waitForURL("**/admin/tokens/new?**"),
      page.click('form[action="/admin/tokens/new"] button'),
    ]);
    expect(await page.locator('input[name="scope_send_payments"]').count()).toBe(0);
    expect(await page.locator('input[name^="send:"]').count()).toBe(0);
    await page.fill('input[name="name"]', "agent-in-browser");
    await page.check(`input[name="read:${accountId}"]`);
    await page.click('button:has-text("Создать токен")');
    await page.waitForSelector("#new-token");
    const raw = await page.inputValue("#new-token");
    expect(raw).toMatch(RAW_TOKEN_RE);
    await page.click('button[data-copy="new-token"]');
    await page.locator("[data-copy]", { hasText: "Скопировано" }).waitFor();
    // Runs in the page (the project does not load DOM types); a function, since the CSP forbids eval.
    const clipboard = await page.evaluate(() =>
      (
        globalThis as unknown as { navigator: { clipboard: { readText(): Promise<string> } } }
      ).navigator.clipboard.readText(),
    );
    expect(clipboard).toBe(raw);
    expect(page.url()).not.toContain(raw);
    await shot(page, "2-token-created");

    // Reloading the response does not show it again (nor create a second token).
    await page.reload();
    expect(await page.content()).not.toContain(raw);
    await page.goto(`${server.url}/admin/tokens`);
    const list = await page.content();
    expect(list).not.toContain(raw);
    expect(list).toContain(`${raw.slice(0, 13)}…`);
    expect(await page.locator("tr", { hasText: "agent-in-browser" }).count()).toBe(1);

    // The agent uses the token: its calls feed the chart.
    const rpc = (body: object, sessionId?: string) =>
      fetch(`${server.url}/api/v1/mcp`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${raw}`,
          "content-type": "application/json",
          ...(sessionId ? { "mcp-session-id": sessionId } : {}),
        },
        body: JSON.stringify(body),
      });
    const init = await rpc({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: {
        protocolVersion: "2025-06-18",
        capabilities: {},
        clientInfo: { name: "browser-test", version: "1" },
      },
    });
    expect(init.status).toBe(200);
    const sessionId = init.headers.get("mcp-session-id")!;
    expect((await rpc({ jsonrpc: "2.0", id: 2, method: "tools/list" }, sessionId)).status).toBe(200);

    // Revoke from the list: first the confirmation (a page of its own; nothing is revoked yet).
    await Promise.all([
      page.waitForURL("**/revoke"),
      page.locator("tr", { hasText: "agent-in-browser" }).locator('button:has-text("Отозвать")').click(),
    ]);
    expect(await page.textContent("h1")).toBe("Отозвать токен?");
    expect((await rpc({ jsonrpc: "2.0", id: 3, method: "ping" }, sessionId)).status).toBe(200);
    await Promise.all([page.waitForURL("**/admin/tokens"), page.click('button:has-text("Да, отозвать")')]);
    expect(await page.textContent(".flash.ok")).toContain("отозван");
    expect(await page.locator("tr", { hasText: "agent-in-browser" }).textContent()).toContain("отозван");
    expect((await rpc({ jsonrpc: "2.0", id: 4, method: "ping" }, sessionId)).status).toBe(401);

    // The audit log holds both actions, and the chart has the token's line.
    await page.goto(`${server.url}/admin/audit-log`);
    const actions = await page.locator("#audit td.mono:nth-child(2)").allTextContents();
    expect(actions).toContain("admin.token.create");
    expect(actions).toContain("admin.token.revoke");
    const svg = page.locator("svg.chart");
    expect(await svg.count()).toBe(1);
    expect(await svg.isVisible()).toBe(true);
    expect(await svg.locator("g.series").count()).toBe(1);
    expect(await svg.textContent()).toContain("agent-in-browser");
    await shot(page, "3-audit-log");

    // Filter by action.
    await page.fill('input[name="action"]', "admin.token.revoke");
    await Promise.all([page.waitForURL("**/admin/audit-log?**"), page.click('button:has-text("Показать")')]);
    const filtered = await page.locator("#audit td.mono:nth-child(2)").allTextContents();
    expect(filtered).toEqual(["admin.token.revoke"]);

    // At 1366 px the token list fits: nothing to scroll sideways, every action in view.
    await page.setViewportSize({ width: 1366, height: 768 });
    await page.goto(`${server.url}/admin/tokens`);
    const card = page.locator("section.card", { has: page.locator("#tokens") });
    expect(await card.evaluate((el) => el.scrollWidth <= el.clientWidth)).toBe(true);
    for (const action of await page.locator("#tokens td.actions").all()) {
      const box = await action.boundingBox();
      expect(box !== null && box.x + box.width <= 1366).toBe(true);
    }

    // Sign out: the pages are closed again.
    await Promise.all([page.waitForURL("**/admin/login"), page.click('header form button[type="submit"]')]);
    await page.goto(`${server.url}/admin/audit-log`);
    expect(new URL(page.url()).pathname).toBe("/admin/login");

    expect(cspErrors).toEqual([]);
    await context.close();
  }, 60_000);
});

describe("the API reference in Chromium", () => {
  test("renders offline: every request it makes is to the service itself, none is refused by the CSP", async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const elsewhere: string[] = [];
    // No internet: anything not addressed to the service fails, as it would on a closed network.
    await context.route("**/*", (route) => {
      const url = route.request().url();
      if (url.startsWith(server.url)) return route.continue();
      elsewhere.push(url);
      return route.abort();
    });
    const consoleErrors: string[] = [];
    page.on("console", (m) => {
      if (m.type() === "error") consoleErrors.push(m.text());
    });
    const res = await page.goto(`${server.url}/docs`);
    expect(res?.headers()["content-security-policy"]).toContain("script-src 'self'");
    // Swagger UI has built the page from /docs/json: the title and an operation are on it.
    await page.locator(".swagger-ui .info .title").waitFor({ timeout: 20_000 });
    expect(await page.locator(".swagger-ui .info .title").textContent()).toContain("svc");
    await page.locator("text=Order a statement").first().waitFor({ timeout: 20_000 });
    await shot(page, "api-reference");
    expect(elsewhere).toEqual([]);
    expect(consoleErrors.filter((e) => /Content Security Policy|Failed to load/i.test(e))).toEqual([]);
    await context.close();
  }, 60_000);
});

// ---- every page at three widths

const WIDTHS = [1024, 1366, 1920] as const;

/** Latin words the interface may show: the product, standards and formats, the bank's own field names. */
const LATIN_ALLOWED = new Set([
  "svc",
  "API",
  "MCP",
  "OAuth",
  "REST",
  "CSV",
  "JSON",
  "XML",
  "Lines",
  "IP",
  "JWT",
  "client_id",
  "client_secret",
  "svc_test_",
  "svc_live_",
  "Claude",
  "ChatGPT",
  "kl_to_1c",
  "txt",
  "Windows",
  "DOS",
  "SVC_ADMIN_TOKEN",
]);

interface LayoutReport {
  /** The page is wider than the window. */
  pageOverflow: number;
  /** Cards whose content is wider than the card (a table sticking out or scrolling). */
  cardsOverflow: string[];
  /** Words whose letters sit on more than one line. */
  broken: string[];
  /** The text a reader sees outside data cells (.mono, code, pre: numbers, ids, codes). */
  text: string;
}

/**
 * Runs in the page (a function: the CSP forbids eval). Every word of every text node in <main> is
 * measured with a Range: a word whose client rects lie on more than one line was broken inside.
 * Words are what lies between the places a line may break without breaking a word: white space,
 * dashes and slashes.
 */
function layoutReport(): LayoutReport {
  // biome-ignore lint/suspicious/noExplicitAny: the page's DOM; the project does not load DOM types
  const doc = (globalThis as any).document;
  const main = doc.querySelector("main") ?? doc.body;
  const walker = doc.createTreeWalker(main, 4 /* NodeFilter.SHOW_TEXT */);
  const range = doc.createRange();
  const broken: string[] = [];
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const parent = node.parentElement;
    if (!parent || parent.closest("option, script, style, textarea, select, svg")) continue;
    for (const m of (node.data as string).matchAll(/[^\s\-–—/]+/gu)) {
      range.setStart(node, m.index);
      range.setEnd(node, m.index + m[0].length);
      const lines = new Set(
        // biome-ignore lint/suspicious/noExplicitAny: a DOMRect
        [...range.getClientRects()].filter((r: any) => r.width > 0).map((r: any) => Math.round(r.bottom)),
      );
      if (lines.size > 1) broken.push(`${m[0]} in <${parent.tagName.toLowerCase()}>`);
    }
  }
  const cardsOverflow: string[] = [];
  for (const card of doc.querySelectorAll("section.card")) {
    if (card.scrollWidth > card.clientWidth + 1) {
      // What sticks out: the narrowest elements reaching past the card's right edge.
      const edge = card.getBoundingClientRect().right + 1;
      const out = [...card.querySelectorAll("*")]
        .map((el) => ({ el, rect: el.getBoundingClientRect() }))
        .filter((x) => x.rect.right > edge)
        .sort((a, b) => a.rect.width - b.rect.width)
        .slice(0, 3)
        .map(({ el, rect }) => {
          const name = el.getAttribute("name");
          return `<${el.tagName.toLowerCase()}${name ? ` name=${name}` : ""}${el.className ? ` .${el.className}` : ""}> ${Math.round(rect.width)} px`;
        });
      cardsOverflow.push(
        `${card.querySelector("h1, h2, table")?.outerHTML.slice(0, 60)}: ${card.scrollWidth} > ${card.clientWidth} (${out.join(", ")})`,
      );
    }
  }
  // Data cells are left out: numbers and codes (.mono, code, pre) and a payment's purpose, which
  // is the payer's text.
  const clone = main.cloneNode(true);
  for (const el of clone.querySelectorAll(
    ".mono, code, pre, option, script, svg, datalist, textarea, td.purpose > div:first-child",
  ))
    el.remove();
  const words = clone.ownerDocument.createTreeWalker(clone, 4);
  const text: string[] = [];
  for (let node = words.nextNode(); node; node = words.nextNode()) text.push(node.data);
  return {
    pageOverflow: doc.documentElement.scrollWidth - doc.documentElement.clientWidth,
    cardsOverflow,
    broken,
    text: text.join(" "),
  };
}

/**
 * Data this file typed or the test banks wrote, in whatever language: account aliases, a token's
 * name, the failing test bank's message, the English instructions the sandbox puts in some purposes.
 */
const DATA_WORDS = new Set([
  "main",
  "operations",
  "failing",
  "files",
  "agent",
  "in",
  "browser",
  "sandbox_failing",
  "directbank",
]);

/** Everything of the interface in English or raw ids that a Russian reader would stumble over. */
function foreignWords(text: string): string[] {
  const found = new Set<string>();
  for (const m of text.matchAll(/[A-Za-z][A-Za-z0-9_]*/g))
    if (!LATIN_ALLOWED.has(m[0]) && !DATA_WORDS.has(m[0])) found.add(m[0]);
  for (const m of text.matchAll(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g))
    found.add(m[0]);
  return [...found];
}

describe("every admin page at 1024, 1366 and 1920 px", () => {
  test("fits the window and its cards, breaks no word, speaks Russian; screenshots kept", async () => {
    const context = await browser.newContext({ viewport: { width: 1366, height: 900 } });
    const page = await context.newPage();
    await page.goto(`${server.url}/admin/login`);
    await page.fill('input[name="token"]', ADMIN_TOKEN);
    await Promise.all([page.waitForURL("**/admin/tokens"), page.click('button[type="submit"]')]);

    const pages: [name: string, path: string][] = [
      ["companies", "/admin/companies"],
      ["accounts", "/admin/accounts"],
      ["account", `/admin/accounts/${busyAccountId}`],
      ["operations", `/admin/accounts/${busyAccountId}/operations`],
      ["tokens", "/admin/tokens"],
      ["token-new", `/admin/tokens/new?company_id=${busyCompanyId}&purpose=integration`],
      ["token-edit", `/admin/tokens/${sweepTokenId}`],
      ["apps", "/admin/oauth"],
      ["consent", consentPath],
      ["bank-accounts", `/admin/accounts/${directbankAccountId}/discover`],
      ["statements", "/admin/statements"],
      ["payments", "/admin/payments"],
      ["audit-log", "/admin/audit-log"],
    ];
    const problems: string[] = [];
    const check = async (name: string, width: number, when: string) => {
      const report = (await page.evaluate(layoutReport)) as LayoutReport;
      const where = `${name} at ${width} px${when}`;
      if (report.pageOverflow > 0) problems.push(`${where}: the page is ${report.pageOverflow} px too wide`);
      for (const c of report.cardsOverflow)
        problems.push(`${where}: a card's content is wider than it: ${c}`);
      for (const w of report.broken) problems.push(`${where}: broken word ${w}`);
      const foreign = foreignWords(report.text);
      if (foreign.length > 0) problems.push(`${where}: not Russian: ${foreign.join(", ")}`);
      if (/«[^»]*«/u.test(report.text)) problems.push(`${where}: quotes nested in quotes of their kind`);
      return report;
    };

    for (const width of WIDTHS) {
      await page.setViewportSize({ width, height: 900 });
      for (const [name, path] of pages) {
        const res = await page.goto(`${server.url}${path}`);
        expect(res?.status()).toBe(200);
        await check(name, width, "");
        await page.screenshot({ path: join(ARTIFACTS, `admin-${name}-${width}.png`), fullPage: true });
        // What the folded parts hold (an operation's details, a new bank login) fits as well.
        const folded = await page.locator("details").count();
        if (folded > 0) {
          await page.evaluate(() => {
            // biome-ignore lint/suspicious/noExplicitAny: the page's DOM
            for (const d of (globalThis as any).document.querySelectorAll("details")) d.open = true;
          });
          await check(name, width, " with its details open");
        }
      }
      // The confirmation before a revocation.
      await page.goto(`${server.url}/admin/tokens`);
      await Promise.all([
        page.waitForURL("**/revoke"),
        page.locator(`tr[data-token-id="${sweepTokenId}"] button:has-text("Отозвать")`).click(),
      ]);
      await check("confirm", width, "");
      await page.screenshot({ path: join(ARTIFACTS, `admin-confirm-${width}.png`), fullPage: true });
    }

    // A new account's bank login shows the fields of the chosen kind only (with scripts; all without).
    await page.goto(`${server.url}/admin/accounts`);
    const newAccount = page.locator('form[action="/admin/accounts"]');
    expect(await newAccount.locator("fieldset[data-login-kind]:visible").count()).toBe(0);
    await newAccount.locator('select[name="login_kind"]').selectOption("tochka/oauth");
    expect(await newAccount.locator("fieldset[data-login-kind]:visible").count()).toBe(1);
    expect(await newAccount.locator('input[name="login_tochka_oauth_client_secret"]').isVisible()).toBe(true);

    // The sign-in form, without a session.
    const stranger = await browser.newContext();
    const signIn = await stranger.newPage();
    for (const width of WIDTHS) {
      await signIn.setViewportSize({ width, height: 900 });
      await signIn.goto(`${server.url}/admin/login`);
      const report = (await signIn.evaluate(layoutReport)) as LayoutReport;
      if (report.pageOverflow > 0 || report.broken.length > 0 || foreignWords(report.text).length > 0)
        problems.push(`login at ${width} px: ${JSON.stringify(report)}`);
      await signIn.screenshot({ path: join(ARTIFACTS, `admin-login-${width}.png`), fullPage: true });
    }
    await stranger.close();

    // The sweep's data are on the pages: the balance, the coverage, operations with their totals.
    await page.goto(`${server.url}/admin/accounts/${busyAccountId}/operations`);
    expect(await page.locator("#operations tbody tr").count()).toBe(50);
    expect(await page.textContent("#totals")).toMatch(/Найдено: \d+ · поступления: [\d\u00A0]+,\d\d\u00A0₽/);
    await page.goto(`${server.url}/admin/accounts`);
    expect(await page.locator(`tr[data-account-id="${busyAccountId}"] .day.covered`).count()).toBeGreaterThan(
      55,
    );
    expect(await page.locator(`tr[data-account-id="${busyAccountId}"] .amount`).textContent()).toMatch(/₽$/);

    expect(problems).toEqual([]);
    await context.close();
  }, 120_000);
});
