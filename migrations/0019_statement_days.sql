CREATE TABLE `statement_days` (
	`bank_account_id` text NOT NULL,
	`day` text NOT NULL,
	`fetched_at` text NOT NULL,
	PRIMARY KEY(`bank_account_id`, `day`),
	FOREIGN KEY (`bank_account_id`) REFERENCES `bank_accounts`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
-- The days of the statements already ready: each account's days, with the newest fetched_at of
-- the ready statements holding them (what StatementRepository.markReady keeps from now on).
INSERT INTO `statement_days` (`bank_account_id`, `day`, `fetched_at`)
  WITH RECURSIVE `held` (`bank_account_id`, `day`, `date_to`, `fetched_at`) AS (
    SELECT `bank_account_id`, `date_from`, `date_to`, `fetched_at` FROM `statements`
     WHERE `status` = 'ready' AND `fetched_at` IS NOT NULL
    UNION ALL
    SELECT `bank_account_id`, date(`day`, '+1 day'), `date_to`, `fetched_at` FROM `held`
     WHERE `day` < `date_to`
  )
  SELECT `bank_account_id`, `day`, max(`fetched_at`) FROM `held` GROUP BY `bank_account_id`, `day`;
