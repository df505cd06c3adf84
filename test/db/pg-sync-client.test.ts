// lanes: postgres
// PgSyncClient: PostgreSQL behind svc's synchronous stores. Values come back as bun:sqlite gives
// them; errors keep their SQLSTATE; transactions commit or roll back; a serializable conflict
// between two replicas' transactions is reported, not lost; a server that is slow, gone or silent
// costs at most the timeout, and the client recovers on its own when the server is back.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Subprocess } from "bun";
import { PgQueryError, PgSyncClient, PgUnavailable } from "../../src/db/pg/sync-client";
import { freshDatabase } from "../helpers/pg";
import { BUN, freePort } from "../helpers/server";

let url = "";
const clients: PgSyncClient[] = [];
function client(target = url, timeoutMs = 5000): PgSyncClient {
  const c = new PgSyncClient(target, { timeoutMs });
  clients.push(c);
  return c;
}

beforeAll(async () => {
  url = await freshDatabase();
  client().run(
    'CREATE TABLE items (id bigint PRIMARY KEY, name text COLLATE "C" NOT NULL, paid boolean, body bytea)',
  );
});
afterAll(() => {
  for (const c of clients.splice(0)) c.close();
});

/** Where a TCP proxy in its own process forwards to (the test's thread blocks while it waits). */
function proxy(port: number, mode: "forward" | "silent"): Subprocess {
  const target = new URL(url);
  const script = `
    const mode = ${JSON.stringify(mode)};
    Bun.listen({ hostname: "127.0.0.1", port: ${port}, socket: {
      async open(client) {
        if (mode === "silent") return;
        client.data = { queue: [] };
        client.data.upstream = await Bun.connect({ hostname: ${JSON.stringify(target.hostname)}, port: ${Number(target.port)}, socket: {
          data(_, chunk) { client.write(chunk); }, close() { client.end(); } } });
        for (const c of client.data.queue) client.data.upstream.write(c);
      },
      data(client, chunk) { if (mode === "silent") return; client.data.upstream ? client.data.upstream.write(chunk) : client.data.queue.push(chunk); },
      close(client) { client.data?.upstream?.end(); },
    } });
    console.log("ready");`;
  return Bun.spawn([BUN, "-e", script], { stdout: "pipe", stderr: "inherit" });
}

async function ready(p: Subprocess): Promise<void> {
  const reader = (p.stdout as ReadableStream<Uint8Array>).getReader();
  const { value } = await reader.read();
  expect(new TextDecoder().decode(value)).toContain("ready");
  reader.releaseLock();
}

describe("PgSyncClient", () => {
  test("values come back as bun:sqlite gives them: numbers, 1/0, bytes, text, null", () => {
    const c = client();
    c.run("INSERT INTO items VALUES ($1, $2, $3, $4), ($5, $6, $7, $8)", [
      9_007_199_254_740_991,
      "Ёлка «ель»",
      true,
      new Uint8Array([0, 1, 255]),
      2,
      "ёж",
      null,
      null,
    ]);
    expect(c.query("SELECT * FROM items ORDER BY name")).toEqual([
      { id: 9_007_199_254_740_991, name: "Ёлка «ель»", paid: 1, body: new Uint8Array([0, 1, 255]) },
      { id: 2, name: "ёж", paid: null, body: null },
    ]);
    expect(c.query("SELECT count(*) AS n, bool_and(paid) AS all_paid FROM items")).toEqual([
      { n: 2, all_paid: 1 },
    ]);
    // A 64-bit value that a number cannot hold exactly is an error, never a rounded figure.
    expect(() => c.query("SELECT 9007199254740993::bigint AS n")).toThrow(/beyond 2\^53/);
    expect(c.run("UPDATE items SET paid = $1 WHERE id = $2", [false, 2])).toBe(1);
    c.run("DELETE FROM items");
  });

  test("an answer larger than the shared buffer arrives whole", () => {
    const c = client();
    const rows = c.query<{ n: number; s: string }>(
      "SELECT g AS n, repeat('я', 100) || g AS s FROM generate_series(1, 20000) g ORDER BY g",
    );
    expect(rows.length).toBe(20_000);
    expect(rows[19_999]).toEqual({ n: 20_000, s: `${"я".repeat(100)}20000` });
    expect(c.query("SELECT 1 AS one")).toEqual([{ one: 1 }]);
  });

  test("errors keep their SQLSTATE; a transaction commits, or rolls back on a throw or an SQL error", () => {
    const c = client();
    c.run("INSERT INTO items (id, name) VALUES (1, 'a')");
    const dup = (() => {
      try {
        c.run("INSERT INTO items (id, name) VALUES (1, 'b')");
      } catch (e) {
        return e;
      }
    })();
    expect(dup).toBeInstanceOf(PgQueryError);
    expect((dup as PgQueryError).code).toBe("23505");

    c.transaction(() => c.run("INSERT INTO items (id, name) VALUES (2, 'b')"));
    expect(() =>
      c.transaction(() => {
        c.run("INSERT INTO items (id, name) VALUES (3, 'c')");
        throw new Error("changed my mind");
      }),
    ).toThrow("changed my mind");
    expect(() =>
      c.transaction(() => {
        c.run("INSERT INTO items (id, name) VALUES (4, 'd')");
        c.run("INSERT INTO items (id, name) VALUES (1, 'again')");
      }),
    ).toThrow(PgQueryError);
    expect(c.query("SELECT id FROM items ORDER BY id")).toEqual([{ id: 1 }, { id: 2 }]);
    c.run("DELETE FROM items");
  });

  test("two replicas deciding on the same rows: the serializable loser is told (40001), nothing is lost", () => {
    const a = client();
    const b = client();
    a.run("INSERT INTO items (id, name) VALUES (1, 'seed')");
    let failure: unknown = null;
    try {
      a.transaction(() => {
        const n = a.query<{ n: number }>("SELECT count(*) AS n FROM items")[0]!.n;
        b.transaction(() => {
          const m = b.query<{ n: number }>("SELECT count(*) AS n FROM items")[0]!.n;
          b.run("INSERT INTO items (id, name) VALUES ($1, 'b')", [100 + m]);
        }, "serializable");
        a.run("INSERT INTO items (id, name) VALUES ($1, 'a')", [200 + n]);
      }, "serializable");
    } catch (e) {
      failure = e;
    }
    expect(failure).toBeInstanceOf(PgQueryError);
    expect((failure as PgQueryError).code).toBe("40001");
    expect(a.query("SELECT id FROM items ORDER BY id")).toEqual([{ id: 1 }, { id: 101 }]);
    a.run("DELETE FROM items");
  });

  test("a statement past the timeout: unavailable, and the next statement works", () => {
    const c = client(url, 300);
    expect(() => c.query("SELECT pg_sleep(5)")).toThrow(PgUnavailable);
    expect(c.query("SELECT 2 AS two")).toEqual([{ two: 2 }]);
  });

  test("a server that accepts and never answers costs the timeout, not a hang", async () => {
    const port = freePort();
    const silent = proxy(port, "silent");
    await ready(silent);
    try {
      const target = new URL(url);
      target.host = `127.0.0.1:${port}`;
      target.password = "s3cret";
      const c = client(target.toString(), 500);
      let message = "";
      try {
        c.query("SELECT 1");
      } catch (e) {
        expect(e).toBeInstanceOf(PgUnavailable);
        message = (e as Error).message;
      }
      expect(message).toContain(`127.0.0.1:${port}`);
      expect(message).not.toContain("s3cret");
    } finally {
      silent.kill(9);
    }
  });

  test("the server going away and coming back: unavailable meanwhile, then it works again on its own", async () => {
    const port = freePort();
    const target = new URL(url);
    target.host = `127.0.0.1:${port}`;
    let link = proxy(port, "forward");
    await ready(link);
    const c = client(target.toString(), 2000);
    expect(c.query("SELECT 1 AS up")).toEqual([{ up: 1 }]);
    link.kill(9);
    await link.exited;
    expect(() => c.query("SELECT 1 AS up")).toThrow(PgUnavailable);
    expect(() => c.query("SELECT 1 AS up")).toThrow(PgUnavailable);
    link = proxy(port, "forward");
    await ready(link);
    try {
      expect(c.query("SELECT 1 AS up")).toEqual([{ up: 1 }]);
    } finally {
      link.kill(9);
    }
  });
});
