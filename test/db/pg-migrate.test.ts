// lanes: postgres
// `svc migrate` on PostgreSQL (SVC_DATABASE_URL): the migrations embedded in the build, applied
// once however many replicas start together, all or nothing, refusing a database another build
// migrated; unreachable servers and refusals named without the password.
import { describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { getTableConfig, PgTable } from "drizzle-orm/pg-core";
import type postgres from "postgres";
import { embeddedPgMigrations, migratePostgres, type PgMigration } from "../../src/db/pg/migrate";
import * as pgSchema from "../../src/db/pg/schema";
import { connect, freshDatabase } from "../helpers/pg";
import { BUN, ROOT, tempDir } from "../helpers/server";

const EMBEDDED = embeddedPgMigrations();
// (Exactly these and the PostgreSQL-only ones: test/db/pg-schema.test.ts.)
const DECLARED = (Object.values(pgSchema) as unknown[])
  .filter((v): v is PgTable => v instanceof PgTable)
  .map((t) => getTableConfig(t).name);

async function appliedCount(sql: postgres.Sql): Promise<number> {
  const [row] = await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM drizzle.__drizzle_migrations`;
  return row!.n;
}

async function publicTables(sql: postgres.Sql): Promise<string[]> {
  const rows = await sql<{ t: string }[]>`
    SELECT table_name AS t FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1`;
  return rows.map((r) => r.t);
}

function svc(args: string[], env: Record<string, string>) {
  return Bun.spawn([BUN, "run", join(ROOT, "cli/svc.ts"), ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", ...env },
    stdout: "pipe",
    stderr: "pipe",
  });
}

async function outcome(proc: ReturnType<typeof svc>) {
  const [code, out, err] = await Promise.all([
    proc.exited,
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
  ]);
  return { code, out, err };
}

describe("migratePostgres", () => {
  test("an empty database gets every embedded migration; a second run applies nothing", async () => {
    const url = await freshDatabase();
    const sql = connect(url);
    const first = await migratePostgres(sql, url);
    expect(first.applied).toEqual(EMBEDDED.map((m) => m.tag));
    expect(first.total).toBe(EMBEDDED.length);
    expect(await publicTables(sql)).toEqual(expect.arrayContaining(DECLARED));
    const again = await migratePostgres(sql, url);
    expect(again.applied).toEqual([]);
    expect(await appliedCount(sql)).toBe(EMBEDDED.length);
  });

  test("five migrators starting together on one database: each migration is applied exactly once", async () => {
    const url = await freshDatabase();
    const runs = await Promise.all(Array.from({ length: 5 }, () => migratePostgres(connect(url), url)));
    expect(runs.flatMap((r) => r.applied).sort()).toEqual(EMBEDDED.map((m) => m.tag).sort());
    expect(await appliedCount(connect(url))).toBe(EMBEDDED.length);
  });

  test("a migration that fails leaves the database exactly as it was", async () => {
    const url = await freshDatabase();
    const sql = connect(url);
    await migratePostgres(sql, url);
    const before = await publicTables(sql);
    const broken: PgMigration = {
      tag: "9998_half_done",
      when: EMBEDDED.at(-1)!.when + 1,
      sql: 'CREATE TABLE half_done (x int);\n--> statement-breakpoint\nALTER TABLE "no_such_table" ADD COLUMN y int;',
    };
    const later: PgMigration = {
      tag: "9999_later",
      when: broken.when + 1,
      sql: "CREATE TABLE later (x int);",
    };
    await expect(migratePostgres(sql, url, [...EMBEDDED, broken, later])).rejects.toThrow(/no_such_table/);
    expect(await publicTables(sql)).toEqual(before);
    expect(await appliedCount(sql)).toBe(EMBEDDED.length);
  });

  test("a database migrated by a newer release, or by another build, is refused and left alone", async () => {
    const url = await freshDatabase();
    const sql = connect(url);
    const newer: PgMigration = {
      tag: "9999_newer",
      when: EMBEDDED.at(-1)!.when + 1,
      sql: "CREATE TABLE newer (x int);",
    };
    await migratePostgres(sql, url, [...EMBEDDED, newer]);
    await expect(migratePostgres(sql, url)).rejects.toThrow(/newer release.*nothing was changed/);

    const other = await freshDatabase();
    const otherSql = connect(other);
    const [first, ...rest] = EMBEDDED;
    await migratePostgres(otherSql, other, [{ ...first!, sql: `${first!.sql}\n-- edited` }]);
    await expect(migratePostgres(otherSql, other, [first!, ...rest])).rejects.toThrow(
      /migration 1 applied to the database is not this build's 0000_baseline/,
    );
    expect(await appliedCount(otherSql)).toBe(1);
  });
});

describe("svc migrate with SVC_DATABASE_URL", () => {
  test("three svc migrate processes started together all succeed; the schema is applied once", async () => {
    const url = await freshDatabase();
    const runs = await Promise.all([1, 2, 3].map(() => outcome(svc(["migrate"], { SVC_DATABASE_URL: url }))));
    for (const r of runs) {
      expect(r.err).toBe("");
      expect(r.code).toBe(0);
      expect(r.out).toContain(`${EMBEDDED.length} of ${EMBEDDED.length} in place`);
    }
    const applied = runs.map((r) => Number(/: (\d+) migrations? applied/.exec(r.out)?.[1]));
    expect(applied.sort()).toEqual([0, 0, EMBEDDED.length]);
    expect(await appliedCount(connect(url))).toBe(EMBEDDED.length);
  });

  test("an unreachable server or a missing database: exit 2, named without the password", async () => {
    const closed = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
    const port = closed.port;
    closed.stop(true);
    const refused = await outcome(
      svc(["migrate"], { SVC_DATABASE_URL: `postgres://svc:s3cret@127.0.0.1:${port}/svc?password=s3cret` }),
    );
    expect(refused.code).toBe(2);
    expect(refused.err).toContain(`PostgreSQL postgres://svc@127.0.0.1:${port}/svc: connection refused`);
    expect(refused.err + refused.out).not.toContain("s3cret");

    const server = new URL(process.env.SVC_TEST_DATABASE_URL!);
    server.pathname = "/svc_no_such_database";
    server.password = "s3cret";
    const missing = await outcome(svc(["migrate"], { SVC_DATABASE_URL: server.toString() }));
    expect(missing.code).toBe(2);
    expect(missing.err).toContain('database "svc_no_such_database" does not exist');
    expect(missing.err + missing.out).not.toContain("s3cret");
  });

  test("with it set, svc admin and a replica without a shared key refuse; no SQLite file is made", async () => {
    const url = await freshDatabase();
    const dir = tempDir("svc-pgm-");
    const cases: [string[], Record<string, string>, string][] = [
      [["admin", "company", "list"], {}, "SVC_DATABASE_URL: svc admin работает с файлом SQLite"],
      [["serve"], {}, "SVC_SECRET_KEY: с PostgreSQL нужен один и тот же ключ на всех репликах"],
      [
        ["serve", "--demo"],
        { SVC_SECRET_KEY: Buffer.alloc(32, 1).toString("base64") },
        "SVC_DATABASE_URL: --demo работает только с SQLite",
      ],
    ];
    for (const [args, env, message] of cases) {
      const r = await outcome(svc(args, { SVC_DATABASE_URL: url, SVC_DB_PATH: join(dir, "svc.db"), ...env }));
      expect(r.code).toBe(2);
      expect(existsSync(join(dir, "svc.db"))).toBe(false);
      expect(r.err).toContain(message);
      expect(r.err).not.toContain(url);
    }
  });
});
