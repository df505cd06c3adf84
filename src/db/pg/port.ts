// The stores' port (../sql-port.ts) on PostgreSQL, through PgSyncClient.
import {
  type NamedSqlStatement,
  type SqlArray,
  type SqlPort,
  type SqlStatement,
  type SqlValue,
  UnstorableText,
} from "../sql-port";
import { PgQueryError, type PgSyncClient } from "./sync-client";

/** How often a transaction (or a statement of its own) that lost a conflict to another replica runs again. */
const SERIALIZATION_RETRIES = 5;

/** `?` placeholders to `$1`, `$2`…, leaving string literals and quoted identifiers alone. */
export function toPostgresPlaceholders(text: string): string {
  let n = 0;
  let out = "";
  let quote: string | null = null;
  for (const ch of text) {
    if (quote !== null) {
      if (ch === quote) quote = null;
      out += ch;
    } else if (ch === "'" || ch === '"') {
      quote = ch;
      out += ch;
    } else if (ch === "?") {
      n += 1;
      out += `$${n}`;
    } else {
      out += ch;
    }
  }
  return out;
}

/** `$name` placeholders to `$1`, `$2`… (a name used twice is one parameter); the names in order. */
export function toPostgresNamed(text: string): { text: string; names: string[] } {
  const names: string[] = [];
  let out = "";
  let quote: string | null = null;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quote !== null) {
      if (ch === quote) quote = null;
      out += ch;
      continue;
    }
    if (ch === "'" || ch === '"') {
      quote = ch;
      out += ch;
      continue;
    }
    const name = ch === "$" ? /^[A-Za-z_][A-Za-z0-9_]*/.exec(text.slice(i + 1))?.[0] : undefined;
    if (name === undefined) {
      out += ch;
      continue;
    }
    let n = names.indexOf(name);
    if (n < 0) n = names.push(name) - 1;
    out += `$${n + 1}`;
    i += name.length;
  }
  return { text: out, names };
}

/** The parameters, refused before they are sent when a text among them holds a NUL. */
function storable(values: unknown[]): unknown[] {
  for (const v of values) {
    if (
      typeof v === "string" ? v.includes("\0") : Array.isArray(v) && v.some((e) => String(e).includes("\0"))
    )
      throw new UnstorableText();
  }
  return values;
}

/** A deadlock or a serialization failure: PostgreSQL rolled the transaction back; running it again is safe. */
function lostConflict(e: unknown): boolean {
  return e instanceof PgQueryError && (e.code === "40001" || e.code === "40P01");
}

export function postgresPort(client: PgSyncClient): SqlPort {
  // A statement outside a transaction is one of its own: one that lost a conflict runs again.
  const once = <T>(run: () => T): T => {
    for (let attempt = 1; ; attempt++) {
      try {
        return run();
      } catch (e) {
        if (client.inTransaction || !lostConflict(e) || attempt >= SERIALIZATION_RETRIES) throw e;
      }
    }
  };
  // One statement's three ways of running, from the SQL text and the parameters in order.
  const statement = <Row, P>(text: string, values: (params: P) => unknown[]) => ({
    get: (params: P) =>
      once(() => (client.query(text, storable(values(params)))[0] as Row | undefined) ?? null),
    all: (params: P) => once(() => client.query(text, storable(values(params))) as Row[]),
    run: (params: P) => once(() => ({ changes: client.run(text, storable(values(params))) })),
  });
  return {
    dialect: "postgres",
    // SQLite's rowid: an identity column svc never sets, on the tables listed in creation order
    // (migrations-pg 0005_insertion_order).
    insertionOrder: "seq",
    prepare<Row, Params extends (SqlValue | SqlArray)[]>(text: string): SqlStatement<Row, Params> {
      const run = statement<Row, Params>(toPostgresPlaceholders(text), (params) => params);
      return {
        get: (...params) => run.get(params as Params),
        all: (...params) => run.all(params as Params),
        run: (...params) => run.run(params as Params),
      };
    },
    prepareNamed<Row, Params extends Record<string, SqlValue>>(text: string): NamedSqlStatement<Row, Params> {
      const named = toPostgresNamed(text);
      return statement<Row, Params>(named.text, (params) =>
        named.names.map((name) => {
          const value = params[name];
          if (value === undefined) throw new Error(`no value for the parameter $${name}`);
          return value;
        }),
      );
    },
    transaction<T>(work: () => T): T {
      // Inside an open one (a caller's), the work joins it; a conflict re-runs the outer one.
      if (client.inTransaction) return work();
      for (let attempt = 1; ; attempt++) {
        try {
          return client.transaction(work, "serializable");
        } catch (e) {
          if (!lostConflict(e) || attempt >= SERIALIZATION_RETRIES) throw e;
        }
      }
    },
  };
}
