// lanes: sqlite
// The database stops taking writes while the service runs (read-only disk, full disk). Writes
// answer clean 5xx envelopes (REST 500 internal_error; the agent endpoint 503 or a JSON-RPC
// error, never data it could not audit), nothing crashes, /healthz keeps answering, nothing is
// half-written, and service is normal again once the database is writable.
import { afterEach, describe, expect, test } from "bun:test";
import { ADMIN_TOKEN, BASE } from "../helpers/app";
import { paymentFile } from "../payments/support";
import {
  countRows,
  expectCleanAgent,
  expectEnvelope,
  type FileTestApp,
  IMPORTS,
  MCP,
  makeFileTestApp,
  SLOW,
  STATEMENTS,
  seedWorld,
} from "./support";

let t: FileTestApp | null = null;
afterEach(() => {
  t?.close();
  t = null;
});

const TABLES = [
  "companies",
  "bank_accounts",
  "api_tokens",
  "token_accounts",
  "statements",
  "statement_operations",
  "operations",
  "audit_log",
  "mcp_sessions",
  "payment_imports",
  "payment_items",
] as const;

function counts(app: FileTestApp): Record<(typeof TABLES)[number], number> {
  return Object.fromEntries(TABLES.map((table) => [table, countRows(app, table)])) as Record<
    (typeof TABLES)[number],
    number
  >;
}

/** No corruption and no half-written statement. */
function expectConsistent(app: FileTestApp): void {
  const sqlite = app.services.database.sqlite;
  expect(sqlite.query<{ integrity_check: string }, []>("PRAGMA integrity_check").all()).toEqual([
    { integrity_check: "ok" },
  ]);
  expect(sqlite.query("PRAGMA foreign_key_check").all()).toEqual([]);
  const broken = sqlite
    .query(
      `SELECT s.id, s.status, s.operations_count, s.fetched_at,
              (SELECT COUNT(*) FROM statement_operations so WHERE so.statement_id = s.id) AS linked
         FROM statements s
        WHERE (s.status = 'ready' AND (s.fetched_at IS NULL OR s.operations_count IS NULL
                 OR s.operations_count <> (SELECT COUNT(*) FROM statement_operations so WHERE so.statement_id = s.id)))
           OR (s.status <> 'ready' AND s.operations_count IS NOT NULL)`,
    )
    .all();
  expect(broken).toEqual([]);
  const orphans = sqlite
    .query(
      `SELECT so.statement_id, so.operation_id FROM statement_operations so
         JOIN statements s ON s.id = so.statement_id
        WHERE NOT EXISTS (SELECT 1 FROM operations o
                           WHERE o.operation_id = so.operation_id AND o.bank_account_id = s.bank_account_id)`,
    )
    .all();
  expect(orphans).toEqual([]);
  // Every payment import has its items; no item without its import.
  expect(
    sqlite
      .query(
        `SELECT i.id FROM payment_imports i WHERE NOT EXISTS (SELECT 1 FROM payment_items p WHERE p.import_id = i.id)
         UNION ALL
         SELECT p.id FROM payment_items p WHERE NOT EXISTS (SELECT 1 FROM payment_imports i WHERE i.id = p.import_id)`,
      )
      .all(),
  ).toEqual([]);
}

async function settle(app: FileTestApp): Promise<void> {
  await app.services.poller.idle();
  await app.services.poller.tick();
  await app.services.poller.idle();
}

/** A live world: accounts, tokens, an agent session, a ready statement, one just requested from the bank. */
async function prepare(app: FileTestApp) {
  const world = seedWorld(app);
  const session = await initialize(app, world.mcp.token);
  expect(session.status).toBe(200);
  const sessionId = session.headers.get("mcp-session-id")!;
  app.services.statements.orderFromUi(world.account.bank_account_id, "2026-11-01", "2026-11-10");
  await settle(app);
  // Requested from the bank, ready at its next poll: that poll will have to write.
  app.services.statements.orderFromUi(world.other.bank_account_id, "2026-11-01", "2026-11-19");
  await app.services.poller.idle();
  // The tokens' last_used_at is written at most once a minute: done here, before the fault.
  expect((await app.request("GET", STATEMENTS, { token: world.integration.token })).status).toBe(200);
  return { world, sessionId };
}

function initialize(app: FileTestApp, token: string): Promise<Response> {
  return app.request("POST", MCP, {
    token,
    body: {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: {
        protocolVersion: "2025-06-18",
        capabilities: {},
        clientInfo: { name: "fault", version: "1" },
      },
    },
  });
}

function rpc(app: FileTestApp, token: string, sessionId: string, message: Record<string, unknown>) {
  return app.request("POST", MCP, {
    token,
    body: { jsonrpc: "2.0", ...message },
    headers: { "mcp-session-id": sessionId },
  });
}

function uploadRequest(app: FileTestApp, token: string, accountId: string): Promise<Response> {
  const number = app.services.accounts.findById(accountId)!.accountNumber;
  const form = new FormData();
  form.append("bank_account_id", accountId);
  form.append("file", new Blob([paymentFile(number) as Uint8Array<ArrayBuffer>]), "p.txt");
  return app.app.handle(
    new Request(`${BASE}${IMPORTS}`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}` },
      body: form,
    }),
  );
}

async function expect500(res: Response, what: string): Promise<void> {
  const text = await res.text();
  expect(res.headers.get("x-request-id"), what).toBeTruthy();
  expect(text, what).not.toContain("    at ");
  expect(res.status, `${what}: ${text}`).toBe(500);
  expect(expectEnvelope(JSON.parse(text), 500, what).code).toBe("internal_error");
}

/** Every write the service offers, once; each must fail cleanly while the database refuses writes. */
async function writesFailCleanly(
  app: FileTestApp,
  world: ReturnType<typeof seedWorld>,
  sessionId: string,
  tag: string,
) {
  const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
  await expect500(
    await app.request("POST", STATEMENTS, {
      token: world.integration.token,
      body: {
        bank_account_id: world.account.bank_account_id,
        external_id: `${tag}-order`,
        date_from: "2026-11-02",
        date_to: "2026-11-03",
      },
    }),
    "order a statement",
  );
  await expect500(
    await app.request("POST", "/admin/api/companies", {
      body: { name: `ООО ${tag}`, inn: "7707083893" },
      headers: admin,
    }),
    "admin: create a company",
  );
  await expect500(
    await app.request("POST", "/admin/api/tokens", {
      body: { company_id: world.company.company_id, name: tag, purpose: "integration" },
      headers: admin,
    }),
    "admin: create a token",
  );
  await expect500(
    await app.request("POST", "/admin/api/statements", {
      body: {
        bank_account_id: world.account.bank_account_id,
        date_from: "2026-11-04",
        date_to: "2026-11-05",
      },
      headers: admin,
    }),
    "admin: order a statement",
  );
  await expect500(
    await uploadRequest(app, world.integration.token, world.account.bank_account_id),
    "upload a payment file",
  );

  // The agent endpoint: a new session cannot be stored, and a call that cannot be audited gets
  // no data: both are 503 service_unavailable.
  const init = await expectCleanAgent(await initialize(app, world.mcp.token), "initialize");
  expect(init.status).toBe(503);
  expect((init.json as { error: { code: string } }).error.code).toBe("service_unavailable");
  for (const [i, name] of ["list_bank_accounts", "get_balance"].entries()) {
    const call = await expectCleanAgent(
      await rpc(app, world.mcp.token, sessionId, {
        id: 10 + i,
        method: "tools/call",
        params: {
          name,
          arguments: name === "get_balance" ? { bank_account_id: world.account.bank_account_id } : {},
        },
      }),
      name,
    );
    expect(call.status).toBe(503);
    expect(call.text).not.toContain(world.account.bank_account_id);
  }
  const ping = await expectCleanAgent(await rpc(app, world.mcp.token, sessionId, { id: 20, method: "ping" }));
  expect(ping.status).toBe(503);
  const note = await expectCleanAgent(
    await rpc(app, world.mcp.token, sessionId, { method: "notifications/initialized" }),
    "notification",
  );
  expect(note.status).toBe(503);
  const del = await expectCleanAgent(
    await app.request("DELETE", MCP, { token: world.mcp.token, headers: { "mcp-session-id": sessionId } }),
    "DELETE",
  );
  expect(del.status).toBe(503);
}

/** The same writes succeed once the database takes writes again. */
async function writesWork(
  app: FileTestApp,
  world: ReturnType<typeof seedWorld>,
  sessionId: string,
  tag: string,
) {
  const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
  const order = await app.request("POST", STATEMENTS, {
    token: world.integration.token,
    body: {
      bank_account_id: world.account.bank_account_id,
      external_id: `${tag}-order`,
      date_from: "2026-11-02",
      date_to: "2026-11-03",
    },
  });
  expect(order.status).toBe(201);
  const company = await app.request("POST", "/admin/api/companies", {
    body: { name: `ООО ${tag}`, inn: "7707083893" },
    headers: admin,
  });
  expect(company.status).toBe(201);
  expect((await uploadRequest(app, world.integration.token, world.account.bank_account_id)).status).toBe(201);
  const init = await initialize(app, world.mcp.token);
  expect(init.status).toBe(200);
  const call = await expectCleanAgent(
    await rpc(app, world.mcp.token, sessionId, {
      id: 30,
      method: "tools/call",
      params: { name: "list_bank_accounts", arguments: {} },
    }),
  );
  expect((call.rpc!.result as { isError: boolean }).isError).toBe(false);
  await settle(app);
  const poll = await app.request(
    "GET",
    `${STATEMENTS}/${((await order.json()) as { statement_id: string }).statement_id}`,
    {
      token: world.integration.token,
    },
  );
  expect(((await poll.json()) as { status: string }).status).toBe("ready");
}

describe("the database stops taking writes while serving", () => {
  test(
    "read-only (PRAGMA query_only on the service's connection): clean 5xx, no crash, full recovery",
    async () => {
      t = makeFileTestApp();
      const app = t;
      const { world, sessionId } = await prepare(app);
      const before = counts(app);
      const sqlite = app.services.database.sqlite;

      sqlite.exec("PRAGMA query_only = ON");
      await writesFailCleanly(app, world, sessionId, "ro");
      // The poller meets the fault on its next pass: logged, never an unhandled rejection.
      app.clock.advance(60_000);
      await app.services.poller.tick();
      await app.services.poller.idle();
      expect(app.logs.some((l) => l.includes("statement poll failure could not be recorded"))).toBe(true);
      // Still answering, reads included.
      expect((await app.request("GET", "/healthz")).status).toBe(200);
      expect((await app.request("GET", STATEMENTS, { token: world.integration.token })).status).toBe(200);
      expect(counts(app)).toEqual(before);

      sqlite.exec("PRAGMA query_only = OFF");
      expectConsistent(app);
      await writesWork(app, world, sessionId, "ro");
      // The statement the poller could not finish is finished now.
      const rows = sqlite.query<{ status: string }, []>("SELECT status FROM statements").all();
      expect(rows.every((r) => r.status === "ready")).toBe(true);
      expectConsistent(app);
    },
    SLOW,
  );

  test(
    "full disk (PRAGMA max_page_count at the current size): clean 5xx or success, never half-written",
    async () => {
      t = makeFileTestApp();
      const app = t;
      const { world, sessionId } = await prepare(app);
      const sqlite = app.services.database.sqlite;
      // No free pages left: the next writes that need a page fail with SQLITE_FULL.
      sqlite.exec("PRAGMA wal_checkpoint(TRUNCATE)");
      const pages = sqlite.query<{ page_count: number }, []>("PRAGMA page_count").get()!.page_count;
      sqlite.exec(`PRAGMA max_page_count = ${pages}`);
      const start = counts(app);

      const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
      const created = { order: 0, company: 0, upload: 0 };
      const failed = { order: 0, company: 0, upload: 0, tool: 0 };
      const failedOrders: string[] = [];
      for (let i = 0; i < 60; i++) {
        const externalId = `full-${i}-${"x".repeat(200)}`;
        const responses: ["order" | "company" | "upload", Response][] = [
          [
            "order",
            await app.request("POST", STATEMENTS, {
              token: world.integration.token,
              body: {
                bank_account_id: world.account.bank_account_id,
                external_id: externalId,
                date_from: "2026-10-01",
                date_to: "2026-10-31",
              },
            }),
          ],
          [
            "company",
            await app.request("POST", "/admin/api/companies", {
              body: { name: `ООО ${"Ж".repeat(200)} ${i}`, inn: "7707083893" },
              headers: admin,
            }),
          ],
          ["upload", await uploadRequest(app, world.integration.token, world.account.bank_account_id)],
        ];
        for (const [what, res] of responses) {
          const text = await res.text();
          expect(res.headers.get("x-request-id")).toBeTruthy();
          if (res.status >= 500) {
            failed[what] += 1;
            expect(expectEnvelope(JSON.parse(text), 500, what).code).toBe("internal_error");
            if (what === "order") failedOrders.push(externalId);
          } else {
            expect(res.status, `${what}: ${text}`).toBe(201);
            created[what] += 1;
          }
        }
        const call = await expectCleanAgent(
          await rpc(app, world.mcp.token, sessionId, {
            id: i,
            method: "tools/call",
            params: {
              name: "list_statements",
              arguments: { bank_account_id: world.account.bank_account_id },
            },
          }),
        );
        if (call.status === 503) failed.tool += 1;
        else expect((call.rpc!.result as { isError: boolean }).isError).toBe(false);
        await app.services.poller.tick();
        await app.services.poller.idle();
        expect((await app.request("GET", "/healthz")).status).toBe(200);
      }
      // The disk did fill up, for every kind of write.
      expect(failed.order * failed.company * failed.upload * failed.tool).toBeGreaterThan(0);
      // What was answered 500 left nothing behind; what was answered 201 is there, whole.
      for (const externalId of failedOrders) {
        expect(sqlite.query("SELECT id FROM statements WHERE external_id = ?").all(externalId)).toEqual([]);
      }
      const end = counts(app);
      expect(end.statements - start.statements).toBe(created.order);
      expect(end.payment_imports - start.payment_imports).toBe(created.upload);
      // An admin change lands together with its audit entry, or not at all.
      expect(end.companies - start.companies).toBe(created.company);
      expectConsistent(app);

      // Space again.
      sqlite.exec("PRAGMA max_page_count = 1073741823");
      await writesWork(app, world, sessionId, "full");
      // The orders the poller could not finish were put off (backoff): past it, they finish.
      app.clock.advance(10 * 60_000);
      await settle(app);
      await settle(app);
      expect(
        sqlite.query<{ n: number }, []>("SELECT COUNT(*) AS n FROM statements WHERE status <> 'ready'").get()!
          .n,
      ).toBe(0);
      expectConsistent(app);
    },
    SLOW,
  );
});
