// A whole service in memory for tests: the same wiring as production (buildServices + createApp),
// with a manual clock, captured logs and a settable client address.

import type { TokenGrantInput } from "../../src/admin/model";
import { createApp } from "../../src/app";
import { type Config, loadConfig } from "../../src/config";
import { buildServices, type ServiceOverrides, type Services } from "../../src/container";
import { ManualClock } from "../../src/core/clock";
import { createLogger } from "../../src/core/logger";
import { migrate, openDatabase } from "../../src/db/open";
import type { SqlStatement, SqlValue } from "../../src/db/sql-port";
import type { Store } from "../../src/db/store";
import { withAccountKey } from "../../src/formats/validators";
import { cloneTemplate, onPostgres, postgresTestStore } from "./pg";

export const ADMIN_TOKEN = "test-admin-token-0123456789abcdefghijkl";
export const BASE = "http://localhost";

export interface TestApp {
  app: ReturnType<typeof createApp>;
  services: Services;
  clock: ManualClock;
  logs: string[];
  /** Address the next requests come from (the socket peer). */
  clientIp: { value: string };
  request(
    method: string,
    path: string,
    init?: { token?: string; body?: unknown; headers?: Record<string, string> },
  ): Promise<Response>;
  admin(method: string, path: string, body?: unknown): Promise<Response>;
  /** Statements on the app's store, SQLite or PostgreSQL (portable SQL, see src/db/sql-port.ts). */
  db: {
    query<Row = Record<string, unknown>, Params extends SqlValue[] = SqlValue[]>(
      text: string,
    ): SqlStatement<Row, Params>;
  };
  fixtures: Fixtures;
}

export interface TestAppOptions {
  /** A database file instead of ":memory:" (a second, read-only connection then exists); always
   *  SQLite, also in the PostgreSQL lane. */
  dbPath?: string;
  overrides?: ServiceOverrides;
}

export function makeTestApp(
  env: Record<string, string> = {},
  start = "2026-11-20T09:00:00Z",
  options: TestAppOptions = {},
): TestApp {
  const dbPath = options.dbPath ?? ":memory:";
  // The PostgreSQL lane (SVC_TEST_STORE=postgres): every app without a file of its own gets a
  // PostgreSQL database of its own.
  const databaseUrl = onPostgres && options.dbPath === undefined ? cloneTemplate() : null;
  const config: Config = loadConfig({
    SVC_DB_PATH: dbPath,
    SVC_ADMIN_TOKEN: ADMIN_TOKEN,
    SVC_SECRET_KEY: Buffer.alloc(32, 7).toString("base64"),
    ...(databaseUrl ? { SVC_DATABASE_URL: databaseUrl } : {}),
    ...env,
  });
  const clock = new ManualClock(start);
  const logs: string[] = [];
  let store: Store | ReturnType<typeof openDatabase>;
  if (databaseUrl) {
    // Searches in threads of their own, as a server runs them.
    store = postgresTestStore(databaseUrl, config.rowCache, config);
  } else {
    store = openDatabase(dbPath);
    migrate(store.db);
  }
  const services = buildServices(
    config,
    store,
    clock,
    createLogger("debug", (l) => logs.push(l)),
    options.overrides,
  );
  const clientIp = { value: "127.0.0.1" };
  const app = createApp(services, { socketIp: () => clientIp.value });

  const { request, admin } = requests((r) => app.handle(r));

  const db: TestApp["db"] = { query: (text) => services.store.port.prepare(text) };
  const t: TestApp = {
    app,
    services,
    clock,
    logs,
    clientIp,
    request,
    admin,
    db,
    fixtures: undefined as never,
  };
  t.fixtures = new Fixtures(t);
  return t;
}

/**
 * Everything the app's database holds, as text to search for secrets: SQLite's whole file (free
 * pages included), or every row of every table of PostgreSQL's schema (bytes as latin1).
 */
export function storeDump(t: TestApp): string {
  const { store } = t.services;
  if (store.kind === "sqlite") return Buffer.from(store.database.sqlite.serialize()).toString("latin1");
  const tables = t.db
    .query<{ name: string }, []>(
      `SELECT table_schema || '.' || table_name AS name FROM information_schema.tables
        WHERE table_schema IN ('public', 'drizzle')`,
    )
    .all();
  return JSON.stringify(
    tables.map(({ name }) => t.db.query(`SELECT * FROM ${name}`).all()),
    (_k, v) => (v instanceof Uint8Array ? Buffer.from(v).toString("latin1") : v),
  );
}

/** A test's `request` and `admin` over whatever answers a Request (an app, or a server over the network). */
export function requests(
  handle: (request: Request) => Promise<Response>,
): Pick<TestApp, "request" | "admin"> {
  const request: TestApp["request"] = (method, path, init = {}) => {
    const headers: Record<string, string> = { ...init.headers };
    if (init.token !== undefined) headers.authorization = `Bearer ${init.token}`;
    let body: string | undefined;
    if (init.body !== undefined) {
      body = typeof init.body === "string" ? init.body : JSON.stringify(init.body);
      headers["content-type"] ??= "application/json";
    }
    return handle(new Request(`${BASE}${path}`, { method, headers, body }));
  };
  const admin: TestApp["admin"] = (method, path, body) =>
    request(method, `/admin/api${path}`, { body, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
  return { request, admin };
}

let accountCounter = 0;

/** Builders for companies, accounts and tokens, through the admin service. */
export class Fixtures {
  constructor(private readonly t: TestApp) {}

  company(name = "ООО Ромашка", inn = "7719617469") {
    return this.t.services.admin.companies.create({ name, inn });
  }

  account(companyId: string, bank = "sandbox", extra: { ops_per_day?: number; alias?: string } = {}) {
    accountCounter += 1;
    const raw = `40702810${String(accountCounter).padStart(12, "0")}`;
    return this.t.services.admin.accounts.create({
      company_id: companyId,
      bank,
      account_number: withAccountKey(raw, "044525225"),
      bik: "044525225",
      alias: extra.alias,
      sandbox:
        bank.startsWith("sandbox") && extra.ops_per_day ? { ops_per_day: extra.ops_per_day } : undefined,
    });
  }

  token(
    companyId: string,
    opts: {
      purpose?: "integration" | "mcp";
      mode?: "live" | "test";
      read?: boolean;
      send?: boolean;
      accounts?: TokenGrantInput[];
      allowed_ips?: string[];
      rate_limit_per_minute?: number;
      expires_at?: string;
    } = {},
  ) {
    return this.t.services.admin.tokens.create({
      company_id: companyId,
      name: "test token",
      purpose: opts.purpose ?? "integration",
      mode: opts.mode ?? "test",
      scope_read_statements: opts.read ?? true,
      scope_send_payments: opts.send ?? false,
      accounts: opts.accounts ?? [],
      allowed_ips: opts.allowed_ips,
      rate_limit_per_minute: opts.rate_limit_per_minute,
      expires_at: opts.expires_at,
    });
  }

  /** A company with one sandbox account and a token allowed to read (and optionally pay from) it. */
  world(opts: { purpose?: "integration" | "mcp"; bank?: string; ops_per_day?: number; send?: boolean } = {}) {
    const company = this.company();
    const account = this.account(company.company_id, opts.bank ?? "sandbox", {
      ops_per_day: opts.ops_per_day,
    });
    const token = this.token(company.company_id, {
      purpose: opts.purpose ?? "integration",
      send: opts.send,
      accounts: [
        {
          bank_account_id: account.bank_account_id,
          allow_read_statements: true,
          allow_send_payments: opts.send,
        },
      ],
    });
    return { company, account, token: token.token, tokenId: token.api_token_id };
  }
}

export async function json<T = Record<string, unknown>>(res: Response): Promise<T> {
  return (await res.json()) as T;
}
