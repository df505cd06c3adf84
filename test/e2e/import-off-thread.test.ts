// lanes: sqlite postgres
// A large statement import against the real server (decisions §11, issue: one integration client
// stalled everyone through import): the file is parsed and stored off the server's thread, so
// /healthz and an unrelated poll keep answering while it is stored; the same file again under the
// same external_id is answered from the stored statement; a server killed mid-import leaves no
// ready statement, and the repeat completes it. On whichever store the lane runs.
import { afterEach, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { PgSyncClient } from "../../src/db/pg/sync-client";
import { serverStoreEnv } from "../helpers/pg";
import { type RunningProcess, seedFileAccount, startServe, tempDir } from "../helpers/server";
import { bankFile } from "../statements/import-support";

const running: RunningProcess[] = [];
afterEach(async () => {
  for (const s of running.splice(0)) await s.stop(9);
});

const STATEMENTS = "/api/v1/integration/statements";

/** The lane's store for a server of this test (PostgreSQL asks for a key shared by replicas). */
function storeEnv(): Record<string, string> {
  return { SVC_SECRET_KEY: Buffer.alloc(32, 5).toString("base64"), ...serverStoreEnv() };
}

interface Statement {
  statement_id: string;
  status: string;
  operations_count?: number;
}

/** The multipart upload as bytes, sent in pieces; `sent` turns true once the last piece is handed over. */
async function upload(
  server: RunningProcess,
  w: { token: string; accountId: string },
  externalId: string,
  file: Uint8Array,
) {
  const form = new FormData();
  form.append("bank_account_id", w.accountId);
  form.append("external_id", externalId);
  form.append("file", new Blob([file as Uint8Array<ArrayBuffer>]), "kl_to_1c.txt");
  const encoded = new Response(form);
  const contentType = encoded.headers.get("content-type") ?? "";
  const bytes = new Uint8Array(await encoded.arrayBuffer());
  const state = { sent: false };
  let at = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      const piece = bytes.subarray(at, at + (1 << 20));
      at += piece.byteLength;
      controller.enqueue(piece);
      if (at >= bytes.byteLength) {
        state.sent = true;
        controller.close();
      }
    },
  });
  const response = fetch(`${server.url}${STATEMENTS}/import`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${w.token}`,
      "content-type": contentType,
      "content-length": String(bytes.byteLength),
    },
    body,
  });
  return { state, response };
}

/** The token's statements, newest first. */
async function list(server: RunningProcess, token: string): Promise<Statement[]> {
  const res = await fetch(`${server.url}${STATEMENTS}?limit=100`, {
    headers: { authorization: `Bearer ${token}` },
  });
  return ((await res.json()) as { statements: Statement[] }).statements;
}

const DOCS_PER_DAY = 800;
const DAYS = 25; // 20,000 documents, some 17 MB

describe("a large import is stored off the server's thread", () => {
  test("health checks and an unrelated poll answer while it is stored; the repeat is the same statement", async () => {
    const dbPath = join(tempDir(), "svc.db");
    const server = await startServe({ dbPath, env: storeEnv() });
    running.push(server);
    const w = await seedFileAccount(server);
    const auth = { authorization: `Bearer ${w.token}` };

    // An earlier, small statement: what another client polls meanwhile.
    const small = bankFile(w.number, "2026-09-01", "2026-09-02");
    const first = await upload(server, w, "small", small.bytes);
    const smallRes = await first.response;
    expect(smallRes.status).toBe(201);
    const smallStatement = (await smallRes.json()) as Statement;

    const big = bankFile(w.number, "2026-10-01", "2026-10-25", { opsPerDay: DOCS_PER_DAY });
    expect(big.operations.length).toBe(DOCS_PER_DAY * DAYS);
    const { state, response } = await upload(server, w, "big", big.bytes);
    let answered: Response | null = null;
    const done = response.then((r) => {
      answered = r;
      return r;
    });
    // Once the whole file is on its way, the server reads, parses and stores it: meanwhile a
    // bounded loop of health checks and polls of the small statement.
    for (let i = 0; i < 2000 && !state.sent; i++) await Bun.sleep(5);
    expect(state.sent).toBe(true);
    const statuses: number[] = [];
    let duringImport = 0;
    const deadline = Date.now() + 120_000;
    for (let i = 0; i < 4000 && answered === null && Date.now() < deadline; i++) {
      const path = i % 2 === 0 ? "/healthz" : `${STATEMENTS}/${smallStatement.statement_id}`;
      const res = await fetch(`${server.url}${path}`, { headers: auth });
      statuses.push(res.status);
      await res.arrayBuffer();
      if (answered === null) duringImport += 1;
      await Bun.sleep(2);
    }
    const bigRes = await done;
    expect(bigRes.status).toBe(201);
    const bigStatement = (await bigRes.json()) as Statement;
    expect(bigStatement.status).toBe("ready");
    expect(bigStatement.operations_count).toBe(big.operations.length);
    expect(statuses.every((s) => s === 200)).toBe(true);
    // Requests answered while the import was being parsed and stored (none, when it held the thread).
    expect(duringImport).toBeGreaterThan(2);

    expect((await list(server, w.token)).length).toBe(2);
    const repeat = await upload(server, w, "big", big.bytes);
    const repeatRes = await repeat.response;
    expect(repeatRes.status).toBe(200);
    const repeated = (await repeatRes.json()) as Statement;
    expect(repeated.statement_id).toBe(bigStatement.statement_id);
    expect(repeated.operations_count).toBe(big.operations.length);
    expect((await list(server, w.token)).length).toBe(2);

    // Another file under the same external_id is still a conflict.
    const other = await upload(server, w, "big", small.bytes);
    expect((await other.response).status).toBe(409);
  }, 180_000);

  test("killed mid-import: no ready statement afterwards; the same file again completes it", async () => {
    const dbPath = join(tempDir(), "svc.db");
    const env = storeEnv();
    const server = await startServe({ dbPath, env });
    running.push(server);
    const w = await seedFileAccount(server);
    const auth = { authorization: `Bearer ${w.token}` };

    const big = bankFile(w.number, "2026-10-01", "2026-10-25", { opsPerDay: DOCS_PER_DAY });
    const { response } = await upload(server, w, "big", big.bytes);
    response.catch(() => {});
    // The statement appears (processing) once the file is read; then the server is killed.
    let seen: Statement[] = [];
    for (let i = 0; i < 4000 && seen.length === 0; i++) {
      seen = await list(server, w.token);
      if (seen.length === 0) await Bun.sleep(2);
    }
    expect(seen.map((s) => s.status)).toEqual(["processing"]);
    await server.stop(9);

    const again = await startServe({ dbPath, env });
    running.push(again);
    const after = await list(again, w.token);
    expect(after.length).toBe(1);
    // Not ready, whatever part of it was stored: a statement is ready only with all of it.
    if (after[0]?.status === "ready") expect(after[0].operations_count).toBe(big.operations.length);
    else expect(after[0]?.status).toBe("processing");

    if (env.SVC_DATABASE_URL) {
      // Replicas keep each other's leases: the killed server's lapses after IMPORT_LEASE_MS (made
      // to lapse now). Until then a repeat answers the statement as it is, processing.
      const held = await upload(again, w, "big", big.bytes);
      const heldRes = await held.response;
      expect(heldRes.status).toBe(200);
      expect(((await heldRes.json()) as Statement).status).toBe("processing");
      const pg = new PgSyncClient(env.SVC_DATABASE_URL, { timeoutMs: 10_000 });
      pg.run("UPDATE statements SET lease_until_ms = 0");
      pg.close();
    }
    const repeat = await upload(again, w, "big", big.bytes);
    const res = await repeat.response;
    expect(res.status).toBe(200);
    const completed = (await res.json()) as Statement;
    expect(completed.statement_id).toBe(seen[0]?.statement_id as string);
    expect(completed.status).toBe("ready");
    expect(completed.operations_count).toBe(big.operations.length);
    const exported = await fetch(`${again.url}${STATEMENTS}/${completed.statement_id}/export?format=json`, {
      headers: auth,
    });
    expect(((await exported.json()) as { operations: unknown[] }).operations.length).toBe(
      big.operations.length,
    );
  }, 180_000);
});
