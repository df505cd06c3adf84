// lanes: postgres
// A replica whose PostgreSQL goes away: requests are answered 503 service_unavailable after at
// most the statement timeout (no hang, no 500, no agent answer without its audit row), and the
// replica serves again on its own once the server is back. The database server is this file's own.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";
import { type RunningProcess, removeTempDirs, seedToken, startServe, tempDir } from "../helpers/server";

const E2E_TIMEOUT_MS = 90_000;
const CLUSTER = mkdtempSync(join(tmpdir(), "svc-pg-outage-"));
let replica: RunningProcess;

function cluster(action: "start" | "stop" | "down" | "up"): void {
  const done = Bun.spawnSync(["bash", "scripts/pg-test.sh", action, CLUSTER], { stderr: "pipe" });
  if (done.exitCode !== 0) throw new Error(`pg-test.sh ${action}: ${done.stderr.toString()}`);
}

beforeAll(async () => {
  cluster("start");
  const server = readFileSync(join(CLUSTER, "url"), "utf8").trim();
  const admin = postgres(server, { max: 1, onnotice: () => {} });
  await admin.unsafe("CREATE DATABASE svc_outage");
  await admin.end();
  const url = new URL(server);
  url.pathname = "/svc_outage";
  replica = await startServe({
    dbPath: join(tempDir(), "unused.db"),
    env: {
      SVC_DATABASE_URL: url.toString(),
      SVC_SECRET_KEY: Buffer.alloc(32, 5).toString("base64"),
      SVC_DATABASE_TIMEOUT_MS: "1000",
    },
  });
}, E2E_TIMEOUT_MS);

afterAll(async () => {
  await replica?.stop("SIGKILL");
  cluster("stop");
  removeTempDirs();
});

describe("PostgreSQL unreachable", () => {
  test(
    "REST and agent calls get 503 service_unavailable, then work again when it is back",
    async () => {
      const rest = await seedToken(replica);
      const agent = await seedToken(replica, { purpose: "mcp", name: "agent" });
      const restCall = () =>
        fetch(`${replica.url}/api/v1/integration/statements`, {
          headers: { authorization: `Bearer ${rest.token}` },
        });
      const agentCall = (body: { id: string | number; [key: string]: unknown }, session?: string) =>
        fetch(`${replica.url}/api/v1/mcp`, {
          method: "POST",
          headers: {
            authorization: `Bearer ${agent.token}`,
            "content-type": "application/json",
            "x-request-id": String(body.id),
            ...(session ? { "mcp-session-id": session } : {}),
          },
          body: JSON.stringify(body),
        });
      const init = await agentCall({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: {
          protocolVersion: "2025-11-25",
          capabilities: {},
          clientInfo: { name: "e2e", version: "1" },
        },
      });
      const session = init.headers.get("mcp-session-id")!;
      const balance = (id: string) =>
        agentCall(
          {
            jsonrpc: "2.0",
            id,
            method: "tools/call",
            params: { name: "get_balance", arguments: { bank_account_id: agent.accountId } },
          },
          session,
        );
      expect((await restCall()).status).toBe(200);
      expect((await balance("before")).status).toBe(200);

      cluster("down");
      for (const res of [await restCall(), await balance("during")]) {
        expect(res.status).toBe(503);
        expect(res.headers.get("retry-after")).toBe("1");
        const body = (await res.json()) as { error: { code: string; message: string } };
        expect(body.error.code).toBe("service_unavailable");
        // The database is named as a service, never by its address or credentials.
        expect(JSON.stringify(body)).not.toContain("127.0.0.1");
      }
      expect((await fetch(`${replica.url}/readyz`)).status).toBe(503);

      cluster("up");
      // Recovery on its own: the next statements connect afresh (bounded wait for the server).
      const deadline = Date.now() + 20_000;
      let status = 0;
      while (status !== 200 && Date.now() < deadline) {
        status = (await restCall()).status;
        if (status !== 200) await Bun.sleep(100);
      }
      expect(status).toBe(200);
      const after = await balance("after");
      expect(after.status).toBe(200);
      expect(((await after.json()) as { result?: unknown }).result).toBeDefined();
      expect((await fetch(`${replica.url}/readyz`)).status).toBe(200);

      // Every answered agent call has its audit row; the one answered 503 gave nothing out.
      const audit = (await (await replica.admin("GET", "/audit-log?limit=100")).json()) as {
        entries: { action: string; request_id?: string | null; outcome: string }[];
      };
      const calls = audit.entries.filter((e) => e.action === "mcp.get_balance");
      expect(calls.map((e) => [e.request_id, e.outcome]).sort()).toEqual([
        ["after", "ok"],
        ["before", "ok"],
      ]);
      const lines = replica.lines.join("\n");
      expect(lines).not.toContain("internal_error");
    },
    E2E_TIMEOUT_MS,
  );
});
