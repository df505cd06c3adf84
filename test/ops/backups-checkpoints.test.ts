// lanes: sqlite
// Scheduled backups (SVC_BACKUP_DIR, _INTERVAL_MINUTES, _KEEP) and SVC_CHECKPOINTS=external.
import { afterEach, describe, expect, test } from "bun:test";
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { loadConfig } from "../../src/config";
import { ManualClock } from "../../src/core/clock";
import { createLogger } from "../../src/core/logger";
import { type RunningServer, startServer } from "../../src/main";
import { verifyBackup } from "../../src/ops/backup";
import { backupFileName, ScheduledBackups } from "../../src/ops/scheduled-backups";
import { ADMIN_TOKEN, makeTestApp } from "../helpers/app";
import { tempDir } from "../helpers/server";

const running: RunningServer[] = [];
afterEach(async () => {
  for (const s of running.splice(0)) await s.stop();
});

describe("scheduled backups", () => {
  test("each run writes a verified copy named by its time and keeps only the newest SVC_BACKUP_KEEP", async () => {
    const dir = tempDir();
    const dbPath = join(dir, "svc.db");
    const t = makeTestApp({}, "2026-11-20T09:00:00Z", { dbPath });
    t.fixtures.world();
    const logs: string[] = [];
    const backups = new ScheduledBackups({
      dbPath,
      dir: join(dir, "backups"),
      intervalMinutes: 60,
      keep: 2,
      clock: t.clock,
      logger: createLogger("info", (l) => logs.push(l)),
    });
    for (let i = 0; i < 3; i++) {
      await backups.runOnce();
      t.clock.advance(3_600_000);
    }
    const files = readdirSync(join(dir, "backups")).sort();
    expect(files).toEqual([
      backupFileName(new Date("2026-11-20T10:00:00Z")),
      backupFileName(new Date("2026-11-20T11:00:00Z")),
    ]);
    expect(files[0]).toBe("svc-20261120T100000Z.db");
    for (const f of files) {
      const report = verifyBackup(join(dir, "backups", f));
      expect(report.ok).toBe(true);
      expect(report.rows.bank_accounts).toBe(1);
    }
    expect(logs.filter((l) => l.includes('"msg":"backup written"'))).toHaveLength(3);
    t.services.store.close();
  });

  test("a failed backup is logged and leaves the server running", async () => {
    const dir = tempDir();
    const logs: string[] = [];
    const backups = new ScheduledBackups({
      dbPath: join(dir, "missing.db"),
      dir: join(dir, "backups"),
      intervalMinutes: 60,
      keep: 2,
      clock: new ManualClock(),
      logger: createLogger("info", (l) => logs.push(l)),
    });
    await backups.runOnce();
    expect(logs.some((l) => l.includes("scheduled backup failed") && l.includes("нет базы данных"))).toBe(
      true,
    );
  });
});

describe("SVC_CHECKPOINTS", () => {
  async function serve(env: Record<string, string>) {
    const dbPath = join(tempDir(), "svc.db");
    const logs: string[] = [];
    const server = await startServer(
      loadConfig({ SVC_DB_PATH: dbPath, SVC_PORT: "0", SVC_ADMIN_TOKEN: ADMIN_TOKEN, ...env }),
      { logger: createLogger("info", (l) => logs.push(l)) },
    );
    running.push(server);
    return { server, dbPath, logs };
  }

  const autocheckpoint = (server: RunningServer) =>
    server.services.database.sqlite
      .query<{ wal_autocheckpoint: number }, []>("PRAGMA wal_autocheckpoint")
      .get()?.wal_autocheckpoint;

  /** Commits `pages` pages of 4 KB, one per transaction (each commit may start a checkpoint). */
  function grow(server: RunningServer, pages: number) {
    const sqlite = server.services.database.sqlite;
    sqlite.exec("CREATE TABLE IF NOT EXISTS filler (x BLOB)");
    const insert = sqlite.query("INSERT INTO filler VALUES (randomblob(4000))");
    for (let i = 0; i < pages; i++) insert.run();
  }

  test("external: no checkpointer, and no commit checkpoints: the WAL keeps every frame", async () => {
    const { server, dbPath, logs } = await serve({ SVC_CHECKPOINTS: "external" });
    expect(autocheckpoint(server)).toBe(0);
    expect(logs.some((l) => l.includes("SVC_CHECKPOINTS=external"))).toBe(true);
    expect(logs.some((l) => l.includes("checkpoints run in a worker thread"))).toBe(false);
    grow(server, 1500);
    // SQLite's default would have checkpointed and restarted the WAL at 1000 pages.
    expect(statSync(`${dbPath}-wal`).size).toBeGreaterThan(1500 * 4096);
  });

  test("internal (the default): the checkpointer runs", async () => {
    const { server, logs } = await serve({});
    for (let i = 0; i < 100 && !logs.some((l) => l.includes("checkpoints run in a worker thread")); i++) {
      await Bun.sleep(20);
    }
    expect(logs.some((l) => l.includes("checkpoints run in a worker thread"))).toBe(true);
    expect(autocheckpoint(server)).toBe(10_000);
  });
});
