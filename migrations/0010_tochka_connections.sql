CREATE TABLE `bank_auth_states` (
	`state_hash` text PRIMARY KEY NOT NULL,
	`connection_id` text NOT NULL,
	`expires_at_ms` integer NOT NULL,
	FOREIGN KEY (`connection_id`) REFERENCES `bank_connections`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE TABLE `bank_connections` (
	`id` text PRIMARY KEY NOT NULL,
	`bank` text NOT NULL,
	`credentials_enc` blob NOT NULL,
	`status` text NOT NULL,
	`status_message` text,
	`refresh_lease_until_ms` integer DEFAULT 0 NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
ALTER TABLE `bank_accounts` ADD `environment` text DEFAULT 'production' NOT NULL;--> statement-breakpoint
ALTER TABLE `bank_accounts` ADD `connection_id` text REFERENCES bank_connections(id);--> statement-breakpoint
ALTER TABLE `payment_items` ADD `next_status_check_at_ms` integer;--> statement-breakpoint
CREATE INDEX `payment_items_status_check_idx` ON `payment_items` (`next_status_check_at_ms`);--> statement-breakpoint
ALTER TABLE `statements` ADD `bank_error_code` text;--> statement-breakpoint
-- Each account's own login becomes a connection of its own (same id), reached from the account;
-- 0011 then drops the account's column.
INSERT INTO `bank_connections` (`id`, `bank`, `credentials_enc`, `status`, `created_at`, `updated_at`)
  SELECT `id`, `bank`, `credentials_enc`, 'active', `created_at`, `created_at`
    FROM `bank_accounts` WHERE `credentials_enc` IS NOT NULL;--> statement-breakpoint
UPDATE `bank_accounts` SET `connection_id` = `id` WHERE `credentials_enc` IS NOT NULL;
