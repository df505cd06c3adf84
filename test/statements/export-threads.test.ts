// lanes: sqlite
// Large exports are rendered by worker threads (statements/export/threads.ts). What they send must
// be exactly what the server's own thread sends, and a download that ends early, fails or outlives
// the server must not leave a thread or an open read behind.
import { afterEach, describe, expect, test } from "bun:test";
import { join } from "node:path";
import type { ExportThreadsOptions } from "../../src/statements/export/threads";
import { json, makeTestApp, type TestApp } from "../helpers/app";
import { sqlInAnotherProcess, tempDir } from "../helpers/server";
import { lowThreads, mainThreadNormal } from "../helpers/thread-policy";
import { expectThreadsRenderTheSame, settled } from "./export-threads-support";

const PATH = "/api/v1/integration/statements";
const apps: TestApp[] = [];

afterEach(async () => {
  for (const t of apps.splice(0)) {
    await t.services.exportThreads.stop();
    t.services.database.close();
  }
});

/** A file database (threads need one) holding a ready statement of 10 days × `perDay` operations. */
async function appWithStatement(
  threads: ExportThreadsOptions,
  perDay = 300,
  env: Record<string, string> = {},
) {
  const dbPath = join(tempDir("export-threads-"), "svc.db");
  const t = makeTestApp(env, "2026-11-20T09:00:00Z", {
    dbPath,
    overrides: { exportThreads: threads },
  });
  apps.push(t);
  const w = t.fixtures.world({ ops_per_day: perDay });
  const res = await t.request("POST", PATH, {
    token: w.token,
    body: {
      bank_account_id: w.account.bank_account_id,
      external_id: "e",
      date_from: "2026-10-01",
      date_to: "2026-10-10",
    },
  });
  const id = (await json(res)).statement_id as string;
  await t.services.poller.idle();
  await t.services.poller.tick();
  await t.services.poller.idle();
  const row = t.services.statementRepo.findById(id)!;
  expect(row.status).toBe("ready");
  return { t, w, row, dbPath, url: `${PATH}/${id}/export` };
}

describe("exports rendered by worker threads", () => {
  test("are byte for byte the exports rendered in the server's thread, in every format", async () => {
    const { t, row } = await appWithStatement({ minOperations: 1, threads: 2 });
    // Line breaks inside values: such documents are written by the field writer, in the worker too.
    const breaks = t.db
      .query("SELECT count(*) AS n FROM operations WHERE purpose LIKE '%' || char(10) || '%'")
      .get() as { n: number };
    expect(breaks.n).toBeGreaterThan(0);
    expect(row.operations_count).toBe(3000);
    await expectThreadsRenderTheSame(t, row, 2);
  }, 60_000);

  test("the download route uses them for statements of at least minOperations operations", async () => {
    const { t, w, url } = await appWithStatement({ minOperations: 3000, threads: 2 });
    const threads = t.services.exportThreads;
    const res = await t.request("GET", `${url}?format=csv`, { token: w.token });
    const reader = res.body!.getReader();
    await reader.read();
    expect(threads.runningThreads).toBe(2);
    let text = "";
    const decoder = new TextDecoder();
    for (let r = await reader.read(); !r.done; r = await reader.read()) text += decoder.decode(r.value);
    expect(text.split("\r\n").filter(Boolean)).toHaveLength(3000);
    expect(await settled(threads)).toBe(0);

    const below = await appWithStatement({ minOperations: 3001, threads: 2 });
    const small = await below.t.request("GET", `${below.url}?format=csv`, { token: below.w.token });
    const smallReader = small.body!.getReader();
    await smallReader.read();
    expect(below.t.services.exportThreads.runningThreads).toBe(0);
    await smallReader.cancel();

    // SVC_EXPORT_THREADS=0: every export in the server's thread, however large.
    const off = await appWithStatement({ minOperations: 1 }, 300, { SVC_EXPORT_THREADS: "0" });
    const here = await off.t.request("GET", `${off.url}?format=csv`, { token: off.w.token });
    const hereReader = here.body!.getReader();
    await hereReader.read();
    expect(off.t.services.exportThreads.runningThreads).toBe(0);
    await hereReader.cancel();
  }, 60_000);

  test.skipIf(process.platform !== "linux")(
    "its threads give way (nicer by 10) once another request arrives, unless SVC_LONG_WORK_PRIORITY=normal",
    async () => {
      // Normal first: no thread of an earlier low export is left to start threads of its own.
      for (const priority of ["normal", "low"]) {
        const { t, w, url } = await appWithStatement({ minOperations: 1, threads: 2 }, 2000, {
          SVC_LONG_WORK_PRIORITY: priority,
        });
        const before = lowThreads();
        const res = await t.request("GET", `${url}?format=1c`, { token: w.token });
        const reader = res.body!.getReader();
        // The header is this thread's; the pages after it come from the threads.
        for (let i = 0; i < 3; i++) await reader.read();
        expect(t.services.exportThreads.runningThreads).toBe(2);
        const started = () => lowThreads().filter((tid) => !before.includes(tid));
        // Alone, the download's threads keep the server's priority.
        expect(started()).toEqual([]);
        // Somebody else's request: from their next page on they give way (at normal, never).
        expect((await t.request("GET", "/healthz")).status).toBe(200);
        for (let i = 0; i < 40 && started().length < 2; i++) await reader.read();
        if (priority === "low") expect(started().length).toBeGreaterThanOrEqual(2);
        else expect(started()).toEqual([]);
        expect(mainThreadNormal()).toBe(true);
        await reader.cancel();
        expect(await settled(t.services.exportThreads)).toBe(0);
      }
    },
    60_000,
  );

  test("a reader that goes away stops the threads, and no read stays open on the database", async () => {
    const { t, w, url } = await appWithStatement({ minOperations: 1, threads: 2 }, 2000);
    const threads = t.services.exportThreads;
    const res = await t.request("GET", `${url}?format=1c`, { token: w.token });
    const reader = res.body!.getReader();
    await reader.read();
    await reader.read();
    expect(threads.runningThreads).toBe(2);
    await reader.cancel();
    expect(await settled(threads)).toBe(0);
    // A reader holding a snapshot would keep a full checkpoint from finishing (busy = 1).
    const sqlite = t.services.database.sqlite;
    sqlite
      .query("INSERT INTO audit_log (at, actor, action, outcome) VALUES ('x', 'system', 'x', 'ok')")
      .run();
    expect(sqlite.query("PRAGMA wal_checkpoint(TRUNCATE)").get()).toMatchObject({ busy: 0 });
  }, 60_000);

  test("threads closing their connections leave this process's locks on the database files alone", async () => {
    // Closing any descriptor of a file drops every POSIX lock the process holds on it; SQLite
    // defers its own closes while another connection of the process holds locks. Had a thread's
    // close dropped them, another process's first read would rebuild the -shm file under the
    // server, which moves its WAL-index header.
    const { t, w, url, dbPath } = await appWithStatement({ minOperations: 1, threads: 2 });
    for (const format of ["1c", "csv"]) {
      const res = await t.request("GET", `${url}?format=${format}`, { token: w.token });
      expect((await res.arrayBuffer()).byteLength).toBeGreaterThan(100_000);
    }
    expect(await settled(t.services.exportThreads)).toBe(0);
    const header = t.services.database.walHeader!;
    header.moved();
    sqlInAnotherProcess(dbPath, "SELECT count(*) FROM operations");
    expect(header.moved()).toBe(false);
  }, 60_000);

  test("stopping them (the server stops) ends a download in progress and its threads", async () => {
    const { t, w, url } = await appWithStatement({ minOperations: 1, threads: 2 }, 2000);
    const threads = t.services.exportThreads;
    const res = await t.request("GET", `${url}?format=json`, { token: w.token });
    const reader = res.body!.getReader();
    await reader.read();
    expect(threads.runningThreads).toBe(2);
    await threads.stop();
    expect(threads.runningThreads).toBe(0);
    await expect(
      (async () => {
        for (let r = await reader.read(); !r.done; r = await reader.read());
      })(),
    ).rejects.toThrow();
  }, 60_000);

  test("while one export has threads, another is rendered in the server's thread, with the same bytes", async () => {
    const { t, w, url } = await appWithStatement({ minOperations: 1, threads: 2 });
    const threads = t.services.exportThreads;
    const first = await t.request("GET", `${url}?format=1c`, { token: w.token });
    const firstReader = first.body!.getReader();
    await firstReader.read();
    expect(threads.runningThreads).toBe(2);
    const second = Buffer.from(
      await (await t.request("GET", `${url}?format=1c`, { token: w.token })).arrayBuffer(),
    );
    expect(threads.runningThreads).toBe(2);
    const chunks: Uint8Array[] = [];
    for (let r = await firstReader.read(); !r.done; r = await firstReader.read()) chunks.push(r.value);
    const rest = Buffer.concat(chunks);
    expect(second.subarray(second.length - rest.length).equals(rest)).toBe(true);
    expect(await settled(threads)).toBe(0);
  }, 60_000);

  test("a download that fails part way is logged with its request id, rendered in threads or here", async () => {
    for (const minOperations of [1, Number.MAX_SAFE_INTEGER]) {
      const { t, w, row, url } = await appWithStatement({ minOperations, threads: 2 });
      // The 1C writer refuses a negative amount; this operation sits on the third page.
      t.db
        .query(
          `UPDATE operations SET amount = -1 WHERE operation_id =
             (SELECT operation_id FROM statement_operations WHERE statement_id = ? AND seq = 600)`,
        )
        .run(row.id);
      const res = await t.request("GET", `${url}?format=1c`, {
        token: w.token,
        headers: { "x-request-id": `broken-export-${minOperations}` },
      });
      expect(res.status).toBe(200);
      await expect(res.arrayBuffer()).rejects.toThrow();
      const failed = t.logs.map((l) => JSON.parse(l)).filter((l) => l.msg === "export failed");
      expect(failed).toEqual([
        expect.objectContaining({
          level: "error",
          request_id: `broken-export-${minOperations}`,
          statement_id: row.id,
          format: "1c",
          error: expect.stringContaining("amount"),
        }),
      ]);
      expect(await settled(t.services.exportThreads)).toBe(0);
    }
  }, 60_000);
});
