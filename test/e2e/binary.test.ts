// lanes: postgres
// The compiled `svc` from a directory that holds no source tree: migrations (both dialects), the checkpoint worker,
// the export, import and search workers are embedded, the server starts, orders a statement and exports it (large
// enough to be rendered by export threads), imports a bank file and searches it as an agent.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { copyFileSync, existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { embeddedPgMigrations } from "../../src/db/pg/migrate";
import { freshDatabase } from "../helpers/pg";
import {
  ROOT,
  type RunningProcess,
  seedFileAccount,
  seedIntegration,
  startServe,
  tempDir,
} from "../helpers/server";
import { bankFile } from "../statements/import-support";

const running: RunningProcess[] = [];
let binary = "";
let workDir = "";

beforeAll(async () => {
  const make = Bun.spawn(["make", "build"], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
  if ((await make.exited) !== 0)
    throw new Error(`make build failed: ${await new Response(make.stderr).text()}`);
  workDir = tempDir("svc-bin-");
  binary = join(workDir, "svc");
  copyFileSync(join(ROOT, "dist/svc"), binary);
}, 120_000);

afterAll(async () => {
  for (const s of running.splice(0)) await s.stop(9);
});

describe("compiled svc", () => {
  test("version, migrate and serve work from a directory without sources", async () => {
    expect(readdirSync(workDir)).toEqual(["svc"]);
    const version = Bun.spawnSync([binary, "version"], { cwd: workDir });
    expect(version.exitCode).toBe(0);
    expect(version.stdout.toString().trim()).toMatch(/^\d+\.\d+\.\d+/);

    const migrate = Bun.spawnSync([binary, "migrate"], { cwd: workDir, env: { SVC_DB_PATH: "m/svc.db" } });
    expect(migrate.exitCode).toBe(0);
    expect(existsSync(join(workDir, "m/svc.db"))).toBe(true);
    // The PostgreSQL driver and that dialect's migrations are built in too.
    const pgMigrate = Bun.spawnSync([binary, "migrate"], {
      cwd: workDir,
      env: { SVC_DATABASE_URL: await freshDatabase() },
    });
    expect(pgMigrate.stderr.toString()).toBe("");
    expect(pgMigrate.exitCode).toBe(0);
    const pgTotal = embeddedPgMigrations().length;
    expect(pgMigrate.stdout.toString()).toContain(`${pgTotal} of ${pgTotal} in place`);

    // A replica on PostgreSQL: its statements run in a worker thread, another entrypoint of the binary.
    const replica = await startServe({
      command: [binary],
      cwd: workDir,
      dbPath: join(workDir, "unused/svc.db"),
      env: {
        SVC_DATABASE_URL: await freshDatabase(),
        SVC_SECRET_KEY: Buffer.alloc(32, 3).toString("base64"),
      },
    });
    running.push(replica);
    const seeded = await seedIntegration(replica);
    const listed = await fetch(`${replica.url}/api/v1/integration/statements`, {
      headers: { authorization: `Bearer ${seeded.token}` },
    });
    expect(listed.status).toBe(200);
    expect(await replica.stop("SIGTERM")).toBe(0);
    expect(existsSync(join(workDir, "unused"))).toBe(false);

    const server = await startServe({
      command: [binary],
      cwd: workDir,
      dbPath: join(workDir, "data/svc.db"),
      env: { SVC_BANK_POLL_INTERVAL_MS: "200" },
    });
    running.push(server);
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    // The API reference's assets are built in: the page works without internet.
    const bundle = await fetch(`${server.url}/docs/assets/swagger-ui-bundle.js`);
    expect(bundle.status).toBe(200);
    expect(bundle.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    // Byte for byte the pinned package's file (served from the embedded file, not kept as a string).
    expect(
      Buffer.from(await bundle.arrayBuffer()).equals(
        readFileSync(join(ROOT, "node_modules/swagger-ui-dist/swagger-ui-bundle.js")),
      ),
    ).toBe(true);
    expect(await (await fetch(`${server.url}/docs`)).text()).toContain("/docs/assets/start.js");
    // Ready: among the checks, an export thread starts from the worker module built into the binary.
    let ready: Response | null = null;
    for (let i = 0; i < 100 && ready?.status !== 200; i++) {
      ready = await fetch(`${server.url}/readyz`);
      if (ready.status !== 200) await Bun.sleep(50);
    }
    expect(await ready?.json()).toEqual({
      status: "ready",
      checks: { database: "ok", migrations: "ok", poller: "ok", export_threads: "ok" },
    });
    // 5 days of 5000 operations: over the export threads' 20,000 on SQLite, so worker threads render the pages.
    const { accountId, token } = await seedIntegration(server, { ops_per_day: 5000 });
    const auth = { authorization: `Bearer ${token}`, "content-type": "application/json" };
    const moscowDay = (d: Date) => new Intl.DateTimeFormat("en-CA", { timeZone: "Europe/Moscow" }).format(d);
    const day = moscowDay(new Date());
    const firstDay = moscowDay(new Date(Date.now() - 4 * 86_400_000));
    const created = await fetch(`${server.url}/api/v1/integration/statements`, {
      method: "POST",
      headers: auth,
      body: JSON.stringify({
        bank_account_id: accountId,
        external_id: "bin-1",
        date_from: firstDay,
        date_to: day,
      }),
    });
    expect(created.status).toBe(201);
    const { statement_id } = (await created.json()) as { statement_id: string };
    let status = "processing";
    for (let i = 0; i < 600 && status === "processing"; i++) {
      await Bun.sleep(50);
      const polled = await fetch(`${server.url}/api/v1/integration/statements/${statement_id}`, {
        headers: auth,
      });
      status = ((await polled.json()) as { status: string }).status;
    }
    expect(status).toBe("ready");
    const exported = await fetch(
      `${server.url}/api/v1/integration/statements/${statement_id}/export?format=1c`,
      {
        headers: auth,
      },
    );
    expect(exported.status).toBe(200);
    expect(exported.headers.get("content-type")).toBe("text/plain; charset=windows-1251");
    const onec = new TextDecoder("windows-1251").decode(await exported.arrayBuffer());
    expect(onec.match(/\r\nСекцияДокумент=/g)).toHaveLength(25_000);
    expect(onec.endsWith("\r\nКонецФайла\r\n")).toBe(true);
    // Every exporter's dependencies are in the binary (the csv one quotes with d3-dsv).
    for (const [format, type] of [
      ["csv", "text/csv; charset=utf-8"],
      ["json", "application/json; charset=utf-8"],
    ] as const) {
      const res = await fetch(
        `${server.url}/api/v1/integration/statements/${statement_id}/export?format=${format}`,
        {
          headers: auth,
        },
      );
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe(type);
      const text = await res.text();
      if (format === "csv") {
        expect(text.startsWith("doc_date,doc_number,amount")).toBe(true);
        expect(text.match(/\r\n\d{4}-\d\d-\d\d,/g)).toHaveLength(25_000);
      } else expect(JSON.parse(text).operations).toHaveLength(25_000);
    }
    expect((await fetch(`${server.url}/docs/json`)).status).toBe(200);
    // A bank file over a megabyte is imported by a worker thread: its module is in the binary too.
    const files = await seedFileAccount(server);
    const bank = bankFile(files.number, "2026-10-01", "2026-10-10", { opsPerDay: 200 });
    expect(bank.bytes.byteLength).toBeGreaterThan(1 << 20);
    const form = new FormData();
    form.append("bank_account_id", files.accountId);
    form.append("external_id", "bin-import");
    form.append("file", new Blob([bank.bytes as Uint8Array<ArrayBuffer>]), "kl_to_1c.txt");
    const imported = await fetch(`${server.url}/api/v1/integration/statements/import`, {
      method: "POST",
      headers: { authorization: `Bearer ${files.token}` },
      body: form,
    });
    expect(imported.status).toBe(201);
    expect(await imported.json()).toMatchObject({
      status: "ready",
      operations_count: bank.operations.length,
    });
    // An agent's search runs in a search thread: its module is in the binary as well.
    const agent = (await (
      await server.admin("POST", "/tokens", {
        company_id: files.companyId,
        name: "bin-agent",
        purpose: "mcp",
        mode: "live",
        scope_read_statements: true,
        accounts: [{ bank_account_id: files.accountId, allow_read_statements: true }],
      })
    ).json()) as { token: string };
    const mcp = (body: unknown, session?: string) =>
      fetch(`${server.url}/api/v1/mcp`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${agent.token}`,
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          ...(session ? { "mcp-session-id": session, "mcp-protocol-version": "2025-06-18" } : {}),
        },
        body: JSON.stringify(body),
      });
    const init = await mcp({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "bin", version: "1" } },
    });
    const session = init.headers.get("mcp-session-id") ?? "";
    expect(session).not.toBe("");
    const searched = await mcp(
      {
        jsonrpc: "2.0",
        id: 2,
        method: "tools/call",
        params: {
          name: "search_operations",
          arguments: { bank_account_id: files.accountId, date_from: "2026-10-01", date_to: "2026-10-10" },
        },
      },
      session,
    );
    const found = (await searched.json()) as {
      result: { isError: boolean; structuredContent: { totals: { count: number } } };
    };
    expect(found.result.isError).toBe(false);
    expect(found.result.structuredContent.totals.count).toBe(bank.operations.length);
    expect(await server.stop("SIGTERM")).toBe(0);
    // The checkpoint worker is a second entrypoint of the binary: it must be found and run.
    const messages = server.lines.map((l) => (JSON.parse(l) as { msg: string }).msg);
    expect(messages).toContain("database checkpoints run in a worker thread");
    expect(messages).not.toContain("checkpoint worker failed; checkpoints happen on commit again");
    expect(messages).not.toContain("export thread failed");
    expect(messages).not.toContain("import thread failed");
  }, 60_000);
});
