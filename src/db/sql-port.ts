// What the stores hold a database by: prepared statements and transactions, synchronous, with the
// same rows from either database. On SQLite the port hands out bun:sqlite's own statements (no
// layer in between); on PostgreSQL (pg/port.ts) the same SQL text runs through PgSyncClient.
//
// Portable SQL, the rules a statement follows to run on both:
// - `?` placeholders (translated to $1, $2… for PostgreSQL), or `$name` ones through
//   `prepareNamed`, given one object whose keys are the names.
// - camelCase aliases in double quotes (`AS "companyId"`): PostgreSQL folds bare names to lower case.
// - booleans compared as `= 1`/`= 0` or `= TRUE`: both stores hand 1/0 back, and PostgreSQL takes
//   1/0 parameters for boolean columns.
// - no rowid: `port.insertionOrder` names the column that orders rows as they were inserted.
import type { Database } from "bun:sqlite";
import { getTableColumns, getTableName } from "drizzle-orm";
import type { SQLiteColumn, SQLiteTable } from "drizzle-orm/sqlite-core";
import { type AnsweredAsApiError, ApiError } from "../core/errors";

/** The database did not answer in time or could not be reached: the caller hears 503, never 500. */
export class StoreUnavailable extends Error implements AnsweredAsApiError {
  override name = "StoreUnavailable";
  // The message names the database without its password (PgUnavailable's message).
  readonly logAs = "database unavailable";
  /** The request may be retried: it is no client error. */
  toApiError(): ApiError {
    return new ApiError("service_unavailable", "База данных недоступна", undefined, { "retry-after": "1" });
  }
}

/**
 * Text with a NUL character (U+0000): PostgreSQL's text cannot hold one. Requests and files are
 * checked for it where they are read (a NUL in JSON or a 1C file is refused there, on both stores);
 * this is the PostgreSQL port's last line for any other way in (a form field, a query string).
 */
export class UnstorableText extends Error implements AnsweredAsApiError {
  override name = "UnstorableText";
  constructor() {
    super("text with a NUL character (U+0000)");
  }
  toApiError(): ApiError {
    return new ApiError("validation_error", "Текст содержит недопустимый символ NUL (U+0000)");
  }
}

export type SqlValue = string | number | bigint | boolean | null | Uint8Array;

/**
 * A list as one parameter, for PostgreSQL only (`?::text[]`, `?::int[]`: postgres.js sends it as the
 * array type the cast declares); SQLite has no arrays, so a statement using one is the PostgreSQL
 * store's own.
 */
export type SqlArray = readonly (string | number | null)[];
type SqlParam = SqlValue | SqlArray;

export interface SqlStatement<Row, Params extends SqlParam[]> {
  get(...params: Params): Row | null;
  all(...params: Params): Row[];
  run(...params: Params): { changes: number };
}

/** A statement with `$name` parameters, run with one object of them. */
export interface NamedSqlStatement<Row, Params extends Record<string, SqlValue>> {
  get(params: Params): Row | null;
  all(params: Params): Row[];
  run(params: Params): { changes: number };
}

export interface SqlPort {
  readonly dialect: "sqlite" | "postgres";
  /** The expression that orders a table's rows as they were inserted (a tie-breaker). */
  readonly insertionOrder: string;
  prepare<Row, Params extends SqlParam[] = SqlParam[]>(text: string): SqlStatement<Row, Params>;
  prepareNamed<Row, Params extends Record<string, SqlValue>>(text: string): NamedSqlStatement<Row, Params>;
  /** `work` in one transaction; a nested call joins the one already open. */
  transaction<T>(work: () => T): T;
}

export function sqlitePort(sqlite: Database): SqlPort {
  return {
    dialect: "sqlite",
    insertionOrder: "rowid",
    prepare: <Row, Params extends SqlParam[]>(text: string) =>
      sqlite.query<Row, SqlValue[]>(text) as unknown as SqlStatement<Row, Params>,
    // The database is opened with `strict: true`: the object's keys are the names without `$`.
    prepareNamed: <Row, Params extends Record<string, SqlValue>>(text: string) =>
      sqlite.query<Row, [Params]>(text) as unknown as NamedSqlStatement<Row, Params>,
    // IMMEDIATE: the write lock first, so a read-decide-write cannot be overtaken.
    transaction: (work) => sqlite.transaction(work).immediate(),
  };
}

/**
 * Rows of a table (as the schema types them: camelCase keys, booleans, JSON values) written to and
 * read from the database's columns, in statements written once for both stores.
 */
export class TableRows<T extends SQLiteTable> {
  private readonly columns: [key: string, column: SQLiteColumn][];
  private readonly name: string;

  constructor(
    private readonly port: SqlPort,
    table: T,
  ) {
    this.name = getTableName(table);
    this.columns = Object.entries(getTableColumns(table)) as [string, SQLiteColumn][];
  }

  /** Inserts one row (columns left undefined take their defaults). */
  insert(row: T["$inferInsert"]): void {
    const present = this.present(row);
    this.port
      .prepare(
        `INSERT INTO "${this.name}" (${present.map(([, c]) => `"${c.name}"`).join(", ")})
         VALUES (${present.map(() => "?").join(", ")})`,
      )
      .run(...present.map(([key, c]) => toDriver(c, (row as Record<string, unknown>)[key])));
  }

  /** Sets the columns present in `patch` where the column of `where` (a key) equals `value`. */
  update(
    patch: Partial<T["$inferSelect"]>,
    where: keyof T["$inferSelect"] & string,
    value: SqlValue,
  ): number {
    const present = this.present(patch);
    if (present.length === 0) return 0;
    const whereColumn = this.columns.find(([key]) => key === where)![1];
    return this.port
      .prepare(
        `UPDATE "${this.name}" SET ${present.map(([, c]) => `"${c.name}" = ?`).join(", ")}
          WHERE "${whereColumn.name}" = ?`,
      )
      .run(...present.map(([key, c]) => toDriver(c, (patch as Record<string, unknown>)[key])), value).changes;
  }

  /** `SELECT <every column> FROM <table>`, each column under its key, for `fromDriver`. */
  selectAll(): string {
    return `SELECT ${this.columns.map(([key, c]) => `"${c.name}" AS "${key}"`).join(", ")} FROM "${this.name}"`;
  }

  fromDriver(raw: Record<string, unknown>): T["$inferSelect"] {
    const row: Record<string, unknown> = {};
    for (const [key, c] of this.columns) {
      const value = raw[key];
      row[key] = value === null || value === undefined ? null : c.mapFromDriverValue(value);
    }
    return row as T["$inferSelect"];
  }

  private present(values: object): [string, SQLiteColumn][] {
    return this.columns.filter(([key]) => (values as Record<string, unknown>)[key] !== undefined);
  }
}

function toDriver(column: SQLiteColumn, value: unknown): SqlValue {
  return value === null ? null : (column.mapToDriverValue(value) as SqlValue);
}
