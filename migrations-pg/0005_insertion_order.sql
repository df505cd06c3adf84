-- Lists of companies, bank accounts and tokens keep creation order, rows of the same millisecond in
-- the order they were inserted: SQLite's rowid. PostgreSQL keeps no such order, so these tables get
-- a column that does (svc never sets it; src/db/pg/port.ts names it as the insertion order).
ALTER TABLE companies ADD COLUMN seq bigint GENERATED ALWAYS AS IDENTITY;
--> statement-breakpoint
ALTER TABLE bank_accounts ADD COLUMN seq bigint GENERATED ALWAYS AS IDENTITY;
--> statement-breakpoint
ALTER TABLE api_tokens ADD COLUMN seq bigint GENERATED ALWAYS AS IDENTITY;
