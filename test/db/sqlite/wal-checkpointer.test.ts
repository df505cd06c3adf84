// lanes: sqlite
// The WAL is copied back into the database file by a worker thread, not inside the server's
// commits; if the worker cannot run, SQLite's own checkpoint-on-commit is back.
import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Logger } from "../../../src/core/logger";
import { openDatabase } from "../../../src/db/open";
import { SAFETY_NET_PAGES, WalCheckpointer } from "../../../src/db/sqlite/wal-checkpointer";
import { tempDir } from "../../helpers/server";

function recordingLogger() {
  const lines: { level: string; msg: string }[] = [];
  const at = (level: string) => (msg: string) => {
    lines.push({ level, msg });
  };
  const logger: Logger = { debug: at("debug"), info: at("info"), warn: at("warn"), error: at("error") };
  return { logger, lines };
}

async function until(check: () => boolean, ms = 5000): Promise<void> {
  for (const started = Date.now(); !check(); ) {
    if (Date.now() - started > ms) throw new Error("timed out");
    await Bun.sleep(10);
  }
}

const autocheckpoint = (db: ReturnType<typeof openDatabase>) =>
  (db.sqlite.query("PRAGMA wal_autocheckpoint").get() as { wal_autocheckpoint: number }).wal_autocheckpoint;

describe("WAL checkpoints in a worker thread", () => {
  test("the database file grows from the WAL although the server connection never checkpoints", async () => {
    const path = join(tempDir(), "svc.db");
    const db = openDatabase(path);
    db.sqlite.exec("CREATE TABLE t (v TEXT)");
    db.sqlite.exec("PRAGMA wal_checkpoint(TRUNCATE)");
    const { logger, lines } = recordingLogger();
    const checkpointer = new WalCheckpointer(db.sqlite, path, logger, 20);
    checkpointer.start();
    await until(() => autocheckpoint(db) === SAFETY_NET_PAGES);
    expect(lines).toContainEqual({ level: "info", msg: "database checkpoints run in a worker thread" });

    const before = statSync(path).size;
    // About 500 pages: far below the server connection's own threshold.
    const insert = db.sqlite.query("INSERT INTO t VALUES (?)");
    for (let i = 0; i < 50; i++) db.sqlite.transaction(() => insert.run("x".repeat(40_000)))();
    await until(() => statSync(path).size > before + 1_000_000);

    await checkpointer.stop();
    expect(autocheckpoint(db)).toBe(1000);
    expect(lines.filter((l) => l.level === "warn")).toEqual([]);
    db.close();
  });

  test("a worker that cannot open the database is reported, and checkpoints happen on commit again", async () => {
    const dir = tempDir();
    const db = openDatabase(join(dir, "svc.db"));
    const { logger, lines } = recordingLogger();
    // A directory is not a database file: the worker fails as it starts.
    const checkpointer = new WalCheckpointer(db.sqlite, dir, logger, 20);
    checkpointer.start();
    await until(() => lines.some((l) => l.level === "warn"));
    expect(lines).toContainEqual({
      level: "warn",
      msg: "checkpoint worker failed; checkpoints happen on commit again",
    });
    expect(autocheckpoint(db)).toBe(1000);
    await checkpointer.stop();
    db.close();
  });

  test("an in-memory database has no WAL and no worker", async () => {
    const db = openDatabase(":memory:");
    const { logger, lines } = recordingLogger();
    const checkpointer = new WalCheckpointer(db.sqlite, ":memory:", logger);
    checkpointer.start();
    await checkpointer.stop();
    expect(lines).toEqual([]);
    db.close();
  });

  test("failing checkpoints are reported once, and once more when they work again", async () => {
    const dir = tempDir();
    const db = openDatabase(join(dir, "svc.db"));
    // Not a database: opening works, every checkpoint fails.
    const broken = join(dir, "broken.db");
    writeFileSync(broken, "x".repeat(8192));
    const { logger, lines } = recordingLogger();
    const checkpointer = new WalCheckpointer(db.sqlite, broken, logger, 5);
    checkpointer.start();
    await until(() => lines.some((l) => l.level === "warn"));
    await Bun.sleep(100); // twenty more failing ticks
    expect(lines.filter((l) => l.level === "warn")).toEqual([
      { level: "warn", msg: "background checkpoints fail; retried every interval" },
    ]);
    // The same file becomes a database.
    const good = openDatabase(join(dir, "good.db"));
    good.sqlite.exec("CREATE TABLE t (v TEXT)");
    good.close();
    writeFileSync(broken, readFileSync(join(dir, "good.db")));
    await until(() => lines.some((l) => l.msg === "background checkpoints work again"));
    await checkpointer.stop();
    db.close();
  });

  test("a database file that does not exist is not created by the worker", async () => {
    const dir = tempDir();
    const db = openDatabase(join(dir, "svc.db"));
    const { logger, lines } = recordingLogger();
    const missing = join(dir, "missing.db");
    const checkpointer = new WalCheckpointer(db.sqlite, missing, logger, 20);
    checkpointer.start();
    await until(() => lines.some((l) => l.level === "warn"));
    expect(existsSync(missing)).toBe(false);
    await checkpointer.stop();
    db.close();
  });

  test(
    "under writes that never pause, the WAL stays bounded by the safety net",
    async () => {
      const path = join(tempDir(), "svc.db");
      const db = openDatabase(path);
      db.sqlite.exec("CREATE TABLE t (v TEXT)");
      const { logger } = recordingLogger();
      const checkpointer = new WalCheckpointer(db.sqlite, path, logger, 20);
      checkpointer.start();
      await until(() => autocheckpoint(db) === SAFETY_NET_PAGES);
      // About three times the safety net in single-page commits, yielding to the worker's messages
      // now and then but never long enough for its checkpoints to catch up with every frame.
      const insert = db.sqlite.query("INSERT INTO t VALUES (?)");
      let largestWal = 0;
      for (let i = 0; i < SAFETY_NET_PAGES * 3; i++) {
        insert.run("x".repeat(3000));
        if (i % 1000 === 0) {
          largestWal = Math.max(largestWal, statSync(`${path}-wal`).size);
          await Bun.sleep(0);
        }
      }
      largestWal = Math.max(largestWal, statSync(`${path}-wal`).size);
      // A WAL frame is a page plus a 24-byte header. The server connection's own checkpoint is
      // skipped while the worker's runs, so the WAL may pass the threshold by what a few commits add
      // meanwhile; without the threshold it would hold all ~30,000 pages.
      expect(largestWal).toBeLessThan(2 * SAFETY_NET_PAGES * (4096 + 24));
      await checkpointer.stop();
      db.close();
      // How far the WAL gets depends on the worker thread getting the CPU while this loop writes: on
      // a machine busy with other work it can lose the race; a second run shows the bound again.
    },
    { timeout: 60_000, retry: 2 },
  );
});
