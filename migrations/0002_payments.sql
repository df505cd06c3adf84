CREATE TABLE `payment_imports` (
	`id` text PRIMARY KEY NOT NULL,
	`api_token_id` text NOT NULL,
	`bank_account_id` text NOT NULL,
	`file_bytes` integer NOT NULL,
	`created_at` text NOT NULL,
	FOREIGN KEY (`bank_account_id`) REFERENCES `bank_accounts`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `payment_imports_token_idx` ON `payment_imports` (`api_token_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `payment_items` (
	`id` text PRIMARY KEY NOT NULL,
	`import_id` text NOT NULL,
	`seq` integer NOT NULL,
	`line` integer NOT NULL,
	`status` text NOT NULL,
	`doc_number` text NOT NULL,
	`doc_date` text NOT NULL,
	`amount` integer NOT NULL,
	`currency` text NOT NULL,
	`purpose` text NOT NULL,
	`priority` text,
	`payee_name` text NOT NULL,
	`payee_inn` text NOT NULL,
	`payee_kpp` text NOT NULL,
	`payee_account` text NOT NULL,
	`payee_bank_name` text NOT NULL,
	`payee_bank_bik` text NOT NULL,
	`payee_bank_corr_account` text NOT NULL,
	`submission_id` text,
	`bank_idempotency_key` text,
	`bank_reference` text,
	`sign_url` text,
	`error_code` text,
	`error_message` text,
	`submitted_at` text,
	FOREIGN KEY (`import_id`) REFERENCES `payment_imports`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `payment_items_import_seq_uq` ON `payment_items` (`import_id`,`seq`);--> statement-breakpoint
CREATE INDEX `payment_items_submission_idx` ON `payment_items` (`submission_id`);--> statement-breakpoint
CREATE TABLE `payment_submissions` (
	`id` text PRIMARY KEY NOT NULL,
	`api_token_id` text NOT NULL,
	`external_id` text NOT NULL,
	`payload_hash` text NOT NULL,
	`kind` text NOT NULL,
	`import_id` text NOT NULL,
	`item_id` text,
	`status` text NOT NULL,
	`result_json` text,
	`created_at` text NOT NULL,
	`completed_at` text,
	FOREIGN KEY (`import_id`) REFERENCES `payment_imports`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `payment_submissions_token_external_uq` ON `payment_submissions` (`api_token_id`,`external_id`);--> statement-breakpoint
CREATE INDEX `payment_submissions_status_idx` ON `payment_submissions` (`status`);