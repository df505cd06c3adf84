// `svc admin migrate-to-postgres`: a SQLite installation's data into an empty PostgreSQL database,
// all or nothing. The source is read in one read transaction (a consistent snapshot); the target
// is written in one transaction, checked row count for row count before it commits. Values change
// only where the dialects differ: 0/1 become booleans, blobs bytea; identity sequences continue
// after the copied ids. Search indexes are derived data and are not copied (each store builds its own).
import type { Database } from "bun:sqlite";
import { getTableConfig, type PgColumn, PgTable } from "drizzle-orm/pg-core";
import type { Sql, TransactionSql } from "postgres";
import * as pgSchema from "./schema";

export interface CopyReport {
  /** Rows copied per table, in the order they were copied. */
  tables: Record<string, number>;
}

/** The target already holds svc data, or the source cannot be copied as it is: nothing was written. */
export class CopyRefused extends Error {
  override name = "CopyRefused";
}

interface TablePlan {
  name: string;
  columns: string[];
  convert: ((v: unknown) => unknown)[];
  identity: string | null;
  after: string[];
}

const asBoolean = (v: unknown) => (v === null ? null : v === 1 || v === true);
const asBytes = (v: unknown) => (v === null ? null : Buffer.from(v as Uint8Array));
const asIs = (v: unknown) => v;

function converterOf(column: PgColumn): (v: unknown) => unknown {
  const type = column.getSQLType();
  if (type === "boolean") return asBoolean;
  if (type === "bytea") return asBytes;
  return asIs;
}

/** Every table of the PostgreSQL schema, parents before the tables whose foreign keys name them. */
function tablePlans(): TablePlan[] {
  const plans = new Map<string, TablePlan>();
  for (const value of Object.values(pgSchema)) {
    if (!(value instanceof PgTable)) continue;
    const config = getTableConfig(value);
    plans.set(config.name, {
      name: config.name,
      columns: config.columns.map((c) => c.name),
      convert: config.columns.map(converterOf),
      identity:
        config.columns.find((c) => (c as { generatedIdentity?: unknown }).generatedIdentity)?.name ?? null,
      after: config.foreignKeys
        .map((fk) => getTableConfig(fk.reference().foreignTable).name)
        .filter((parent) => parent !== config.name),
    });
  }
  const ordered: TablePlan[] = [];
  const placed = new Set<string>();
  const place = (plan: TablePlan) => {
    if (placed.has(plan.name)) return;
    placed.add(plan.name);
    for (const parent of plan.after) place(plans.get(parent)!);
    ordered.push(plan);
  };
  for (const plan of [...plans.values()].sort((a, b) => (a.name < b.name ? -1 : 1))) place(plan);
  return ordered;
}

/** Rows per INSERT: PostgreSQL takes at most 65,535 parameters a statement. */
function batchSize(columns: number): number {
  return Math.min(1000, Math.floor(60_000 / columns));
}

/** What is wrong with a source row (its table's rows come after their parents'), or null. */
export type RowCheck = (table: string, row: Record<string, unknown>) => string | null;

/** Rows named in a refusal at most (the rest are counted). */
const NAMED_PROBLEMS = 20;

export async function copySqliteToPostgres(
  source: Database,
  target: Sql,
  options: { check?: RowCheck } = {},
): Promise<CopyReport> {
  const plans = tablePlans();
  const tables: Record<string, number> = {};
  const problems: string[] = [];
  source.exec("BEGIN"); // a read transaction: every table as of one moment
  try {
    const missing = plans.filter(
      (p) =>
        source.query("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(p.name) === null,
    );
    if (missing.length > 0) {
      throw new CopyRefused(`the SQLite database has no table ${missing.map((p) => p.name).join(", ")}`);
    }
    await target.begin(async (tx) => {
      await refuseNonEmpty(tx, plans);
      for (const plan of plans) {
        const select = source.query<Record<string, unknown>, []>(
          // In rowid order: PostgreSQL's insertion-order column (seq) numbers them as SQLite had them.
          `SELECT ${plan.columns.map((c) => `"${c}"`).join(", ")} FROM "${plan.name}" ORDER BY rowid`,
        );
        const size = batchSize(plan.columns.length);
        // Values as postgres.js sends them: string, number, boolean, Buffer or null.
        let batch: Record<string, string | number | boolean | Buffer | null>[] = [];
        let copied = 0;
        const flush = async () => {
          if (batch.length === 0) return;
          await tx`INSERT INTO ${tx(plan.name)} ${tx(batch, plan.columns)}`;
          copied += batch.length;
          batch = [];
        };
        for (const row of select.iterate()) {
          const problem = options.check?.(plan.name, row) ?? null;
          if (problem !== null) problems.push(problem);
          const out: (typeof batch)[number] = {};
          plan.columns.forEach((c, i) => {
            out[c] = plan.convert[i]!(row[c]) as string | number | boolean | Buffer | null;
          });
          batch.push(out);
          if (batch.length === size) await flush();
        }
        await flush();
        const [{ n }] = (await tx`SELECT count(*)::int AS n FROM ${tx(plan.name)}`) as unknown as [
          { n: number },
        ];
        const expected = (source.query(`SELECT count(*) AS n FROM "${plan.name}"`).get() as { n: number }).n;
        if (n !== expected || copied !== expected) {
          throw new CopyRefused(
            `${plan.name}: ${expected} rows in SQLite, ${n} arrived; nothing was written`,
          );
        }
        if (plan.identity !== null && copied > 0) {
          // The next row svc inserts gets the id after the largest copied one.
          await tx`SELECT setval(pg_get_serial_sequence(${plan.name}, ${plan.identity}),
                                 (SELECT max(${tx(plan.identity)}) FROM ${tx(plan.name)}))`;
        }
        tables[plan.name] = copied;
      }
      // Rows the service would refuse today are not carried over: the whole copy is rolled back.
      if (problems.length > 0) {
        const more = problems.length > NAMED_PROBLEMS ? `; and ${problems.length - NAMED_PROBLEMS} more` : "";
        throw new CopyRefused(
          `${problems.length} row(s) svc refuses today: ${problems.slice(0, NAMED_PROBLEMS).join("; ")}${more}. ` +
            "Correct them in the SQLite installation and copy again. Nothing was written.",
        );
      }
    });
  } finally {
    source.exec("ROLLBACK");
  }
  return { tables };
}

async function refuseNonEmpty(tx: TransactionSql, plans: TablePlan[]): Promise<void> {
  const filled: string[] = [];
  for (const plan of plans) {
    const [row] = (await tx`SELECT EXISTS (SELECT 1 FROM ${tx(plan.name)}) AS some`) as unknown as [
      { some: boolean },
    ];
    if (row.some) filled.push(plan.name);
  }
  if (filled.length > 0) {
    throw new CopyRefused(
      `the PostgreSQL database already holds svc data (${filled.join(", ")}); ` +
        "migrate-to-postgres copies into an empty database only. Nothing was written.",
    );
  }
}
