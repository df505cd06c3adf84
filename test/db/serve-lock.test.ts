// lanes: sqlite
// One `svc serve` per SQLite file: the lock beside the database is refused to a second holder and
// released by the operating system when its holder dies, even by kill -9.
import { expect, test } from "bun:test";
import { join } from "node:path";
import { acquireServeLock, ServeLockHeld } from "../../src/db/sqlite/serve-lock";
import { ROOT, tempDir } from "../helpers/server";

test("a second holder is refused with a message; after the first is killed, the lock is free", async () => {
  const dbPath = join(tempDir(), "svc.db");
  const holder = Bun.spawn(
    [
      process.execPath,
      "-e",
      `const { acquireServeLock } = await import(${JSON.stringify(join(ROOT, "src/db/sqlite/serve-lock.ts"))});
       acquireServeLock(${JSON.stringify(dbPath)}, { pid: process.pid, startedAt: "now" });
       console.log("held");
       await new Promise(() => {});`,
    ],
    { stdout: "pipe", stderr: "inherit" },
  );
  const reader = holder.stdout.getReader();
  const { value } = await reader.read();
  expect(new TextDecoder().decode(value)).toContain("held");

  expect(() => acquireServeLock(dbPath, { pid: process.pid, startedAt: "now" })).toThrow(ServeLockHeld);

  holder.kill("SIGKILL");
  await holder.exited;
  const lock = acquireServeLock(dbPath, { pid: process.pid, startedAt: "now" });
  lock.release();
  // In-memory databases have no file to share: nothing to lock.
  acquireServeLock(":memory:", { pid: 1, startedAt: "now" }).release();
});
