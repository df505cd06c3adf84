// lanes: postgres
// The audit log on both stores: the same entries in, the same pages out (newest first, per token
// through the block map that a trigger keeps on either database, filters, beforeId), the hourly
// agent-call counts and the export; the batcher commits a turn's entries together on PostgreSQL.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { AuditBatcher } from "../../src/audit/audit-batcher";
import { auditExportChunks } from "../../src/audit/audit-export";
import { AUDIT_BLOCK_IDS, AuditLog } from "../../src/audit/audit-log";
import { AuditRetention } from "../../src/audit/audit-retention";
import { ManualClock } from "../../src/core/clock";
import { createLogger } from "../../src/core/logger";
import { migrate, openDatabase } from "../../src/db/open";
import { postgresPort } from "../../src/db/pg/port";
import { PgSyncClient } from "../../src/db/pg/sync-client";
import { type SqlPort, sqlitePort } from "../../src/db/sql-port";
import { migratedDatabase } from "../helpers/pg";

const sqlite = openDatabase(":memory:");
migrate(sqlite.db);
let client: PgSyncClient;
const ports: SqlPort[] = [];

beforeAll(async () => {
  const url = await migratedDatabase();
  client = new PgSyncClient(url, { timeoutMs: 10_000 });
  ports.push(sqlitePort(sqlite.sqlite), postgresPort(client));
});
afterAll(() => {
  client?.close();
  sqlite.close();
});

/** Entries of tokens a and b in three blocks of ids (ids set, as a long-running log has them). */
function fill(port: SqlPort): void {
  const insert = port.prepare(
    `INSERT INTO audit_log (id, at, actor, api_token_id, action, tool, arguments, outcome, transport)
     VALUES (?, ?, 'token', ?, ?, ?, ?, 'ok', 'http')`,
  );
  let n = 0;
  for (const block of [0, 2, 5]) {
    for (let i = 1; i <= 3; i++) {
      n += 1;
      const token = i === 2 ? "b" : "a";
      const at = `2026-11-20T${String(9 + block).padStart(2, "0")}:0${i}:00.000Z`;
      insert.run(
        block * AUDIT_BLOCK_IDS + i,
        at,
        token,
        i === 3 ? "admin.token.create" : "mcp.tools/call",
        "get_balance",
        JSON.stringify({ n, счёт: "№1" }),
      );
    }
  }
  // Ids given explicitly: PostgreSQL's identity continues after them only when told (as
  // svc admin migrate-to-postgres does).
  if (port.dialect === "postgres") {
    port
      .prepare("SELECT setval(pg_get_serial_sequence('audit_log', 'id'), (SELECT max(id) FROM audit_log))")
      .get();
  }
}

function read(port: SqlPort) {
  const log = new AuditLog(port);
  log.write({
    at: new Date("2026-11-21T00:00:00Z"),
    actor: "system",
    action: "retention.run",
    outcome: "ok",
    arguments: { deleted: 0 },
  });
  const ids = (q: Parameters<AuditLog["query"]>[0]) => log.query(q).map((e) => e.id);
  return {
    all: ids({ limit: 100 }),
    page2: ids({ limit: 3, beforeId: 2 * AUDIT_BLOCK_IDS + 2 }),
    ofA: ids({ apiTokenId: "a", limit: 100 }),
    ofAPaged: ids({ apiTokenId: "a", limit: 2, beforeId: 5 * AUDIT_BLOCK_IDS + 1 }),
    ofAAgent: ids({ apiTokenId: "a", action: "mcp.tools/call", limit: 100 }),
    ofB: ids({ apiTokenId: "b", limit: 100 }),
    since: ids({ since: "2026-11-20T11:00:00.000Z", until: "2026-11-20T14:02:00.000Z", limit: 100 }),
    blocks: port
      .prepare("SELECT api_token_id, block FROM audit_token_blocks ORDER BY api_token_id, block")
      .all(),
    entry: log.query({ apiTokenId: "b", limit: 1 })[0],
    hourly: log.agentCallsPerHour("2026-11-20T00:00:00.000Z"),
    csv: [...auditExportChunks(port, { since: "2026-11-20" }, "csv")].join(""),
    jsonl: [...auditExportChunks(port, {}, "jsonl")].join(""),
  };
}

describe("audit log on both stores", () => {
  test("the same entries give the same pages, counts and files", () => {
    for (const port of ports) fill(port);
    const [onSqlite, onPostgres] = ports.map(read);
    expect(onPostgres).toEqual(onSqlite!);
    const B = AUDIT_BLOCK_IDS;
    expect(onSqlite!.ofA).toEqual([5 * B + 3, 5 * B + 1, 2 * B + 3, 2 * B + 1, 3, 1]);
    expect(onSqlite!.ofAPaged).toEqual([2 * B + 3, 2 * B + 1]);
    expect(onSqlite!.ofAAgent).toEqual([5 * B + 1, 2 * B + 1, 1]);
    expect(onSqlite!.blocks).toHaveLength(6);
    expect(onSqlite!.entry).toMatchObject({ api_token_id: "b", arguments: { n: 8, счёт: "№1" } });
    expect(onSqlite!.csv.split("\r\n")[0]).toStartWith("id,at,actor");
    expect(onSqlite!.jsonl.trim().split("\n")).toHaveLength(10);
  });

  test("retention deletes the same entries and drops the same blocks on both stores", async () => {
    const clock = new ManualClock("2026-11-30T12:00:00Z"); // 10 days: everything before 2026-11-20T12:00
    const after = [];
    for (const port of ports) {
      const deleted = await new AuditRetention(port, 10, clock, createLogger("error")).runOnce();
      after.push({
        deleted,
        left: port
          .prepare<{ id: number }>("SELECT id FROM audit_log ORDER BY id")
          .all()
          .map((r) => r.id),
        blocks: port
          .prepare("SELECT api_token_id, block FROM audit_token_blocks ORDER BY api_token_id, block")
          .all(),
      });
    }
    expect(after[1]).toEqual(after[0]!);
    expect(after[0]!.deleted).toBeGreaterThan(0);
    expect(after[0]!.blocks).not.toContainEqual({ api_token_id: "a", block: 0 });
  });

  test("PostgreSQL: the batcher commits one turn's entries together; an unreachable server fails every one", async () => {
    const pg = ports[1]!;
    const log = new AuditLog(pg);
    const batcher = new AuditBatcher(log);
    const entry = (n: number) => ({
      at: new Date("2026-11-22T00:00:00Z"),
      actor: "token" as const,
      apiTokenId: "c",
      action: "mcp.tools/call",
      outcome: `ok ${n}`,
    });
    await Promise.all([1, 2, 3].map((n) => batcher.write(entry(n))));
    expect(log.query({ apiTokenId: "c", limit: 10 }).map((e) => e.outcome)).toEqual(["ok 3", "ok 2", "ok 1"]);

    const gone = new PgSyncClient("postgres://svc@127.0.0.1:1/none", { timeoutMs: 2000 });
    const down = new AuditBatcher(new AuditLog(postgresPort(gone)));
    const results = await Promise.allSettled([1, 2].map((n) => down.write(entry(n))));
    expect(results.map((r) => r.status)).toEqual(["rejected", "rejected"]);
    gone.close();
  });
});
