CREATE TABLE "account_syncs" (
	"bank_account_id" text COLLATE "C" PRIMARY KEY NOT NULL,
	"enabled" boolean DEFAULT false NOT NULL,
	"since" text COLLATE "C" NOT NULL,
	"interval_minutes" bigint DEFAULT 60 NOT NULL,
	"next_run_ms" bigint DEFAULT 0 NOT NULL,
	"run_no" bigint DEFAULT 0 NOT NULL,
	"last_run_at" text COLLATE "C",
	"last_error" text COLLATE "C",
	"failures" bigint DEFAULT 0 NOT NULL,
	"error_run" bigint DEFAULT 0 NOT NULL,
	"updated_at" text COLLATE "C" NOT NULL
);
--> statement-breakpoint
ALTER TABLE "statements" ADD COLUMN "sync_key" text COLLATE "C";--> statement-breakpoint
ALTER TABLE "account_syncs" ADD CONSTRAINT "account_syncs_bank_account_id_bank_accounts_id_fk" FOREIGN KEY ("bank_account_id") REFERENCES "public"."bank_accounts"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "account_syncs_due_idx" ON "account_syncs" USING btree ("enabled","next_run_ms");--> statement-breakpoint
CREATE UNIQUE INDEX "statements_sync_key_uq" ON "statements" USING btree ("bank_account_id","sync_key");