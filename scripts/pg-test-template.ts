// Makes the migrated template database the PostgreSQL lane of the suite clones for every test app
// (test/helpers/pg.ts): migrating once per run instead of once per app.
import postgres from "postgres";
import { migratePostgres } from "../src/db/pg/migrate";
import { PG_TEMPLATE } from "../test/helpers/pg";

const server = process.env.SVC_TEST_DATABASE_URL;
if (!server) throw new Error("SVC_TEST_DATABASE_URL is not set (scripts/pg-test.sh start writes it)");
const admin = postgres(server, { max: 1, onnotice: () => {} });
await admin.unsafe(`DROP DATABASE IF EXISTS ${PG_TEMPLATE}`);
await admin.unsafe(`CREATE DATABASE ${PG_TEMPLATE}`);
await admin.end({ timeout: 5 });
const url = new URL(server);
url.pathname = `/${PG_TEMPLATE}`;
const sql = postgres(url.toString(), { max: 1, onnotice: () => {} });
await migratePostgres(sql, url.toString());
await sql.end({ timeout: 5 });
