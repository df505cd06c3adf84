// lanes: postgres
// Row caches across replicas on PostgreSQL: a change committed by one replica empties that table's
// cache on the others (NOTIFY from the migration's triggers, counted by each client's listener);
// other tables' caches stay; a token's last use announces nothing; while the listener is down
// nothing is kept, and caching resumes, emptied, when it listens again.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { CACHED_TABLES, PgChangeFeed } from "../../src/db/pg/change-feed";
import { postgresPort } from "../../src/db/pg/port";
import { PgSyncClient } from "../../src/db/pg/sync-client";
import { BankAccountRepository, CompanyRepository } from "../../src/db/repos/accounts";
import { TokenRepository } from "../../src/db/repos/tokens";
import { connect, migratedDatabase, until } from "../helpers/pg";
import { accountRow, tokenRow } from "../helpers/rows";

let url = "";
const clients: PgSyncClient[] = [];

function replica() {
  const client = new PgSyncClient(url, { timeoutMs: 10_000, watch: [...CACHED_TABLES] });
  clients.push(client);
  const feed = new PgChangeFeed(client);
  const port = postgresPort(client);
  return {
    client,
    port,
    tokens: new TokenRepository(port, feed),
    accounts: new BankAccountRepository(port, feed),
    count: (table: (typeof CACHED_TABLES)[number]) => client.changes().counts[CACHED_TABLES.indexOf(table)]!,
  };
}

/** A new run of code (a new request): caches look for announced changes once per run. */
const nextRequest = () => Bun.sleep(0);

/** A change nobody hears of (triggers off for this statement), to see whether a cache answers. */
async function silently(statement: string): Promise<void> {
  const sql = connect(url);
  await sql.begin(async (tx) => {
    await tx`SET LOCAL session_replication_role = replica`;
    await tx.unsafe(statement);
  });
}

const TOKEN = tokenRow("t1", { name: "1С" });

let a: ReturnType<typeof replica>;
let b: ReturnType<typeof replica>;

beforeAll(async () => {
  url = await migratedDatabase();
  a = replica();
  b = replica();
  new CompanyRepository(a.port).insert({
    id: "c1",
    name: "ООО Ромашка",
    inn: "7719617469",
    kpp: null,
    createdAt: TOKEN.createdAt,
  });
  a.accounts.insert(accountRow());
  a.tokens.insert(TOKEN, []);
  await until(() => a.client.changes().listening && b.client.changes().listening);
});
afterAll(() => {
  for (const c of clients.splice(0)) c.close();
});

describe("PgChangeFeed", () => {
  test("a token revoked on one replica fails on the other from its next request", async () => {
    expect(b.tokens.findByHash("hash-t1")?.revokedAt).toBeNull();
    // B keeps the row: a change nobody announces is not seen.
    await silently("UPDATE api_tokens SET name = 'unseen' WHERE id = 't1'");
    await nextRequest();
    expect(b.tokens.findById("t1")?.name).toBe("unseen"); // (findById reads through)
    expect(b.tokens.findByHash("hash-t1")?.revokedAt).toBeNull();

    const before = b.count("api_tokens");
    a.tokens.update("t1", { revokedAt: "2026-11-21T00:00:00.000Z" });
    await until(() => b.count("api_tokens") > before);
    await nextRequest();
    expect(b.tokens.findByHash("hash-t1")?.revokedAt).toBe("2026-11-21T00:00:00.000Z");
  });

  test("only the changed table's cache empties; a token's last use announces nothing", async () => {
    await nextRequest();
    expect(b.tokens.findByHash("hash-t1")?.mode).toBe("live");
    await silently("UPDATE api_tokens SET mode = 'test' WHERE id = 't1'");
    const tokensBefore = b.count("api_tokens");
    const accountsBefore = b.count("bank_accounts");
    a.tokens.touch("t1", "2026-11-21T10:00:00.000Z");
    a.accounts.insert({ ...a.accounts.findById("acc1")!, id: "acc2", accountNumber: "40702810000000000002" });
    // (announced after anything the touch would have announced: notifications arrive in commit order)
    await until(() => b.count("bank_accounts") > accountsBefore);
    expect(b.count("api_tokens")).toBe(tokensBefore);
    await nextRequest();
    expect(b.tokens.findByHash("hash-t1")?.mode).toBe("live"); // still the kept row
    expect(b.accounts.list().map((x) => x.id)).toEqual(["acc1", "acc2"]);
  });

  test("while the listener is down nothing is kept; listening again, caching resumes emptied", async () => {
    await nextRequest();
    expect(b.tokens.findByHash("hash-t1")?.mode).toBe("live");
    const before = b.count("api_tokens");
    const admin = connect(url);
    await admin`SELECT pg_terminate_backend(pid) FROM pg_stat_activity
                 WHERE application_name = 'svc-changes' AND datname = current_database()`;
    await until(() => !b.client.changes().listening || b.count("api_tokens") > before);
    // Down, or already back: either way the silent change is seen, never the kept row.
    await nextRequest();
    expect(b.tokens.findByHash("hash-t1")?.mode).toBe("test");
    await until(() => b.client.changes().listening);
    await silently("UPDATE api_tokens SET mode = 'live' WHERE id = 't1'");
    await nextRequest();
    const seen = b.tokens.findByHash("hash-t1")?.mode;
    await silently("UPDATE api_tokens SET mode = 'test' WHERE id = 't1'");
    await nextRequest();
    // Listening again: rows are kept once more (the second silent change is not seen).
    expect(b.tokens.findByHash("hash-t1")?.mode).toBe(seen!);
  });
});
