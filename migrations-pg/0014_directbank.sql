CREATE TABLE "directbank_packets" (
	"id" text COLLATE "C" PRIMARY KEY NOT NULL,
	"api_token_id" text COLLATE "C" NOT NULL,
	"bank_account_id" text COLLATE "C" NOT NULL,
	"kind" text COLLATE "C" NOT NULL,
	"received_id" text COLLATE "C" NOT NULL,
	"client_packet_id" text COLLATE "C" NOT NULL,
	"request_document_id" text COLLATE "C",
	"document_id" text COLLATE "C" NOT NULL,
	"statement_ids" text COLLATE "C",
	"date_from" text COLLATE "C",
	"date_to" text COLLATE "C",
	"format_version" text COLLATE "C" NOT NULL,
	"compressed" boolean DEFAULT false NOT NULL,
	"error_code" text COLLATE "C",
	"error_text" text COLLATE "C",
	"created_at" text COLLATE "C" NOT NULL,
	"ready_at" text COLLATE "C",
	"taken_at" text COLLATE "C"
);
--> statement-breakpoint
CREATE TABLE "directbank_sessions" (
	"id" text COLLATE "C" PRIMARY KEY NOT NULL,
	"api_token_id" text COLLATE "C" NOT NULL,
	"format_version" text COLLATE "C" NOT NULL,
	"created_at" text COLLATE "C" NOT NULL,
	"expires_at_ms" bigint NOT NULL
);
--> statement-breakpoint
ALTER TABLE "directbank_packets" ADD CONSTRAINT "directbank_packets_bank_account_id_bank_accounts_id_fk" FOREIGN KEY ("bank_account_id") REFERENCES "public"."bank_accounts"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "directbank_packets_ready_idx" ON "directbank_packets" USING btree ("api_token_id","ready_at");--> statement-breakpoint
CREATE INDEX "directbank_packets_client_idx" ON "directbank_packets" USING btree ("api_token_id","client_packet_id");--> statement-breakpoint
CREATE INDEX "directbank_sessions_expiry_idx" ON "directbank_sessions" USING btree ("expires_at_ms");