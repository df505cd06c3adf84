// lanes: postgres
// On PostgreSQL, too, large exports are rendered by worker threads with connections of their own
// (statements/export/threads.ts): every page is a round trip that, in the server's thread, would
// hold every other request behind it. What the threads send must be exactly what the server's own
// thread sends, and none may be left running after a download.
import { afterEach, describe, expect, test } from "bun:test";
import { availableParallelism } from "node:os";
import type { ExportThreadsOptions } from "../../src/statements/export/threads";
import { json, makeTestApp, type TestApp } from "../helpers/app";
import { lowThreads } from "../helpers/thread-policy";
import { expectThreadsRenderTheSame, settled } from "./export-threads-support";

const PATH = "/api/v1/integration/statements";
const apps: TestApp[] = [];

afterEach(async () => {
  for (const t of apps.splice(0)) await t.services.exportThreads.stop();
});

/** A ready statement of 10 days × `perDay` operations in a PostgreSQL database of its own. */
async function appWithStatement(threads: ExportThreadsOptions, perDay = 300) {
  const t = makeTestApp({}, "2026-11-20T09:00:00Z", { overrides: { exportThreads: threads } });
  apps.push(t);
  expect(t.services.store.kind).toBe("postgres");
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
  return { t, w, row, url: `${PATH}/${id}/export` };
}

describe("exports on PostgreSQL rendered by worker threads", () => {
  test("are byte for byte the exports rendered in the server's thread, in every format", async () => {
    const { t, row } = await appWithStatement({ minOperations: 1, threads: 2 });
    expect(row.operations_count).toBe(3000);
    await expectThreadsRenderTheSame(t, row, 2);
  }, 120_000);

  test("the download route gives them statements from 2,000 operations by default, and ends them", async () => {
    const { t, w, url } = await appWithStatement({ threads: 2 });
    const threads = t.services.exportThreads;
    const res = await t.request("GET", `${url}?format=json`, { token: w.token });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    const before = lowThreads();
    let text = decoder.decode((await reader.read()).value);
    expect(threads.runningThreads).toBe(2);
    // Past the header, the pages come from the threads: each nicer by 10, as is the thread of
    // its connection, started from it.
    text += decoder.decode((await reader.read()).value);
    text += decoder.decode((await reader.read()).value);
    if (process.platform === "linux")
      expect(lowThreads().filter((tid) => !before.includes(tid)).length).toBeGreaterThanOrEqual(4);
    for (let r = await reader.read(); !r.done; r = await reader.read()) text += decoder.decode(r.value);
    expect((JSON.parse(text) as { operations: unknown[] }).operations).toHaveLength(3000);
    expect(await settled(threads)).toBe(0);

    // A download the client leaves early ends its threads too.
    const early = await t.request("GET", `${url}?format=csv`, { token: w.token });
    const earlyReader = early.body!.getReader();
    await earlyReader.read();
    expect(threads.runningThreads).toBe(2);
    await earlyReader.cancel();
    expect(await settled(threads)).toBe(0);
  }, 120_000);

  test("by default an export gets one thread, and two exports at a time get theirs", async () => {
    const { t, w, url } = await appWithStatement({});
    const threads = t.services.exportThreads;
    const first = (await t.request("GET", `${url}?format=json`, { token: w.token })).body!.getReader();
    await first.read();
    expect(threads.runningThreads).toBe(1);
    const second = (await t.request("GET", `${url}?format=csv`, { token: w.token })).body!.getReader();
    await second.read();
    const atOnce = Math.min(2, availableParallelism());
    expect(threads.runningThreads).toBe(atOnce);
    // A third while both run: rendered in the server's thread, no thread more.
    const third = (await t.request("GET", `${url}?format=1c`, { token: w.token })).body!.getReader();
    await third.read();
    expect(threads.runningThreads).toBe(atOnce);
    for (const reader of [first, second, third]) await reader.cancel();
    expect(await settled(threads)).toBe(0);
  }, 120_000);

  test("smaller statements are rendered in the server's thread", async () => {
    const { t, w, url } = await appWithStatement({ threads: 2 }, 150);
    const res = await t.request("GET", `${url}?format=csv`, { token: w.token });
    const reader = res.body!.getReader();
    await reader.read();
    expect(t.services.exportThreads.runningThreads).toBe(0);
    let lines = 0;
    const decoder = new TextDecoder();
    for (let r = await reader.read(); !r.done; r = await reader.read()) {
      lines += decoder.decode(r.value).split("\r\n").filter(Boolean).length;
    }
    expect(lines).toBe(1500);
  }, 120_000);
});
