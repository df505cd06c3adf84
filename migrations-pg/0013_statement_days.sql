CREATE TABLE "statement_days" (
	"bank_account_id" text COLLATE "C" NOT NULL,
	"day" text COLLATE "C" NOT NULL,
	"fetched_at" text COLLATE "C" NOT NULL,
	CONSTRAINT "statement_days_bank_account_id_day_pk" PRIMARY KEY("bank_account_id","day")
);
--> statement-breakpoint
ALTER TABLE "statement_days" ADD CONSTRAINT "statement_days_bank_account_id_bank_accounts_id_fk" FOREIGN KEY ("bank_account_id") REFERENCES "public"."bank_accounts"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
-- The days of the statements already ready: each account's days, with the newest fetched_at of
-- the ready statements holding them (what StatementRepository.markReady keeps from now on).
INSERT INTO "statement_days" ("bank_account_id", "day", "fetched_at")
  SELECT s."bank_account_id", to_char(d, 'YYYY-MM-DD'), max(s."fetched_at")
    FROM "statements" s
   CROSS JOIN LATERAL generate_series(s."date_from"::timestamp, s."date_to"::timestamp, interval '1 day') AS d
   WHERE s."status" = 'ready' AND s."fetched_at" IS NOT NULL
   GROUP BY 1, 2;
