// lanes: sqlite
import { describe, expect, test } from "bun:test";
import { AuditBatcher } from "../../src/audit/audit-batcher";
import { AuditLog } from "../../src/audit/audit-log";
import { migrate, openDatabase } from "../../src/db/open";
import { sqlitePort } from "../../src/db/sql-port";

function setup() {
  const database = openDatabase(":memory:");
  migrate(database.db);
  const log = new AuditLog(sqlitePort(database.sqlite));
  return { database, log, batcher: new AuditBatcher(log) };
}

const entry = (action: string) => ({
  at: new Date("2026-11-20T09:00:00Z"),
  actor: "token" as const,
  action,
  outcome: "ok",
});

describe("agent audit batches", () => {
  test("entries written in one turn are committed together, and each caller waits for its commit", async () => {
    const { database, batcher } = setup();
    const count = () =>
      (database.sqlite.query("SELECT count(*) AS n FROM audit_log").get() as { n: number }).n;
    const writes = [
      batcher.write(entry("mcp.a")),
      batcher.write(entry("mcp.b")),
      batcher.write(entry("mcp.c")),
    ];
    expect(count()).toBe(0); // nothing is visible before the commit
    await Promise.all(writes);
    expect(count()).toBe(3);
  });

  test("a failed commit rejects every entry of the batch and stores none of them", async () => {
    const { database, batcher } = setup();
    // The second entry of the batch fails in the database, after the first one was inserted.
    database.sqlite.exec(
      `CREATE TRIGGER refuse_b BEFORE INSERT ON audit_log WHEN NEW.action = 'mcp.b'
       BEGIN SELECT RAISE(ABORT, 'disk full'); END`,
    );
    const results = await Promise.allSettled([batcher.write(entry("mcp.a")), batcher.write(entry("mcp.b"))]);
    expect(results.map((r) => r.status)).toEqual(["rejected", "rejected"]);
    expect((database.sqlite.query("SELECT count(*) AS n FROM audit_log").get() as { n: number }).n).toBe(0);
    // The next batch is unaffected.
    database.sqlite.exec("DROP TRIGGER refuse_b");
    await batcher.write(entry("mcp.c"));
    expect((database.sqlite.query("SELECT count(*) AS n FROM audit_log").get() as { n: number }).n).toBe(1);
  });
});
