// lanes: sqlite
// The migrated database's schema, tables, indexes, FTS virtual and shadow tables and triggers
// included, must equal the committed golden dump. After adding a migration, regenerate it with
//   UPDATE_GOLDEN=1 node_modules/.bin/bun test test/db/schema-golden.test.ts
// and review the diff of test/db/schema.golden.sql with the migration.
import { expect, test } from "bun:test";
import { join } from "node:path";
import { migrate, openDatabase } from "../../src/db/open";

const GOLDEN = join(import.meta.dir, "schema.golden.sql");

function schemaDump(): string {
  const opened = openDatabase(":memory:");
  try {
    migrate(opened.db);
    const rows = opened.sqlite
      .query<{ type: string; name: string; tbl_name: string; sql: string | null }, []>(
        // Drizzle's own bookkeeping table is not part of the service's schema.
        `SELECT type, name, tbl_name, sql FROM sqlite_master
          WHERE name NOT LIKE '__drizzle%'
          ORDER BY tbl_name, CASE type WHEN 'table' THEN 0 WHEN 'index' THEN 1 WHEN 'trigger' THEN 2 ELSE 3 END, name`,
      )
      .all();
    return rows
      .map((r) => {
        const sql = r.sql === null ? "(no sql: created by SQLite)" : `${r.sql.replace(/\s+/g, " ").trim()};`;
        return `-- ${r.type} ${r.name} on ${r.tbl_name}\n${sql}\n`;
      })
      .join("\n");
  } finally {
    opened.close();
  }
}

test("the migrated schema equals test/db/schema.golden.sql", async () => {
  const dump = schemaDump();
  if (process.env.UPDATE_GOLDEN === "1") {
    await Bun.write(GOLDEN, dump);
    return;
  }
  const golden = await Bun.file(GOLDEN).text();
  expect(dump).toBe(golden);
});
