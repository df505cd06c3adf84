// lanes: postgres
// Agent sessions on PostgreSQL, two replicas on one database: a session made on one is valid on
// the other, an extension made on one counts on the other, and DELETE on one ends it on both from
// their next request; the sweeper deletes only what expired. The same calls on SQLite agree.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ManualClock } from "../../src/core/clock";
import { createLogger } from "../../src/core/logger";
import { migrate, openDatabase } from "../../src/db/open";
import { CACHED_TABLES, PgChangeFeed } from "../../src/db/pg/change-feed";
import { postgresPort } from "../../src/db/pg/port";
import { PgSyncClient } from "../../src/db/pg/sync-client";
import { CompanyRepository } from "../../src/db/repos/accounts";
import { TokenRepository } from "../../src/db/repos/tokens";
import type { CacheChanges } from "../../src/db/row-cache";
import { type SqlPort, sqlitePort } from "../../src/db/sql-port";
import { ExternalChanges } from "../../src/db/sqlite/external-changes";
import { SessionManager, SqlSessionStore } from "../../src/mcp/sessions";
import { migratedDatabase, until } from "../helpers/pg";
import { companyRow, tokenRow } from "../helpers/rows";

const clock = new ManualClock("2026-11-20T09:00:00Z");
const TTL_SECONDS = 3600;
const clients: PgSyncClient[] = [];
let url = "";

function seedToken(port: SqlPort, changes: CacheChanges): void {
  new CompanyRepository(port).insert(companyRow());
  new TokenRepository(port, changes).insert(
    tokenRow("t1", { purpose: "mcp", name: "агент", tokenHash: "h1" }),
    [],
  );
}

function manager(port: SqlPort, changes: CacheChanges) {
  return new SessionManager(new SqlSessionStore(port, changes), clock, TTL_SECONDS, createLogger("error"));
}

function pgReplica() {
  const client = new PgSyncClient(url, { timeoutMs: 10_000, watch: [...CACHED_TABLES] });
  clients.push(client);
  const feed = new PgChangeFeed(client);
  const port = postgresPort(client);
  return { client, sessions: manager(port, feed), feed, port };
}

const sessionsCount = (client: PgSyncClient) =>
  client.changes().counts[CACHED_TABLES.indexOf("mcp_sessions")]!;
const rejects = (p: Promise<unknown>) =>
  p.then(
    () => "valid",
    (e: Error) => e.message,
  );

let a: ReturnType<typeof pgReplica>;
let b: ReturnType<typeof pgReplica>;

beforeAll(async () => {
  url = await migratedDatabase();
  a = pgReplica();
  b = pgReplica();
  seedToken(a.port, a.feed);
  await until(() => a.client.changes().listening && b.client.changes().listening);
});
afterAll(() => {
  for (const c of clients.splice(0)) c.close();
});

describe("agent sessions across PostgreSQL replicas", () => {
  test("made on one, valid on the other; DELETE on one ends it on both", async () => {
    const session = await a.sessions.create("t1", "2025-11-25");
    expect((await b.sessions.validate(session.id, "t1")).protocolVersion).toBe("2025-11-25");
    // Another token cannot end it.
    await b.sessions.terminate(session.id, "t2");
    expect((await a.sessions.validate(session.id, "t1")).id).toBe(session.id);

    const before = sessionsCount(a.client);
    await b.sessions.terminate(session.id, "t1");
    await until(() => sessionsCount(a.client) > before);
    await Bun.sleep(0);
    expect(await rejects(a.sessions.validate(session.id, "t1"))).toMatch(/session/i);
    expect(await rejects(b.sessions.validate(session.id, "t1"))).toMatch(/session/i);
  });

  test("an extension written on one replica keeps the session alive on the other; expiry sweeps", async () => {
    const session = await a.sessions.create("t1", "2026-07-28");
    clock.advance((TTL_SECONDS - 60) * 1000);
    const before = sessionsCount(a.client);
    await b.sessions.validate(session.id, "t1"); // extends (written by b)
    await until(() => sessionsCount(a.client) > before);
    clock.advance(120_000); // past the first expiry, well within the extended one
    await Bun.sleep(0);
    expect((await a.sessions.validate(session.id, "t1")).id).toBe(session.id);
    clock.advance(TTL_SECONDS * 1000 + 1);
    expect(await a.sessions.sweep()).toBe(1);
    await Bun.sleep(0);
    expect(await rejects(b.sessions.validate(session.id, "t1"))).toMatch(/session/i);
  });

  test("on SQLite the same calls give the same answers", async () => {
    const db = openDatabase(":memory:");
    migrate(db.db);
    const changes = new ExternalChanges(db.sqlite);
    const port = sqlitePort(db.sqlite);
    seedToken(port, changes);
    const sessions = manager(port, changes);
    const session = await sessions.create("t1", "2025-11-25");
    expect((await sessions.validate(session.id, "t1")).protocolVersion).toBe("2025-11-25");
    await sessions.terminate(session.id, "t1");
    expect(await rejects(sessions.validate(session.id, "t1"))).toMatch(/session/i);
    db.close();
  });
});
