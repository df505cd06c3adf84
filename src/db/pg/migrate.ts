// Applies the PostgreSQL migrations embedded in the build. Replicas that start together must not
// race: the whole run holds a transaction-scoped advisory lock, so the second migrator waits and
// then finds nothing left to do. Pending migrations apply in one transaction (PostgreSQL's DDL is
// transactional): a failure or a crash leaves the database as it was.
// Bookkeeping is drizzle's own table (drizzle.__drizzle_migrations: hash, created_at), so
// drizzle-kit and svc agree on what is applied.
import { createHash } from "node:crypto";
import type { Sql } from "postgres";
import { DatabaseUnavailable, isConnectionFailure } from "./connect";
import { embeddedMigrations } from "./migrations.gen";

export interface PgMigration {
  tag: string;
  /** drizzle-kit's timestamp of the migration: its created_at once applied. */
  when: number;
  sql: string;
}

/** Any 64-bit key of svc's own; every replica takes the same one. */
const MIGRATION_LOCK_KEY = 7_353_676_000_001n;

export interface MigrationOutcome {
  applied: string[];
  total: number;
}

/** The database holds migrations this build did not make, or made differently: nothing was changed. */
export class MigrationMismatch extends Error {
  override name = "MigrationMismatch";
}

export function embeddedPgMigrations(): PgMigration[] {
  return embeddedMigrations.map(({ tag, when, sql }) => ({ tag, when, sql }));
}

export async function migratePostgres(
  sql: Sql,
  url: string,
  migrations: PgMigration[] = embeddedPgMigrations(),
): Promise<MigrationOutcome> {
  try {
    const applied = await sql.begin(async (tx) => {
      await tx`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK_KEY.toString()}::bigint)`;
      await tx`CREATE SCHEMA IF NOT EXISTS drizzle`;
      await tx`CREATE TABLE IF NOT EXISTS drizzle.__drizzle_migrations (
                 id SERIAL PRIMARY KEY, hash text NOT NULL, created_at bigint)`;
      const done = await tx<{ hash: string; created_at: string }[]>`
        SELECT hash, created_at::text AS created_at FROM drizzle.__drizzle_migrations ORDER BY created_at, id`;
      checkApplied(
        done.map((d) => ({ hash: d.hash, when: Number(d.created_at) })),
        migrations,
      );
      const pending = migrations.slice(done.length);
      for (const m of pending) {
        for (const statement of m.sql.split("--> statement-breakpoint")) {
          if (statement.trim() !== "") await tx.unsafe(statement);
        }
        await tx`INSERT INTO drizzle.__drizzle_migrations (hash, created_at)
                 VALUES (${hashOf(m.sql)}, ${m.when})`;
      }
      return pending.map((m) => m.tag);
    });
    return { applied, total: migrations.length };
  } catch (e) {
    if (isConnectionFailure(e)) throw new DatabaseUnavailable(url, e);
    throw e;
  }
}

function hashOf(sql: string): string {
  return createHash("sha256").update(sql).digest("hex");
}

/** The applied migrations must be this build's first ones, in order and byte for byte. */
function checkApplied(done: { hash: string; when: number }[], migrations: PgMigration[]): void {
  if (done.length > migrations.length) {
    throw new MigrationMismatch(
      `the database has ${done.length} migrations applied, this svc knows ${migrations.length}: ` +
        "it was migrated by a newer release. Run that release (or newer); nothing was changed.",
    );
  }
  done.forEach((d, i) => {
    const m = migrations[i]!;
    if (d.when !== m.when || d.hash !== hashOf(m.sql)) {
      throw new MigrationMismatch(
        `migration ${i + 1} applied to the database is not this build's ${m.tag} ` +
          "(another build's schema); nothing was changed.",
      );
    }
  });
}
