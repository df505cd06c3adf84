// lanes: sqlite
// The admin pages in a real browser: Debian's Chromium driven by playwright-core against the real
// server (`svc serve` on a free port). `make test` installs Chromium first (scripts/ensure-chromium.sh).
// When Chromium is missing or cannot start, this file fails with the reason; it never skips.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { type Browser, chromium, type Page } from "playwright-core";
import { ADMIN_TOKEN } from "../helpers/app";
import { ROOT, type RunningProcess, startServe, tempDir } from "../helpers/server";

const CHROMIUM = "/usr/bin/chromium";
const ARTIFACTS = join(ROOT, "test/artifacts");
// New tokens default to test mode: the accounts here are sandbox accounts.
const RAW_TOKEN_RE = /^svc_test_[0-9A-Za-z]{40}$/;

let browser: Browser;
let server: RunningProcess;
let accountId: string;
let dataDir: string | undefined;

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
  server = await startServe({ dbPath: join(dataDir, "svc.db") });
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
}, 60_000);

afterAll(async () => {
  await browser?.close();
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

    // Revoke from the list.
    await Promise.all([
      page.waitForURL("**/admin/tokens"),
      page.locator("tr", { hasText: "agent-in-browser" }).locator('button:has-text("Отозвать")').click(),
    ]);
    expect(await page.textContent(".flash.ok")).toContain("отозван");
    expect(await page.locator("tr", { hasText: "agent-in-browser" }).textContent()).toContain("отозван");
    expect((await rpc({ jsonrpc: "2.0", id: 3, method: "ping" }, sessionId)).status).toBe(401);

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
