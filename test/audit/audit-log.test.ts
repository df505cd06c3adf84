// lanes: sqlite postgres
import { describe, expect, test } from "bun:test";
import { auditArguments, auditField, MAX_AUDIT_FIELD_CHARS } from "../../src/audit/audit-log";
import { makeTestApp } from "../helpers/app";
import { initSession, post, rpc } from "../mcp/helpers";

describe("audit arguments", () => {
  test("small arguments are stored as they are", () => {
    expect(auditArguments({ bank_account_id: "x" })).toBe('{"bank_account_id":"x"}');
    expect(auditArguments(undefined)).toBeNull();
  });

  test("large arguments are cut to at most 2 KB of JSON, Cyrillic included", () => {
    for (const text of ["a".repeat(10_000), "ж".repeat(10_000), "\u0001".repeat(5000)]) {
      const stored = auditArguments({ query: text })!;
      expect(Buffer.byteLength(stored)).toBeLessThanOrEqual(2048);
      expect(JSON.parse(stored)._truncated).toBe(true);
    }
  });
});

describe("every stored field of an entry is capped", () => {
  test("a 15,000-character tool name and notification method are stored cut to 256 characters", async () => {
    const t = makeTestApp();
    const w = t.fixtures.world({ purpose: "mcp" });
    const session = await initSession(t, w.token);
    const long = "x".repeat(15_000);
    await rpc(t, w.token, session, "tools/call", { name: long, arguments: {} });
    const note = await post(
      t,
      w.token,
      { jsonrpc: "2.0", method: `notifications/${long}` },
      { "mcp-session-id": session },
    );
    expect(note.status).toBe(202);
    const rows = t.db
      .query<{ action: string; tool: string | null }>("SELECT action, tool FROM audit_log ORDER BY id")
      .all();
    const called = rows.find((r) => r.tool?.startsWith("xxx"));
    const notified = rows.find((r) => r.action.startsWith("mcp.notification.xxx"));
    expect(called?.tool).toHaveLength(MAX_AUDIT_FIELD_CHARS);
    expect(called?.tool?.endsWith("…")).toBe(true);
    expect(notified?.action).toHaveLength(MAX_AUDIT_FIELD_CHARS);
    for (const r of rows) {
      expect(r.action.length).toBeLessThanOrEqual(MAX_AUDIT_FIELD_CHARS);
      expect((r.tool ?? "").length).toBeLessThanOrEqual(MAX_AUDIT_FIELD_CHARS);
    }
  });

  test("a cut never splits a character outside the Basic Multilingual Plane", () => {
    const cut = auditField(`${"a".repeat(MAX_AUDIT_FIELD_CHARS - 2)}😀😀`);
    expect(cut.length).toBeLessThanOrEqual(MAX_AUDIT_FIELD_CHARS);
    expect(cut).toBe(`${"a".repeat(MAX_AUDIT_FIELD_CHARS - 2)}…`);
    expect(auditField("short")).toBe("short");
    expect(auditField(null)).toBeNull();
  });
});
