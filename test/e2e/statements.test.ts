// lanes: sqlite
// The real server, end to end: order, poll, ready within two poll intervals, exports; and the
// outbox surviving kill -9.
import { afterEach, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { parse } from "csv-parse/sync";
import { decodeOneC, parseOneC } from "../../src/formats/onec";
import { type RunningProcess, seedIntegration, startServe, tempDir } from "../helpers/server";

const running: RunningProcess[] = [];
afterEach(async () => {
  for (const s of running.splice(0)) await s.stop(9);
});

const POLL_MS = 400;

function today(): string {
  return new Intl.DateTimeFormat("en-CA", { timeZone: "Europe/Moscow" }).format(new Date());
}

describe("statements on the real server", () => {
  test("order -> processing -> ready within two poll intervals -> three exports", async () => {
    const server = await startServe({
      dbPath: join(tempDir(), "svc.db"),
      env: { SVC_BANK_POLL_INTERVAL_MS: String(POLL_MS) },
    });
    running.push(server);
    const { accountId, token } = await seedIntegration(server);
    const auth = { authorization: `Bearer ${token}`, "content-type": "application/json" };
    const to = today();
    const from = `${to.slice(0, 8)}01`;
    const res = await fetch(`${server.url}/api/v1/integration/statements`, {
      method: "POST",
      headers: auth,
      body: JSON.stringify({
        bank_account_id: accountId,
        external_id: "e2e-1",
        date_from: from,
        date_to: to,
      }),
    });
    expect(res.status).toBe(201);
    const created = (await res.json()) as { statement_id: string; status: string };
    expect(created.status).toBe("processing");
    const orderedAt = Date.now();

    let status = "processing";
    let polled: Record<string, unknown> = {};
    while (status === "processing" && Date.now() - orderedAt < 20 * POLL_MS) {
      await Bun.sleep(50);
      polled = (await (
        await fetch(`${server.url}/api/v1/integration/statements/${created.statement_id}`, { headers: auth })
      ).json()) as Record<string, unknown>;
      status = polled.status as string;
    }
    expect(status).toBe("ready");
    // The bank request went out with the order and the first poller tick after it found the
    // statement ready: one request, one poll (so it is ready within two poll intervals).
    const log = (await (
      await server.admin("GET", `/sandbox/requests?bank_account_id=${accountId}`)
    ).json()) as {
      requests: { kind: string }[];
    };
    expect(log.requests.map((r) => r.kind)).toEqual(["statement_request", "statement_poll"]);

    const get = (format: string) =>
      fetch(`${server.url}/api/v1/integration/statements/${created.statement_id}/export?format=${format}`, {
        headers: auth,
      });
    const doc = (await (await get("json")).json()) as { operations: { doc_number: string }[] };
    const csv = parse(await (await get("csv")).text(), { columns: true }) as { doc_number: string }[];
    const onec = parseOneC(decodeOneC(new Uint8Array(await (await get("1c")).arrayBuffer())));
    expect(doc.operations.length).toBe(polled.operations_count as number);
    expect(csv.map((r) => r.doc_number)).toEqual(doc.operations.map((o) => o.doc_number));
    expect(onec.documents.map((d) => d.fields.get("Номер")?.value)).toEqual(
      doc.operations.map((o) => o.doc_number),
    );
    expect(await server.stop("SIGTERM")).toBe(0);
  }, 60_000);

  test("kill -9 during a burst: every acknowledged order survives, becomes ready and keeps its id", async () => {
    const dbPath = join(tempDir(), "svc.db");
    const env = { SVC_BANK_POLL_INTERVAL_MS: "200" };
    const first = await startServe({ dbPath, env });
    running.push(first);
    const { accountId, token } = await seedIntegration(first);
    const auth = { authorization: `Bearer ${token}`, "content-type": "application/json" };
    const to = today();
    const acknowledged = new Map<string, string>();
    const send = async (i: number) => {
      try {
        const res = await fetch(`${first.url}/api/v1/integration/statements`, {
          method: "POST",
          headers: auth,
          body: JSON.stringify({
            bank_account_id: accountId,
            external_id: `burst-${i}`,
            date_from: to,
            date_to: to,
          }),
        });
        if (res.status === 201 || res.status === 200) {
          acknowledged.set(`burst-${i}`, ((await res.json()) as { statement_id: string }).statement_id);
        }
      } catch {
        // The process died under this request: not acknowledged.
      }
    };
    const burst = Array.from({ length: 300 }, (_, i) => send(i));
    await Bun.sleep(60);
    first.proc.kill(9);
    await Promise.all(burst);
    await first.stop(9);
    expect(acknowledged.size).toBeGreaterThan(0);

    const second = await startServe({ dbPath, env });
    running.push(second);
    const url2 = second.url;
    for (const [externalId, id] of acknowledged) {
      const again = await fetch(`${url2}/api/v1/integration/statements`, {
        method: "POST",
        headers: auth,
        body: JSON.stringify({
          bank_account_id: accountId,
          external_id: externalId,
          date_from: to,
          date_to: to,
        }),
      });
      expect(again.status).toBe(200);
      expect(((await again.json()) as { statement_id: string }).statement_id).toBe(id);
    }
    const deadline = Date.now() + 15_000;
    let pending = [...acknowledged.values()];
    while (pending.length > 0 && Date.now() < deadline) {
      const still: string[] = [];
      for (const id of pending) {
        const s = (await (
          await fetch(`${url2}/api/v1/integration/statements/${id}`, { headers: auth })
        ).json()) as { status: string };
        if (s.status !== "ready") still.push(id);
      }
      pending = still;
      if (pending.length > 0) await Bun.sleep(100);
    }
    expect(pending).toEqual([]);
    expect(await second.stop("SIGTERM")).toBe(0);
  }, 90_000);
});
