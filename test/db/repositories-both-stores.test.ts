// lanes: postgres
// Repositories in portable SQL: the same calls give the same rows on SQLite and on PostgreSQL
// (through PgSyncClient), writes included, and a transaction that fails leaves nothing in either.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { migrate, openDatabase } from "../../src/db/open";
import { postgresPort, toPostgresPlaceholders } from "../../src/db/pg/port";
import { PgSyncClient } from "../../src/db/pg/sync-client";
import { BankAccountRepository, CompanyRepository } from "../../src/db/repos/accounts";
import { type ApiTokenRow, TokenRepository } from "../../src/db/repos/tokens";
import { type SqlPort, sqlitePort } from "../../src/db/sql-port";
import { ExternalChanges } from "../../src/db/sqlite/external-changes";
import { OAuthRepository } from "../../src/oauth/repository";
import { migratedDatabase } from "../helpers/pg";
import { tokenRow } from "../helpers/rows";

const sqlite = openDatabase(":memory:");
migrate(sqlite.db);
let pgClient: PgSyncClient;
interface Store {
  name: string;
  port: SqlPort;
  companies: CompanyRepository;
  accounts: BankAccountRepository;
  repo: TokenRepository;
  oauth: OAuthRepository;
}
const stores: Store[] = [];

/** Companies and accounts through their repositories; returns what they read back. */
function seed(store: Store) {
  const { companies, accounts } = store;
  companies.insert({
    id: "c2",
    name: "ООО Лютик",
    inn: "7707083893",
    kpp: "770701001",
    createdAt: "2026-11-20T09:00:00.000Z",
  });
  companies.insert({
    id: "c1",
    name: "ООО «Ромашка»",
    inn: "7719617469",
    kpp: null,
    createdAt: "2026-11-20T09:00:00.000Z",
  });
  for (const [id, n, company] of [
    ["a2", "2", "c1"],
    ["a1", "1", "c1"],
    ["b1", "3", "c2"],
  ] as const) {
    accounts.insert({
      id,
      companyId: company,
      bank: "sandbox",
      accountNumber: `4070281000000000000${n}`,
      bik: "044525225",
      currency: "RUB",
      alias: `счёт ${n}`,
      environment: "production",
      connectionId: null,
      sandboxOpsPerDay: n === "3" ? 40 : null,
      sandboxOpeningBalance: n === "3" ? 2 ** 40 : null,
      createdAt: "2026-11-20T09:00:00.000Z",
    });
  }
  const before = accounts.findById("b1");
  // One account number with its BIK is one account.
  expect(() => accounts.insert({ ...before!, id: "dup" })).toThrow();
  return {
    companies: companies.list(),
    company: companies.findById("c1"),
    accounts: accounts.list().map((a) => a.id),
    ofC1: accounts.list("c1").map((a) => a.id),
    b1: before,
    byNumber: [accounts.findByNumber("40702810000000000003", "044525225"), accounts.findByNumber("1", "2")],
    missing: [companies.findById("nope"), accounts.findById("nope")],
  };
}

beforeAll(async () => {
  const url = await migratedDatabase();
  pgClient = new PgSyncClient(url, { timeoutMs: 10_000 });
  const sqliteChanges = new ExternalChanges(sqlite.sqlite);
  // PostgreSQL rows are read from the database every time here (its change feed is not this file's subject).
  const uncached = { keepRows: false, register() {}, check() {} };
  for (const [name, port, changes] of [
    ["sqlite", sqlitePort(sqlite.sqlite), sqliteChanges],
    ["postgres", postgresPort(pgClient), uncached],
  ] as const) {
    stores.push({
      name,
      port,
      companies: new CompanyRepository(port),
      accounts: new BankAccountRepository(port, changes),
      repo: new TokenRepository(port, changes),
      oauth: new OAuthRepository(port),
    });
  }
});
afterAll(() => {
  pgClient?.close();
  sqlite.close();
});

function token(id: string, over: Partial<ApiTokenRow> = {}): ApiTokenRow {
  return tokenRow(id, { allowedIps: ["10.0.0.0/8", "192.168.1.7"], rateLimitPerMinute: 100, ...over });
}

/** One scenario, run on a store; returns everything it read, for comparing the stores. */
function scenario(port: SqlPort, repo: TokenRepository) {
  const seen: Record<string, unknown> = {};
  repo.insert(token("t1"), [
    { bankAccountId: "a1", allowReadStatements: true, allowSendPayments: false },
    { bankAccountId: "a2", allowReadStatements: true, allowSendPayments: true },
  ]);
  repo.insert(
    token("t2", { createdAt: "2026-11-20T09:00:01.000Z", scopeSendPayments: true, rateLimitPerMinute: null }),
    [],
  );
  repo.insert(token("t3", { companyId: "c2", createdAt: "2026-11-19T00:00:00.000Z", allowedIps: [] }), []);
  seen.auth = repo.findByHash("hash-t1");
  seen.grants = [...repo.grants("t1")].sort((a, b) => a.bankAccountId.localeCompare(b.bankAccountId));
  seen.byAccount = repo.grantsByAccount("t1").get("a2");
  repo.update("t1", { name: "переименован", revokedAt: "2026-11-21T00:00:00.000Z" }, [
    { bankAccountId: "a2", allowReadStatements: true, allowSendPayments: false },
  ]);
  repo.touch("t2", "2026-11-22T10:00:00.000Z");
  seen.afterUpdate = repo.findById("t1");
  seen.grantsAfter = repo.grants("t1");
  seen.touched = repo.findById("t2")?.lastUsedAt;
  seen.missing = [repo.findById("nope"), repo.findByHash("nope")];
  seen.list = repo.list().map((t) => t.id);
  seen.listC1 = repo.list("c1").map((t) => t.id);
  // A second token with the first one's hash is refused, and its grants do not stay behind.
  expect(() =>
    repo.insert(token("t4", { tokenHash: "hash-t1" }), [
      { bankAccountId: "a1", allowReadStatements: true, allowSendPayments: false },
    ]),
  ).toThrow();
  // A caller's transaction that fails takes the token written inside it along.
  expect(() =>
    port.transaction(() => {
      repo.insert(token("t5"), []);
      throw new Error("the audit entry could not be written");
    }),
  ).toThrow("the audit entry could not be written");
  seen.refusedLeftNothing = [repo.findById("t4"), repo.grants("t4"), repo.findById("t5")];
  return seen;
}

describe("repositories on both stores", () => {
  test("companies and accounts: the same rows, the same order, the same refusal", () => {
    const [onSqlite, onPostgres] = stores.map(seed);
    expect(onPostgres).toEqual(onSqlite!);
    // Rows created in the same millisecond list as they were inserted (SQLite's rowid, PostgreSQL's
    // seq column), not by key.
    expect(onSqlite!.companies.map((c) => c.id)).toEqual(["c2", "c1"]);
    expect(onSqlite!.accounts).toEqual(["a2", "a1", "b1"]);
    expect(onSqlite!.company).toEqual({
      id: "c1",
      name: "ООО «Ромашка»",
      inn: "7719617469",
      kpp: null,
      createdAt: "2026-11-20T09:00:00.000Z",
    });
    expect(onSqlite!.b1).toMatchObject({
      sandboxOpsPerDay: 40,
      sandboxOpeningBalance: 2 ** 40,
      alias: "счёт 3",
    });
    expect(onSqlite!.byNumber).toEqual([{ id: "b1" }, null]);
    expect(onSqlite!.missing).toEqual([null, null]);
  });

  test("tokens: the same calls give the same rows on SQLite and PostgreSQL", () => {
    const [onSqlite, onPostgres] = stores.map((s) => scenario(s.port, s.repo));
    expect(onPostgres).toEqual(onSqlite!);
    // What the guard reads: the row less its name, hash, prefix and times.
    const { name, tokenHash, tokenPrefix, createdAt, lastUsedAt, ...auth } = token("t1");
    expect(onSqlite!.auth).toEqual(auth);
    expect(onSqlite!.grants).toEqual([
      { bankAccountId: "a1", allowReadStatements: true, allowSendPayments: false },
      { bankAccountId: "a2", allowReadStatements: true, allowSendPayments: true },
    ]);
    expect(onSqlite!.afterUpdate).toMatchObject({
      name: "переименован",
      revokedAt: "2026-11-21T00:00:00.000Z",
      scopeReadStatements: true,
      allowedIps: ["10.0.0.0/8", "192.168.1.7"],
    });
    expect(onSqlite!.grantsAfter).toEqual([
      { bankAccountId: "a2", allowReadStatements: true, allowSendPayments: false },
    ]);
    expect(onSqlite!.touched).toBe("2026-11-22T10:00:00.000Z");
    expect(onSqlite!.missing).toEqual([null, null]);
    expect(onSqlite!.list).toEqual(["t3", "t1", "t2"]);
    expect(onSqlite!.listC1).toEqual(["t1", "t2"]);
    expect(onSqlite!.refusedLeftNothing).toEqual([null, [], null]);
  });
  test("OAuth: clients, a request settled once, a refresh token used once, grants", () => {
    const [onSqlite, onPostgres] = stores.map(({ oauth }) => {
      oauth.upsertClient({
        id: "https://claude.ai/client.json",
        kind: "metadata_document",
        name: "Claude",
        redirectUris: ["https://claude.ai/api/mcp/auth_callback"],
        tokenEndpointAuthMethod: "none",
        secretHash: null,
        createdAt: "2026-11-20T09:00:00.000Z",
      });
      // A changed metadata document updates the name and addresses, nothing else.
      oauth.upsertClient({
        ...oauth.client("https://claude.ai/client.json")!,
        name: "Claude «Desktop»",
        redirectUris: ["http://127.0.0.1:33418/callback"],
        createdAt: "2030-01-01T00:00:00.000Z",
      });
      oauth.insertRequest({
        id: "r1",
        clientId: "https://claude.ai/client.json",
        redirectUri: "http://127.0.0.1:33418/callback",
        state: null,
        codeChallenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
        scope: "statements:read",
        resource: "https://svc.example/mcp",
        status: "pending",
        codeHash: null,
        grantId: null,
        createdAtMs: 1_795_000_000_000,
        expiresAtMs: 1_795_000_600_000,
      });
      const pending = oauth.pendingRequests(1_795_000_000_001, 10).map((r) => r.id);
      const settled = [
        oauth.settleRequest("r1", "pending", "approved", {
          codeHash: "code-1",
          expiresAtMs: 1_795_000_060_000,
        }),
        oauth.settleRequest("r1", "pending", "denied"),
      ];
      oauth.insertGrant({
        id: "g1",
        clientId: "https://claude.ai/client.json",
        apiTokenId: "t1",
        companyId: "c1",
        scope: "statements:read",
        resource: "https://svc.example/mcp",
        createdAt: "2026-11-20T09:01:00.000Z",
        revokedAt: null,
      });
      oauth.insertRefresh("rt1", "g1", 1_795_000_001_000);
      const used = [oauth.useRefresh("rt1", 1_795_000_002_000), oauth.useRefresh("rt1", 1_795_000_003_000)];
      oauth.revokeGrant("g1", "2026-11-21T00:00:00.000Z");
      return {
        client: oauth.client("https://claude.ai/client.json"),
        clients: oauth.clients(10).length,
        pending,
        settled,
        byCode: oauth.requestByCode("code-1"),
        used,
        refresh: oauth.refresh("rt1"),
        grant: oauth.grantOfToken("t1"),
        grants: oauth.grants(10, "oauth").map((g) => g.id),
      };
    });
    expect(onPostgres).toEqual(onSqlite!);
    expect(onSqlite!.client).toMatchObject({
      name: "Claude «Desktop»",
      redirectUris: ["http://127.0.0.1:33418/callback"],
      createdAt: "2026-11-20T09:00:00.000Z",
    });
    expect(onSqlite!.pending).toEqual(["r1"]);
    expect(onSqlite!.settled).toEqual([true, false]);
    expect(onSqlite!.byCode?.status).toBe("approved");
    expect(onSqlite!.used).toEqual([true, false]);
    expect(onSqlite!.refresh).toEqual({
      grantId: "g1",
      usedAtMs: 1_795_000_002_000,
      createdAtMs: 1_795_000_001_000,
    });
    expect(onSqlite!.grant?.revokedAt).toBe("2026-11-21T00:00:00.000Z");
  });
});

test("portable SQL: ? becomes $n outside string literals and quoted names only", () => {
  expect(toPostgresPlaceholders(`SELECT "a?" AS "b?", '?' || ? FROM t WHERE x = ? AND y = 'it''s ?'`)).toBe(
    `SELECT "a?" AS "b?", '?' || $1 FROM t WHERE x = $2 AND y = 'it''s ?'`,
  );
});
