CREATE TABLE `directbank_packets` (
	`id` text PRIMARY KEY NOT NULL,
	`api_token_id` text NOT NULL,
	`bank_account_id` text NOT NULL,
	`kind` text NOT NULL,
	`received_id` text NOT NULL,
	`client_packet_id` text NOT NULL,
	`request_document_id` text,
	`document_id` text NOT NULL,
	`statement_ids` text,
	`date_from` text,
	`date_to` text,
	`format_version` text NOT NULL,
	`compressed` integer DEFAULT false NOT NULL,
	`error_code` text,
	`error_text` text,
	`created_at` text NOT NULL,
	`ready_at` text,
	`taken_at` text,
	FOREIGN KEY (`bank_account_id`) REFERENCES `bank_accounts`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `directbank_packets_ready_idx` ON `directbank_packets` (`api_token_id`,`ready_at`);--> statement-breakpoint
CREATE INDEX `directbank_packets_client_idx` ON `directbank_packets` (`api_token_id`,`client_packet_id`);--> statement-breakpoint
CREATE TABLE `directbank_sessions` (
	`id` text PRIMARY KEY NOT NULL,
	`api_token_id` text NOT NULL,
	`format_version` text NOT NULL,
	`created_at` text NOT NULL,
	`expires_at_ms` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `directbank_sessions_expiry_idx` ON `directbank_sessions` (`expires_at_ms`);