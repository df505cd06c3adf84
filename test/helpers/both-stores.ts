// The same repository on both stores: SQLite in memory and a fresh PostgreSQL database of the
// suite's server, both migrated, each holding company c1 with account acc1.
import type { Database } from "bun:sqlite";
import { afterAll, beforeAll } from "bun:test";
import { migrate, openDatabase } from "../../src/db/open";
import { postgresPort } from "../../src/db/pg/port";
import { PgSyncClient } from "../../src/db/pg/sync-client";
import { BankAccountRepository, CompanyRepository } from "../../src/db/repos/accounts";
import type { CacheChanges } from "../../src/db/row-cache";
import { type SqlPort, sqlitePort } from "../../src/db/sql-port";
import { migratedDatabase } from "./postgres";
import { accountRow, companyRow } from "./rows";

/** Row caches that keep nothing (the stores themselves are under test). */
export const UNCACHED: CacheChanges = { keepRows: false, register() {}, check() {} };

/**
 * `ports`: [SQLite, PostgreSQL], filled before the file's tests; `pgPort()` opens another client
 * on the same PostgreSQL database: another replica; `sqlite`: the SQLite port's database.
 */
export function twoStores(): { ports: SqlPort[]; pgPort(): SqlPort; sqlite: Database } {
  const sqlite = openDatabase(":memory:");
  migrate(sqlite.db);
  const clients: PgSyncClient[] = [];
  const ports: SqlPort[] = [];
  let url = "";
  const pgPort = () => {
    const client = new PgSyncClient(url, { timeoutMs: 10_000 });
    clients.push(client);
    return postgresPort(client);
  };
  beforeAll(async () => {
    url = await migratedDatabase();
    ports.push(sqlitePort(sqlite.sqlite), pgPort());
    for (const port of ports) {
      new CompanyRepository(port).insert(companyRow());
      new BankAccountRepository(port, UNCACHED).insert(accountRow());
    }
  });
  afterAll(() => {
    for (const c of clients.splice(0)) c.close();
    sqlite.close();
  });
  return { ports, pgPort, sqlite: sqlite.sqlite };
}
