// lanes: sqlite
// GET /readyz never waits for SQLite's write lock (docs/security.md, "Readiness"): while another
// connection to the file holds it (an `svc admin` command, a script), each probe is answered at
// once from a lock-free attempt; a lock held past WRITE_LOCK_HELD_TOO_LONG_MS (by the injected
// clock) makes the database check fail.
import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { WRITE_LOCK_HELD_TOO_LONG_MS } from "../../src/ops/readiness";
import { json, makeTestApp } from "../helpers/app";
import { expectError } from "../helpers/envelope";
import { tempDir } from "../helpers/server";

/** The poller's freshness check stays out of the way of the clock moves below. */
const SLOW_POLLER = { SVC_BANK_POLL_INTERVAL_MS: "3600000" };

/** Another connection to the same file holding the write lock, as `svc admin` does mid-command. */
function holdWriteLock(dbPath: string) {
  const other = new Database(dbPath);
  other.exec("BEGIN IMMEDIATE");
  return {
    release() {
      other.exec("ROLLBACK");
      other.close();
    },
  };
}

describe("GET /readyz while another connection holds the write lock", () => {
  test("is answered while the lock is held: ready, then not ready once the lock has been held too long, ready again after", async () => {
    const dbPath = join(tempDir(), "svc.db");
    const t = makeTestApp(SLOW_POLLER, "2026-11-20T09:00:00Z", { dbPath });
    await t.services.poller.tick();
    expect((await t.request("GET", "/readyz")).status).toBe(200);

    const lock = holdWriteLock(dbPath);
    try {
      // Each answer arrives while the lock is still held (the old probe waited out busy_timeout
      // on the server's thread, then answered 503).
      for (let i = 0; i < 3; i++) {
        const res = await t.request("GET", "/readyz");
        expect(res.status).toBe(200);
        expect((await json<{ checks: { database: string } }>(res)).checks.database).toBe("ok");
      }
      // Still held, past the limit: the server's own writes would be giving up by now.
      t.clock.advance(WRITE_LOCK_HELD_TOO_LONG_MS);
      const details = await expectError(await t.request("GET", "/readyz"), 503, "service_unavailable");
      expect(details.failing).toEqual(["database"]);
      expect((details.checks as { database: string }).database).toContain("held the write lock");
      // Other requests are answered meanwhile too.
      expect((await t.request("GET", "/healthz")).status).toBe(200);
    } finally {
      lock.release();
    }
    const after = await t.request("GET", "/readyz");
    expect(after.status).toBe(200);
    // The probe gave the lock back each time: a write goes through at once.
    const other = new Database(dbPath);
    try {
      other.exec("PRAGMA busy_timeout = 0");
      other.exec("BEGIN IMMEDIATE");
      other.exec("ROLLBACK");
    } finally {
      other.close();
    }
  });

  test("a lock seen only briefly, then free, never makes the service unready", async () => {
    const dbPath = join(tempDir(), "svc.db");
    const t = makeTestApp(SLOW_POLLER, "2026-11-20T09:00:00Z", { dbPath });
    await t.services.poller.tick();
    for (let i = 0; i < 3; i++) {
      const lock = holdWriteLock(dbPath);
      try {
        expect((await t.request("GET", "/readyz")).status).toBe(200);
      } finally {
        lock.release();
      }
      // Free at the next probe: the time the lock was seen starts over.
      t.clock.advance(WRITE_LOCK_HELD_TOO_LONG_MS - 1);
      expect((await t.request("GET", "/readyz")).status).toBe(200);
    }
  });
});
