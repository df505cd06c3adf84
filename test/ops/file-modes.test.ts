// lanes: sqlite
// Files svc writes are the owner's only (decisions §20; docs/security.md, "Files on disk"): the
// database with its -wal and -shm, the serve lock, backups (`svc admin backup` and scheduled ones)
// and the key files are 0600, and folders svc makes for them 0700, under a real `svc serve`.
import { Database } from "bun:sqlite";
import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { ManualClock } from "../../src/core/clock";
import { createLogger } from "../../src/core/logger";
import { ScheduledBackups } from "../../src/ops/scheduled-backups";
import { type RunningProcess, startServe, svcAdmin, tempDir } from "../helpers/server";

const servers: RunningProcess[] = [];
afterAll(async () => {
  for (const s of servers) await s.stop("SIGKILL");
});
/** A harness limit for tests that start processes, not a performance assertion. */
const E2E_TIMEOUT_MS = 60_000;

const modeOf = (path: string) => (statSync(path).mode & 0o777).toString(8);

/** Every file in `dir` (one level) with its mode, as octal text. */
function modes(dir: string): Record<string, string> {
  return Object.fromEntries(readdirSync(dir).map((f) => [f, modeOf(join(dir, f))]));
}

/** A write through the server, so that its -wal file has content. */
async function someWrite(server: RunningProcess): Promise<void> {
  const res = await server.admin("POST", "/companies", { name: "ООО Тест", inn: "7719617469" });
  expect(res.status).toBe(201);
}

describe("file modes", () => {
  test(
    "svc serve --demo makes its folder 0700 and the database, -wal, -shm, serve lock and key files 0600; svc admin backup writes 0600 into a 0700 folder",
    async () => {
      const data = join(tempDir(), "data");
      const dbPath = join(data, "svc.db");
      // No SVC_ADMIN_TOKEN: --demo makes admin.token (and secret.key) beside the database.
      const server = await startServe({ dbPath, args: ["--demo"], env: { SVC_ADMIN_TOKEN: "" } });
      servers.push(server);
      expect(modeOf(data)).toBe("700");
      const made = modes(data);
      expect(made).toMatchObject({
        "svc.db": "600",
        "svc.db-wal": "600",
        "svc.db-shm": "600",
        "svc.db-serve.lock": "600",
        "secret.key": "600",
        "admin.token": "600",
      });
      // Whatever else is there (the serve lock's journal) too.
      expect(Object.values(made).filter((m) => m !== "600")).toEqual([]);

      const backups = join(data, "backups", "daily");
      const target = join(backups, "b1.db");
      await svcAdmin(dbPath, ["backup", "--to", target]);
      expect(modeOf(join(data, "backups"))).toBe("700");
      expect(modeOf(backups)).toBe("700");
      expect(modes(backups)).toEqual({ "b1.db": "600" });
      // Another svc admin command leaves nothing wider behind.
      await svcAdmin(dbPath, ["company", "list"]);
      expect(Object.values(modes(data)).filter((m) => m !== "600" && m !== "700")).toEqual([]);
      expect(await server.stop()).toBe(0);
      expect(Object.values(modes(data)).filter((m) => m !== "600" && m !== "700")).toEqual([]);
    },
    E2E_TIMEOUT_MS,
  );

  test(
    "a database an older svc left 0644, with its -wal and -shm, is tightened to 0600 at start",
    async () => {
      const dir = tempDir();
      const dbPath = join(dir, "svc.db");
      const old = new Database(dbPath, { create: true });
      old.exec("PRAGMA journal_mode = WAL");
      old.exec("CREATE TABLE leftover (x)");
      old.exec("INSERT INTO leftover VALUES (1)");
      for (const f of ["svc.db", "svc.db-wal", "svc.db-shm"]) chmodSync(join(dir, f), 0o644);
      const server = await startServe({ dbPath });
      servers.push(server);
      await someWrite(server);
      const after = modes(dir);
      expect([after["svc.db"], after["svc.db-wal"], after["svc.db-shm"]]).toEqual(["600", "600", "600"]);
      old.close();
      expect(await server.stop()).toBe(0);
    },
    E2E_TIMEOUT_MS,
  );

  test("a scheduled backup is 0600 in a 0700 folder, whatever the umask of the process", async () => {
    const dir = tempDir();
    const dbPath = join(dir, "svc.db");
    const db = new Database(dbPath, { create: true });
    db.exec("CREATE TABLE t (x)");
    db.close();
    const backups = new ScheduledBackups({
      dbPath,
      dir: join(dir, "backups"),
      intervalMinutes: 60,
      keep: 2,
      clock: new ManualClock("2026-11-20T09:00:00Z"),
      logger: createLogger("error", () => {}),
    });
    await backups.runOnce();
    expect(modeOf(join(dir, "backups"))).toBe("700");
    expect(Object.values(modes(join(dir, "backups")))).toEqual(["600"]);
  });
});
