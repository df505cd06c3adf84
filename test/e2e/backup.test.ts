// lanes: sqlite
// `svc admin backup` while a real server is under agent and order load: the copy is a consistent
// database, `svc admin verify` accepts it, and a server started on it has every order and every
// agent call's audit row that had been acknowledged before the backup began.
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { ADMIN_TOKEN } from "../helpers/app";
import {
  type RunningProcess,
  removeTempDirs,
  seedToken,
  startServe,
  svcAdmin,
  svcAdminRun,
  tempDir,
} from "../helpers/server";

const servers: RunningProcess[] = [];
afterAll(async () => {
  for (const s of servers) await s.stop("SIGKILL");
  removeTempDirs();
});
/** A harness limit for a test that starts processes, not a performance assertion. */
const E2E_TIMEOUT_MS = 90_000;

const AGENT_CALLS = 400;
const ORDERS = 60;

async function agentSession(url: string, token: string): Promise<string> {
  const res = await fetch(`${url}/api/v1/mcp`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "load", version: "1" } },
    }),
  });
  expect(res.status).toBe(200);
  return res.headers.get("mcp-session-id") as string;
}

describe("svc admin backup under load", () => {
  test(
    "the copy verifies, and a server on it has every acknowledged order and audit row",
    async () => {
      const dir = tempDir();
      const dbPath = join(dir, "svc.db");
      const server = await startServe({ dbPath });
      servers.push(server);
      const rest = await seedToken(server);
      const agent = await seedToken(server, { purpose: "mcp", name: "agent" });
      const session = await agentSession(server.url, agent.token);

      const ackedCalls: string[] = [];
      const ackedOrders: string[] = [];
      let backupStarted = false;
      let snapshot: { calls: string[]; orders: string[] } | null = null;

      const agentLoad = (async () => {
        for (let i = 0; i < AGENT_CALLS; i++) {
          const res = await fetch(`${server.url}/api/v1/mcp`, {
            method: "POST",
            headers: {
              authorization: `Bearer ${agent.token}`,
              "content-type": "application/json",
              "mcp-session-id": session,
              "x-request-id": `load-${i}`,
            },
            body: JSON.stringify({
              jsonrpc: "2.0",
              id: i + 2,
              method: "tools/call",
              params: { name: "get_balance", arguments: { bank_account_id: agent.accountId } },
            }),
          });
          expect(res.status).toBe(200);
          await res.arrayBuffer();
          ackedCalls.push(`load-${i}`);
        }
      })();
      const orderLoad = (async () => {
        for (let i = 0; i < ORDERS; i++) {
          const res = await fetch(`${server.url}/api/v1/integration/statements`, {
            method: "POST",
            headers: { authorization: `Bearer ${rest.token}`, "content-type": "application/json" },
            body: JSON.stringify({
              bank_account_id: rest.accountId,
              date_from: "2026-10-01",
              date_to: "2026-10-02",
              external_id: `order-${i}`,
            }),
          });
          expect(res.status).toBe(201);
          ackedOrders.push(((await res.json()) as { statement_id: string }).statement_id);
        }
      })();

      // The backup starts once the load is well under way; what was acknowledged by then must be in it.
      while (ackedCalls.length < AGENT_CALLS / 4) await Bun.sleep(5);
      snapshot = { calls: [...ackedCalls], orders: [...ackedOrders] };
      backupStarted = true;
      const copy = join(dir, "backup", "svc-copy.db");
      const backup = svcAdmin(dbPath, ["backup", "--to", copy]);
      const [written] = await Promise.all([backup, agentLoad, orderLoad]);
      expect(backupStarted).toBe(true);
      expect(JSON.parse(written)).toMatchObject({ file: copy });
      expect(snapshot.calls.length).toBeGreaterThan(0);

      // A second backup to the same file is refused, not overwritten.
      const again = await svcAdminRun(dbPath, ["backup", "--to", copy]);
      expect(again.code).toBe(1);
      expect(again.err).toContain("уже есть");

      const verified = JSON.parse(await svcAdmin(dbPath, ["verify", copy])) as {
        ok: boolean;
        integrity: string;
        schema: { applied: number; expected: number };
        rows: Record<string, number>;
      };
      expect(verified.ok).toBe(true);
      expect(verified.integrity).toBe("ok");
      expect(verified.schema.applied).toBe(verified.schema.expected);
      expect(verified.rows.statements).toBeGreaterThanOrEqual(snapshot.orders.length);
      expect(verified.rows.audit_log).toBeGreaterThanOrEqual(snapshot.calls.length);

      await server.stop();
      const restored = await startServe({ dbPath: copy });
      servers.push(restored);
      for (const id of snapshot.orders) {
        const res = await fetch(`${restored.url}/api/v1/integration/statements/${id}`, {
          headers: { authorization: `Bearer ${rest.token}` },
        });
        expect(res.status).toBe(200);
      }
      const audited = new Set<string>();
      let cursor: string | null = null;
      do {
        const query: string = `api_token_id=${agent.tokenId}&limit=500${cursor ? `&cursor=${cursor}` : ""}`;
        const page = (await (
          await fetch(`${restored.url}/admin/api/audit-log?${query}`, {
            headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
          })
        ).json()) as { entries: { request_id: string }[]; next_cursor: string | null };
        for (const e of page.entries) audited.add(e.request_id);
        cursor = page.next_cursor;
      } while (cursor);
      for (const requestId of snapshot.calls) expect(audited.has(requestId)).toBe(true);
    },
    E2E_TIMEOUT_MS,
  );

  test("verify refuses what is not a whole database, and backup needs --to", async () => {
    const dir = tempDir();
    const junk = join(dir, "junk.db");
    await Bun.write(junk, "not a database at all".repeat(100));
    const bad = await svcAdminRun(join(dir, "svc.db"), ["verify", junk]);
    expect(bad.code).toBe(1);
    expect(bad.err).toContain("не целая база SQLite");
    const missing = await svcAdminRun(join(dir, "svc.db"), ["verify", join(dir, "nothing.db")]);
    expect(missing.code).toBe(1);
    expect(missing.err).toContain("нет файла");
    const usage = await svcAdminRun(join(dir, "svc.db"), ["backup"]);
    expect(usage.code).toBe(2);
    expect(usage.err).toContain("--to");
    expect(existsSync(join(dir, "svc.db"))).toBe(false);
  });
});
