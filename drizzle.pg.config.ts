// The PostgreSQL dialect of the schema (src/db/pg/schema.ts): `make migrations` generates both.
import { defineConfig } from "drizzle-kit";

export default defineConfig({
  dialect: "postgresql",
  schema: "./src/db/pg/schema.ts",
  out: "./migrations-pg",
});
