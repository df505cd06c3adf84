// The stores' port (../sql-port.ts) on PostgreSQL, through PgSyncClient.
import type { SqlPort, SqlStatement, SqlValue } from "../sql-port";
import { PgQueryError, type PgSyncClient } from "./sync-client";

/** How often a transaction that lost a serializable conflict to another replica runs again. */
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

export function postgresPort(client: PgSyncClient): SqlPort {
  let depth = 0;
  return {
    dialect: "postgres",
    // No insertion order in PostgreSQL's rows; the key breaks ties instead (rows written within the
    // same millisecond may list in another order than SQLite's).
    insertionOrder: "id",
    prepare<Row, Params extends SqlValue[]>(text: string): SqlStatement<Row, Params> {
      const translated = toPostgresPlaceholders(text);
      return {
        get: (...params) => (client.query(translated, params)[0] as Row | undefined) ?? null,
        all: (...params) => client.query(translated, params) as Row[],
        run: (...params) => ({ changes: client.run(translated, params) }),
      };
    },
    transaction<T>(work: () => T): T {
      if (depth > 0) return work();
      for (let attempt = 1; ; attempt++) {
        depth += 1;
        try {
          return client.transaction(work, "serializable");
        } catch (e) {
          if (!(e instanceof PgQueryError && e.code === "40001") || attempt >= SERIALIZATION_RETRIES) throw e;
        } finally {
          depth -= 1;
        }
      }
    },
  };
}
