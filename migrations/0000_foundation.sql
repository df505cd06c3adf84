CREATE TABLE `api_tokens` (
	`id` text PRIMARY KEY NOT NULL,
	`company_id` text NOT NULL,
	`name` text NOT NULL,
	`purpose` text NOT NULL,
	`mode` text NOT NULL,
	`token_hash` text NOT NULL,
	`token_prefix` text NOT NULL,
	`scope_read_statements` integer DEFAULT false NOT NULL,
	`scope_send_payments` integer DEFAULT false NOT NULL,
	`allowed_ips` text DEFAULT '[]' NOT NULL,
	`rate_limit_per_minute` integer,
	`expires_at` text,
	`revoked_at` text,
	`created_at` text NOT NULL,
	`last_used_at` text,
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `api_tokens_hash_uq` ON `api_tokens` (`token_hash`);--> statement-breakpoint
CREATE INDEX `api_tokens_company_idx` ON `api_tokens` (`company_id`);--> statement-breakpoint
CREATE TABLE `audit_log` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`at` text NOT NULL,
	`actor` text NOT NULL,
	`api_token_id` text,
	`mcp_session_id` text,
	`action` text NOT NULL,
	`tool` text,
	`target` text,
	`arguments` text,
	`outcome` text NOT NULL,
	`duration_ms` integer,
	`request_id` text,
	`ip` text,
	`transport` text
);
--> statement-breakpoint
CREATE INDEX `audit_log_at_idx` ON `audit_log` (`at`);--> statement-breakpoint
CREATE INDEX `audit_log_token_idx` ON `audit_log` (`api_token_id`,`id`);--> statement-breakpoint
CREATE INDEX `audit_log_action_idx` ON `audit_log` (`action`,`id`);--> statement-breakpoint
CREATE TABLE `balances` (
	`bank_account_id` text PRIMARY KEY NOT NULL,
	`balance` integer NOT NULL,
	`currency` text NOT NULL,
	`as_of` text NOT NULL,
	FOREIGN KEY (`bank_account_id`) REFERENCES `bank_accounts`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE TABLE `bank_accounts` (
	`id` text PRIMARY KEY NOT NULL,
	`company_id` text NOT NULL,
	`bank` text NOT NULL,
	`account_number` text NOT NULL,
	`bik` text NOT NULL,
	`currency` text NOT NULL,
	`alias` text NOT NULL,
	`credentials_enc` blob,
	`sandbox_ops_per_day` integer,
	`sandbox_opening_balance` integer,
	`created_at` text NOT NULL,
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `bank_accounts_company_idx` ON `bank_accounts` (`company_id`);--> statement-breakpoint
CREATE TABLE `companies` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`inn` text NOT NULL,
	`kpp` text,
	`created_at` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `mcp_sessions` (
	`id` text PRIMARY KEY NOT NULL,
	`api_token_id` text NOT NULL,
	`protocol_version` text NOT NULL,
	`created_at` text NOT NULL,
	`expires_at_ms` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `mcp_sessions_expiry_idx` ON `mcp_sessions` (`expires_at_ms`);--> statement-breakpoint
CREATE TABLE `operations` (
	`id` integer PRIMARY KEY NOT NULL,
	`bank_account_id` text NOT NULL,
	`operation_id` text NOT NULL,
	`doc_date` text NOT NULL,
	`direction` text NOT NULL,
	`doc_type` text NOT NULL,
	`doc_number` text NOT NULL,
	`amount` integer NOT NULL,
	`currency` text NOT NULL,
	`purpose` text NOT NULL,
	`counterparty_inn` text NOT NULL,
	`payer_name` text NOT NULL,
	`payer_inn` text NOT NULL,
	`payer_kpp` text NOT NULL,
	`payer_account` text NOT NULL,
	`payer_bank_name` text NOT NULL,
	`payer_bank_bik` text NOT NULL,
	`payer_bank_corr_account` text NOT NULL,
	`payee_name` text NOT NULL,
	`payee_inn` text NOT NULL,
	`payee_kpp` text NOT NULL,
	`payee_account` text NOT NULL,
	`payee_bank_name` text NOT NULL,
	`payee_bank_bik` text NOT NULL,
	`payee_bank_corr_account` text NOT NULL,
	`uin` text,
	`purpose_code` text,
	`priority` text
);
--> statement-breakpoint
CREATE UNIQUE INDEX `operations_account_op_uq` ON `operations` (`bank_account_id`,`operation_id`);--> statement-breakpoint
CREATE INDEX `operations_date_idx` ON `operations` (`bank_account_id`,`doc_date`,`operation_id`);--> statement-breakpoint
CREATE INDEX `operations_amount_idx` ON `operations` (`bank_account_id`,`amount`);--> statement-breakpoint
CREATE INDEX `operations_inn_idx` ON `operations` (`bank_account_id`,`counterparty_inn`,`doc_date`);--> statement-breakpoint
CREATE TABLE `sandbox_requests` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`at` text NOT NULL,
	`bank_account_id` text NOT NULL,
	`kind` text NOT NULL,
	`date_from` text,
	`date_to` text,
	`client_ref` text
);
--> statement-breakpoint
CREATE INDEX `sandbox_requests_account_idx` ON `sandbox_requests` (`bank_account_id`,`id`);--> statement-breakpoint
CREATE TABLE `statement_operations` (
	`statement_id` text NOT NULL,
	`seq` integer NOT NULL,
	`operation_id` text NOT NULL,
	PRIMARY KEY(`statement_id`, `seq`)
);
--> statement-breakpoint
CREATE TABLE `statements` (
	`id` text PRIMARY KEY NOT NULL,
	`bank_account_id` text NOT NULL,
	`api_token_id` text,
	`source` text NOT NULL,
	`external_id` text,
	`date_from` text NOT NULL,
	`date_to` text NOT NULL,
	`status` text NOT NULL,
	`bank_state` text NOT NULL,
	`bank_request_id` text,
	`attempts` integer DEFAULT 0 NOT NULL,
	`next_poll_at_ms` integer DEFAULT 0 NOT NULL,
	`error_code` text,
	`error_message` text,
	`opening_balance` integer,
	`closing_balance` integer,
	`total_credit` integer,
	`total_debit` integer,
	`operations_count` integer,
	`fetched_at` text,
	`created_at` text NOT NULL,
	FOREIGN KEY (`bank_account_id`) REFERENCES `bank_accounts`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `statements_token_external_uq` ON `statements` (`api_token_id`,`external_id`);--> statement-breakpoint
CREATE INDEX `statements_account_idx` ON `statements` (`bank_account_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `statements_due_idx` ON `statements` (`status`,`next_poll_at_ms`);--> statement-breakpoint
CREATE TABLE `token_accounts` (
	`token_id` text NOT NULL,
	`bank_account_id` text NOT NULL,
	`allow_read_statements` integer DEFAULT false NOT NULL,
	`allow_send_payments` integer DEFAULT false NOT NULL,
	PRIMARY KEY(`token_id`, `bank_account_id`),
	FOREIGN KEY (`token_id`) REFERENCES `api_tokens`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`bank_account_id`) REFERENCES `bank_accounts`(`id`) ON UPDATE no action ON DELETE no action
);
