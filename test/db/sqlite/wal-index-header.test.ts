// lanes: sqlite
// Other connections' commits are noticed through the WAL-index header in the -shm file, a read of
// shared memory; `PRAGMA data_version` is asked only when that header has moved.
import { Database } from "bun:sqlite";
import { afterEach, describe, expect, spyOn, test } from "bun:test";
import { join } from "node:path";
import { openDatabase } from "../../../src/db/open";
import { RowCache } from "../../../src/db/row-cache";
import { ExternalChanges } from "../../../src/db/sqlite/external-changes";
import { WalIndexHeader } from "../../../src/db/sqlite/wal-index-header";
import { sqlInAnotherProcess, tempDir } from "../../helpers/server";

const opened: Database[] = [];
afterEach(() => {
  for (const db of opened.splice(0)) db.close();
});

const headers: WalIndexHeader[] = [];
afterEach(() => {
  for (const header of headers.splice(0)) header.close();
});

function walDatabase() {
  const path = join(tempDir(), "svc.db");
  const { sqlite, walHeader } = openDatabase(path);
  sqlite.exec("CREATE TABLE t (v INTEGER)");
  const other = new Database(path);
  other.exec("PRAGMA busy_timeout = 5000");
  opened.push(other, sqlite);
  if (walHeader) headers.push(walHeader);
  return { path, sqlite, other, walHeader };
}

const nextRun = () => new Promise<void>((resolve) => setImmediate(resolve));

describe("WAL-index header", () => {
  test("moves with every commit, of this connection, another one, and another process", () => {
    const { path, sqlite, other, walHeader } = walDatabase();
    const header = walHeader!;
    expect(header).not.toBeNull();
    header.moved();
    expect(header.moved()).toBe(false);

    sqlite.exec("INSERT INTO t VALUES (1)");
    expect(header.moved()).toBe(true);
    expect(header.moved()).toBe(false);

    other.exec("INSERT INTO t VALUES (2)");
    expect(header.moved()).toBe(true);

    sqlInAnotherProcess(path, "INSERT INTO t VALUES (3)");
    expect(header.moved()).toBe(true);

    // Reads change nothing, also another process's first read of the file: this process's locks
    // on the -shm file are intact (had they been dropped, that process would rebuild the file).
    other.query("SELECT count(*) FROM t").get();
    sqlInAnotherProcess(path, "SELECT count(*) FROM t");
    expect(header.moved()).toBe(false);
  });

  test("moves when the WAL starts over after a checkpoint", () => {
    const { sqlite, other, walHeader } = walDatabase();
    sqlite.exec("INSERT INTO t VALUES (1)");
    other.exec("PRAGMA wal_checkpoint(TRUNCATE)");
    walHeader!.moved();
    other.exec("INSERT INTO t VALUES (2)");
    expect(walHeader!.moved()).toBe(true);
  });

  test("there is none for an in-memory database or one without a WAL", () => {
    expect(WalIndexHeader.open(":memory:")).toBeNull();
    expect(openDatabase(":memory:").walHeader).toBeNull();
    const path = join(tempDir(), "rollback.db");
    const db = new Database(path);
    opened.push(db);
    db.exec("PRAGMA journal_mode = DELETE; CREATE TABLE t (v INTEGER)");
    expect(WalIndexHeader.open(path)).toBeNull();
  });
});

describe("ExternalChanges", () => {
  test("asks SQLite only after some connection has committed", async () => {
    const { sqlite, other, walHeader } = walDatabase();
    const changes = new ExternalChanges(sqlite, walHeader);
    const cache = new RowCache<string>(changes, "t");
    // bun:sqlite hands out the same prepared statement for the same text.
    const dataVersion = spyOn(sqlite.query("PRAGMA data_version"), "get");
    // Every read of the cache looks first (once per run of code).
    cache.get("k", () => "cached");

    for (let i = 0; i < 3; i++) {
      await nextRun();
      expect(cache.get("k", () => "reloaded")).toBe("cached");
    }
    expect(dataVersion).toHaveBeenCalledTimes(0);

    other.exec("INSERT INTO t VALUES (1)");
    await nextRun();
    expect(cache.get("k", () => "reloaded")).toBe("reloaded");
    expect(dataVersion).toHaveBeenCalledTimes(1);
    await nextRun();
    changes.check();
    expect(cache.get("k", () => "again")).toBe("reloaded");
    expect(dataVersion).toHaveBeenCalledTimes(1);
  });

  test("a look is made once per run of code, however many reads", async () => {
    const { sqlite, other, walHeader } = walDatabase();
    const changes = new ExternalChanges(sqlite, walHeader);
    const cache = new RowCache<string>(changes, "t");
    const dataVersion = spyOn(sqlite.query("PRAGMA data_version"), "get");
    other.exec("INSERT INTO t VALUES (1)");
    for (let i = 0; i < 3; i++) cache.get(`k${i}`, () => "loaded");
    expect(dataVersion).toHaveBeenCalledTimes(1);
  });

  test("writes forget what they change, also when they fail", () => {
    const { sqlite, walHeader } = walDatabase();
    const cache = new RowCache<string>(new ExternalChanges(sqlite, walHeader), "t");
    cache.get("a", () => "a1");
    cache.get("b", () => "b1");
    expect(cache.write("a", () => 7)).toBe(7);
    expect(cache.get("a", () => "a2")).toBe("a2");
    expect(cache.get("b", () => "b2")).toBe("b1");
    expect(() =>
      cache.write("a", () => {
        throw new Error("constraint");
      }),
    ).toThrow("constraint");
    expect(cache.get("a", () => "a3")).toBe("a3");
    cache.writeAll(() => undefined);
    expect(cache.get("b", () => "b3")).toBe("b3");
  });

  test("with rows not kept (SVC_ROW_CACHE=off) every read loads and nothing asks SQLite", async () => {
    const { sqlite, walHeader } = walDatabase();
    const changes = new ExternalChanges(sqlite, walHeader, false);
    const cache = new RowCache<string>(changes, "t");
    const dataVersion = spyOn(sqlite.query("PRAGMA data_version"), "get");
    expect(cache.get("k", () => "first")).toBe("first");
    expect(cache.get("k", () => "second")).toBe("second");
    expect(dataVersion).toHaveBeenCalledTimes(0);
  });

  test("this connection's own commits move the header but empty no cache", async () => {
    const { sqlite, walHeader } = walDatabase();
    const changes = new ExternalChanges(sqlite, walHeader);
    const cache = new RowCache<string>(changes, "t");
    cache.get("k", () => "cached");
    sqlite.exec("INSERT INTO t VALUES (1)");
    // A later run, so that this read looks again.
    await nextRun();
    expect(cache.get("k", () => "reloaded")).toBe("cached");
  });

  test("without a header every run asks SQLite", async () => {
    const sqlite = new Database(":memory:");
    opened.push(sqlite);
    const changes = new ExternalChanges(sqlite);
    const dataVersion = spyOn(sqlite.query("PRAGMA data_version"), "get");
    changes.check();
    await nextRun();
    changes.check();
    expect(dataVersion).toHaveBeenCalledTimes(2);
  });
});
