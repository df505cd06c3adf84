// lanes: postgres
// Three real `svc serve` processes on one PostgreSQL database, as replicas behind a load balancer
// would run: they migrate it together, and share rate limits, revocations, agent sessions, orders,
// the statements' bank requests and the payment submissions.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { embeddedPgMigrations } from "../../src/db/pg/migrate";
import { withAccountKey } from "../../src/formats/validators";
import { requests, type TestApp } from "../helpers/app";
import { connect, freshDatabase } from "../helpers/pg";
import { type RunningProcess, removeTempDirs, seedToken, startServe, tempDir } from "../helpers/server";
import { approvedCallback, exchangeCode, form, mcpCall, PUBLIC, pkce, register } from "../oauth/support";
import { paymentFile } from "../payments/support";

/** A harness limit for a test that starts processes, not a performance assertion. */
const E2E_TIMEOUT_MS = 90_000;
const SECRET_KEY = Buffer.alloc(32, 9).toString("base64");
const POLL_MS = 150;
const METRICS_TOKEN = "m".repeat(32);

const replicas: RunningProcess[] = [];
let url = "";
/** The account whose statement the order test made ready (the agent test searches it). */
let ordered: { companyId: string; accountId: string } | null = null;

function startReplica(env: Record<string, string> = {}): Promise<RunningProcess> {
  return startServe({
    // Never opened: the replicas' database is PostgreSQL.
    dbPath: join(tempDir(), "unused.db"),
    env: {
      SVC_DATABASE_URL: url,
      SVC_SECRET_KEY: SECRET_KEY,
      SVC_BANK_POLL_INTERVAL_MS: String(POLL_MS),
      SVC_METRICS_TOKEN: METRICS_TOKEN,
      SVC_PUBLIC_URL: PUBLIC,
      ...env,
    },
  });
}

beforeAll(async () => {
  url = await freshDatabase();
  // Together, on an empty database: the migrations must be applied once, not raced.
  replicas.push(...(await Promise.all([startReplica(), startReplica(), startReplica()])));
}, E2E_TIMEOUT_MS);

afterAll(async () => {
  for (const r of replicas) await r.stop("SIGKILL");
  removeTempDirs();
});

/**
 * What a request gets once a change made on another replica has reached this one: the
 * announcement travels asynchronously (milliseconds), so a bounded wait for the first answer
 * other than `before`, which must then hold three more times.
 */
async function settled<T>(answer: () => Promise<T>, before: T): Promise<T> {
  const deadline = Date.now() + 5000;
  let got = await answer();
  while (got === before && Date.now() < deadline) {
    await Bun.sleep(10);
    got = await answer();
  }
  for (let i = 0; i < 3; i++) expect(await answer()).toBe(got);
  return got;
}

/** Replica i % 3: requests spread over the fleet as a round-robin balancer would. */
const replica = (i: number) => replicas[i % replicas.length]!;

/** A replica as the in-process OAuth helpers drive an app: the same requests, over the network. */
function overNetwork(r: RunningProcess): TestApp {
  const handle = async (req: Request) => {
    const url = new URL(req.url);
    return fetch(`${r.url}${url.pathname}${url.search}`, {
      method: req.method,
      headers: req.headers,
      body: req.method === "GET" ? undefined : await req.text(),
      redirect: "manual",
    });
  };
  return { app: { handle }, ...requests(handle) } as unknown as TestApp;
}

describe("replicas on one PostgreSQL database", () => {
  test("started together on an empty database, they applied each migration once", async () => {
    const sql = connect(url);
    const applied = await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM drizzle.__drizzle_migrations`;
    expect(applied[0]!.n).toBe(embeddedPgMigrations().length);
    for (const r of replicas) {
      const ready = await fetch(`${r.url}/readyz`);
      const body = (await ready.json()) as { checks: Record<string, string> };
      expect(body.checks.database).toBe("ok");
      expect(body.checks.migrations).toBe("ok");
    }
    // Metrics read the shared database: its size, and no WAL file of svc's own.
    const metrics = await fetch(`${replicas[0]!.url}/metrics`, {
      headers: { authorization: `Bearer ${METRICS_TOKEN}` },
    });
    expect(metrics.status).toBe(200);
    const text = await metrics.text();
    expect(Number(/svc_database_bytes\{file="database"\} (\d+)/.exec(text)?.[1])).toBeGreaterThan(1_000_000);
    expect(text).toContain('svc_database_bytes{file="wal"} 0');
    expect(text).toContain("svc_agent_sessions_open 0");
  });

  test(
    "200 parallel requests over 3 replicas against a 100/minute token: exactly 100 pass",
    async () => {
      const seeded = await seedToken(replicas[0]!, { rate_limit_per_minute: 100 });
      const answers = await Promise.all(
        Array.from({ length: 200 }, (_, i) =>
          fetch(`${replica(i).url}/api/v1/integration/statements`, {
            headers: { authorization: `Bearer ${seeded.token}` },
          }).then(async (res) => {
            await res.arrayBuffer();
            return { status: res.status, remaining: res.headers.get("x-ratelimit-remaining") };
          }),
        ),
      );
      const passed = answers.filter((a) => a.status === 200);
      // A window may turn over during the burst (a minute boundary): then more pass, never fewer.
      expect(passed.length).toBeGreaterThanOrEqual(100);
      if (passed.length === 100) {
        expect(passed.map((a) => Number(a.remaining)).sort((a, b) => a - b)).toEqual(
          Array.from({ length: 100 }, (_, i) => i),
        );
        expect(answers.filter((a) => a.status === 429)).toHaveLength(100);
      }
    },
    E2E_TIMEOUT_MS,
  );

  test("a token revoked on one replica fails on every replica from their next request", async () => {
    const seeded = await seedToken(replicas[0]!);
    const poll = (r: RunningProcess) =>
      fetch(`${r.url}/api/v1/integration/statements`, {
        headers: { authorization: `Bearer ${seeded.token}` },
      });
    // Each replica holds the token in memory by now.
    for (let i = 0; i < 6; i++) expect((await poll(replica(i))).status).toBe(200);
    expect((await replicas[1]!.admin("POST", `/tokens/${seeded.tokenId}/revoke`)).status).toBe(200);
    for (const r of replicas) expect(await settled(async () => (await poll(r)).status, 200)).toBe(401);
  });

  test("a grant taken away on one replica counts on every replica from their next request", async () => {
    const seeded = await seedToken(replicas[0]!);
    const list = (r: RunningProcess) =>
      fetch(`${r.url}/api/v1/integration/statements?bank_account_id=${seeded.accountId}`, {
        headers: { authorization: `Bearer ${seeded.token}` },
      });
    for (let i = 0; i < 6; i++) expect((await list(replica(i))).status).toBe(200);
    const patched = await replicas[2]!.admin("PATCH", `/tokens/${seeded.tokenId}`, { accounts: [] });
    expect(patched.status).toBe(200);
    for (const r of replicas) expect(await settled(async () => (await list(r)).status, 200)).toBe(403);
  });

  test(
    "50 identical orders over 3 replicas: one statement, one bank request; every replica exports the same bytes",
    async () => {
      const seeded = await seedToken(replicas[0]!);
      const auth = { authorization: `Bearer ${seeded.token}`, "content-type": "application/json" };
      const order = {
        bank_account_id: seeded.accountId,
        external_id: "same-order",
        date_from: "2026-10-01",
        date_to: "2026-10-05",
      };
      const answers = await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          fetch(`${replica(i).url}/api/v1/integration/statements`, {
            method: "POST",
            headers: auth,
            body: JSON.stringify(order),
          }).then(async (res) => ({
            status: res.status,
            body: (await res.json()) as { statement_id: string },
          })),
        ),
      );
      expect(answers.filter((a) => a.status === 201)).toHaveLength(1);
      expect(answers.filter((a) => a.status === 200)).toHaveLength(49);
      const ids = new Set(answers.map((a) => a.body.statement_id));
      expect(ids.size).toBe(1);
      const id = [...ids][0]!;

      const deadline = Date.now() + 30 * POLL_MS + 10_000;
      let status = "processing";
      for (let i = 0; status === "processing" && Date.now() < deadline; i++) {
        await Bun.sleep(50);
        const res = await fetch(`${replica(i).url}/api/v1/integration/statements/${id}`, { headers: auth });
        status = ((await res.json()) as { status: string }).status;
      }
      expect(status).toBe("ready");
      ordered = seeded;
      const log = (await (
        await replicas[2]!.admin("GET", `/sandbox/requests?bank_account_id=${seeded.accountId}`)
      ).json()) as { requests: { kind: string }[] };
      expect(log.requests.filter((r) => r.kind === "statement_request")).toHaveLength(1);

      for (const format of ["json", "csv", "1c"]) {
        const bodies = await Promise.all(
          replicas.map((r) =>
            fetch(`${r.url}/api/v1/integration/statements/${id}/export?format=${format}`, {
              headers: auth,
            }).then(async (res) => {
              expect(res.status).toBe(200);
              return Buffer.from(await res.arrayBuffer()).toString("base64");
            }),
          ),
        );
        expect(bodies[0]!.length).toBeGreaterThan(100);
        expect(bodies[1]).toBe(bodies[0]!);
        expect(bodies[2]).toBe(bodies[0]!);
      }
    },
    E2E_TIMEOUT_MS,
  );

  test(
    "50 identical payment submissions over 3 replicas: each payment sent to the bank once, every answer the same",
    async () => {
      const admin = replicas[0]!;
      const company = (await (
        await admin.admin("POST", "/companies", { name: "ООО Ромашка", inn: "7719617469" })
      ).json()) as { company_id: string };
      const number = withAccountKey("40702810900000000077", "044525225");
      const account = (await (
        await admin.admin("POST", "/bank-accounts", {
          company_id: company.company_id,
          bank: "sandbox",
          account_number: number,
          bik: "044525225",
        })
      ).json()) as { bank_account_id: string };
      const payer = (await (
        await admin.admin("POST", "/tokens", {
          company_id: company.company_id,
          name: "payer",
          purpose: "integration",
          mode: "test",
          scope_read_statements: true,
          scope_send_payments: true,
          accounts: [
            {
              bank_account_id: account.bank_account_id,
              allow_read_statements: true,
              allow_send_payments: true,
            },
          ],
          rate_limit_per_minute: 10000,
        })
      ).json()) as { token: string };
      const auth = { authorization: `Bearer ${payer.token}` };
      // 300 payments: the first replica's sending takes a while, and repeats reach the others meanwhile.
      const form = new FormData();
      form.append("bank_account_id", account.bank_account_id);
      const file = paymentFile(
        number,
        Array.from({ length: 300 }, (_, i) => ({ number: String(200 + i) })),
      );
      form.append("file", new Blob([file as Uint8Array<ArrayBuffer>]), "payments.txt");
      const upload = await fetch(`${replica(1).url}/api/v1/integration/payments/imports`, {
        method: "POST",
        headers: auth,
        body: form,
      });
      expect(upload.status).toBe(201);
      const { import_id } = (await upload.json()) as { import_id: string };

      const answers = await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          fetch(`${replica(i).url}/api/v1/integration/payments/imports/${import_id}/submit`, {
            method: "POST",
            headers: { ...auth, "content-type": "application/json" },
            body: JSON.stringify({ external_id: "pay-once" }),
          }).then(async (res) => ({ status: res.status, body: await res.text() })),
        ),
      );
      expect(answers.map((a) => a.status)).toEqual(Array(50).fill(200));
      expect(new Set(answers.map((a) => a.body)).size).toBe(1);
      const items = (JSON.parse(answers[0]!.body) as { items: { status: string }[] }).items;
      expect(items.map((i) => i.status)).toEqual(Array(300).fill("submitted"));
      const log = (await (
        await replicas[2]!.admin("GET", `/sandbox/requests?bank_account_id=${account.bank_account_id}`)
      ).json()) as { requests: { kind: string; client_ref: string }[] };
      const sent = log.requests.filter((r) => r.kind === "payment_submit");
      expect(sent).toHaveLength(300);
      expect(new Set(sent.map((r) => r.client_ref)).size).toBe(300);
    },
    E2E_TIMEOUT_MS,
  );

  test("an agent host signs in across replicas; a refresh token used twice ends the grant on all", async () => {
    const seeded = await seedToken(replicas[0]!);
    const [a, b, c] = replicas.map(overNetwork) as [TestApp, TestApp, TestApp];
    // Registered on one, authorized on another, approved and exchanged on the third.
    const clientId = await register(a);
    const { verifier, challenge } = pkce();
    const callback = await approvedCallback(b, clientId, challenge, {
      company_id: seeded.companyId,
      accounts: [{ bank_account_id: seeded.accountId }],
    });
    const tokens = await exchangeCode(c, clientId, callback, verifier);
    for (const r of [a, b, c]) expect((await mcpCall(r, tokens.access_token)).status).toBe(200);

    const refresh = (on: TestApp, token: string) =>
      form(on, "/oauth/token", { grant_type: "refresh_token", refresh_token: token, client_id: clientId });
    const rotated = await refresh(a, tokens.refresh_token);
    expect(rotated.status).toBe(200);
    const next = (await rotated.json()) as { access_token: string; refresh_token: string };
    expect((await mcpCall(b, next.access_token)).status).toBe(200);
    // The first refresh token again, on another replica: taken as stolen, the whole grant ends.
    expect((await refresh(c, tokens.refresh_token)).status).toBe(400);
    for (const r of [a, b, c]) {
      expect(await settled(async () => (await mcpCall(r, next.access_token)).status, 200)).toBe(401);
    }
  });

  test("an agent session begun on one replica works on another, cursors too; DELETE on a third ends it on all", async () => {
    expect(ordered).not.toBeNull();
    const agent = (await (
      await replicas[0]!.admin("POST", "/tokens", {
        company_id: ordered!.companyId,
        name: "agent",
        purpose: "mcp",
        mode: "test",
        scope_read_statements: true,
        accounts: [{ bank_account_id: ordered!.accountId, allow_read_statements: true }],
        rate_limit_per_minute: 10000,
      })
    ).json()) as { token: string };
    const post = (r: RunningProcess, body: unknown, session?: string) =>
      fetch(`${r.url}/api/v1/mcp`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${agent.token}`,
          "content-type": "application/json",
          ...(session ? { "mcp-session-id": session } : {}),
        },
        body: JSON.stringify(body),
      });
    const init = await post(replicas[0]!, {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "e2e", version: "1" } },
    });
    expect(init.status).toBe(200);
    const session = init.headers.get("mcp-session-id")!;
    expect(session).toBeString();
    const call = (r: RunningProcess, id: number, name: string, args: Record<string, unknown> = {}) =>
      post(r, { jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: args } }, session);
    const result = async (res: Response) => {
      expect(res.status).toBe(200);
      const body = (await res.json()) as {
        result?: { isError?: boolean; structuredContent: Record<string, unknown> };
      };
      expect(body.result?.isError ?? false).toBe(false);
      return body.result!.structuredContent;
    };
    const accounts = await result(await call(replicas[1]!, 2, "list_bank_accounts"));
    expect(accounts.bank_accounts).toHaveLength(1);
    // Search runs on PostgreSQL's own index, through the replica's read-only connection.
    const period = { bank_account_id: ordered!.accountId, date_from: "2026-10-01", date_to: "2026-10-05" };
    const all = (await result(await call(replicas[2]!, 3, "search_operations", period))).operations as {
      operation_id: string;
      purpose: string;
    }[];
    expect(all.length).toBeGreaterThan(0);
    const word = all[0]!.purpose.split(/\s+/).find((w) => /^[А-Яа-яЁё]{4,}$/.test(w))!;
    expect(word).toBeString();
    const found = (
      await result(
        await call(replicas[1]!, 4, "search_operations", {
          ...period,
          query: word.slice(0, 4).toLowerCase(),
        }),
      )
    ).operations as { purpose: string }[];
    expect(found.length).toBeGreaterThan(0);
    expect(found.length).toBeLessThanOrEqual(all.length);
    for (const op of found)
      expect(op.purpose.toLowerCase().replaceAll("ё", "е")).toContain(
        word.slice(0, 4).toLowerCase().replaceAll("ё", "е"),
      );

    // A signed cursor made on one replica goes on on another (one key for the fleet).
    expect(all.length).toBeGreaterThan(4);
    const page = async (r: RunningProcess, id: number, cursor?: string) =>
      (await result(await call(r, id, "search_operations", { ...period, limit: 2, cursor }))) as {
        operations: { operation_id: string }[];
        next_cursor: string | null;
      };
    const first = await page(replicas[2]!, 5);
    const second = await page(replicas[0]!, 6, first.next_cursor!);
    const third = await page(replicas[1]!, 7, second.next_cursor!);
    expect([first, second, third].flatMap((p) => p.operations.map((o) => o.operation_id))).toEqual(
      all.slice(0, 6).map((o) => o.operation_id),
    );

    const ended = await fetch(`${replicas[2]!.url}/api/v1/mcp`, {
      method: "DELETE",
      headers: { authorization: `Bearer ${agent.token}`, "mcp-session-id": session },
    });
    expect(ended.status).toBe(204);
    // A session unknown to the protocol revision of sessions: JSON-RPC -32600 (with HTTP 200).
    const rpcCode = async (r: RunningProcess) => {
      const res = await call(r, 10, "list_bank_accounts");
      const body = (await res.json()) as { error?: { code: number; message: string } };
      return res.status === 200 && body.error?.message.includes("session not found") ? body.error.code : 0;
    };
    for (const r of replicas) expect(await settled(() => rpcCode(r), 0)).toBe(-32600);

    // Every call was audited, whichever replica answered it.
    const audit = (await (await replicas[0]!.admin("GET", "/audit-log?limit=100")).json()) as {
      entries: { action: string; tool?: string | null }[];
    };
    expect(audit.entries.filter((e) => e.action.startsWith("mcp.")).length).toBeGreaterThanOrEqual(2);
  });
});

describe("a replica killed mid-poll", () => {
  test(
    "loses nothing: once its lease passes another replica finishes the statement, the bank asked once",
    async () => {
      const lonely = await freshDatabase();
      const env = { SVC_DATABASE_URL: lonely, SVC_POLL_LEASE_SECONDS: "2" };
      const first = await startReplica(env);
      replicas.push(first);
      // Large enough that storing its operations takes a while (stored in chunks, lease renewed).
      const seeded = await seedToken(first, { sandbox: { ops_per_day: 400 } });
      const auth = { authorization: `Bearer ${seeded.token}`, "content-type": "application/json" };
      const order = (server: RunningProcess, externalId: string) =>
        fetch(`${server.url}/api/v1/integration/statements`, {
          method: "POST",
          headers: auth,
          body: JSON.stringify({
            bank_account_id: seeded.accountId,
            external_id: externalId,
            date_from: "2026-09-15",
            date_to: "2026-10-15",
          }),
        }).then(async (res) => ((await res.json()) as { statement_id: string }).statement_id);
      const id = await order(first, "big");
      const sql = connect(lonely);
      // Killed while its operations are being stored: some are, the statement is not ready.
      for (let i = 0; i < 2000; i++) {
        const [row] = await sql<{ stored: number; status: string }[]>`
          SELECT (SELECT count(*)::int FROM statement_operations WHERE statement_id = ${id}) AS stored, status
            FROM statements WHERE id = ${id}`;
        if (row!.stored > 0 || row!.status !== "processing") break;
        await Bun.sleep(2);
      }
      first.proc.kill(9);
      await first.stop(9);
      const [left] = await sql<{ stored: number; status: string; lease: number }[]>`
        SELECT (SELECT count(*)::int FROM statement_operations WHERE statement_id = ${id}) AS stored, status,
               lease_until_ms::float8 AS lease
          FROM statements WHERE id = ${id}`;
      expect(left!.status).toBe("processing");
      expect(left!.stored).toBeGreaterThan(0);
      expect(left!.lease).toBeGreaterThan(Date.now() - 5000);

      const second = await startReplica(env);
      replicas.push(second);
      const deadline = Date.now() + 60_000;
      let status = "processing";
      let count = 0;
      while (status === "processing" && Date.now() < deadline) {
        await Bun.sleep(100);
        const body = (await (
          await fetch(`${second.url}/api/v1/integration/statements/${id}`, { headers: auth })
        ).json()) as { status: string; operations_count: number };
        status = body.status;
        count = body.operations_count;
      }
      expect(status).toBe("ready");
      const log = (await (
        await second.admin("GET", `/sandbox/requests?bank_account_id=${seeded.accountId}`)
      ).json()) as { requests: { kind: string }[] };
      expect(log.requests.filter((r) => r.kind === "statement_request")).toHaveLength(1);

      // The same period ordered afresh gives the same operations: none lost, none twice.
      const fresh = await order(second, "again");
      let again = "processing";
      const freshDeadline = Date.now() + 60_000;
      while (again === "processing" && Date.now() < freshDeadline) {
        await Bun.sleep(100);
        again = (
          (await (
            await fetch(`${second.url}/api/v1/integration/statements/${fresh}`, { headers: auth })
          ).json()) as { status: string }
        ).status;
      }
      expect(again).toBe("ready");
      const operations = async (statementId: string) =>
        (
          (await (
            await fetch(`${second.url}/api/v1/integration/statements/${statementId}/export?format=json`, {
              headers: auth,
            })
          ).json()) as { operations: { operation_id: string }[] }
        ).operations;
      const [taken, ordered] = await Promise.all([operations(id), operations(fresh)]);
      expect(taken.length).toBe(count);
      expect(taken).toEqual(ordered);
    },
    E2E_TIMEOUT_MS,
  );
});
