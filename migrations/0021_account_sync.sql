CREATE TABLE `account_syncs` (
	`bank_account_id` text PRIMARY KEY NOT NULL,
	`enabled` integer DEFAULT false NOT NULL,
	`since` text NOT NULL,
	`interval_minutes` integer DEFAULT 60 NOT NULL,
	`next_run_ms` integer DEFAULT 0 NOT NULL,
	`run_no` integer DEFAULT 0 NOT NULL,
	`last_run_at` text,
	`last_error` text,
	`failures` integer DEFAULT 0 NOT NULL,
	`error_run` integer DEFAULT 0 NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`bank_account_id`) REFERENCES `bank_accounts`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `account_syncs_due_idx` ON `account_syncs` (`enabled`,`next_run_ms`);--> statement-breakpoint
ALTER TABLE `statements` ADD `sync_key` text;--> statement-breakpoint
CREATE UNIQUE INDEX `statements_sync_key_uq` ON `statements` (`bank_account_id`,`sync_key`);