DROP INDEX `operations_inn_idx`;--> statement-breakpoint
CREATE INDEX `operations_inn_idx` ON `operations` (`bank_account_id`,`counterparty_inn`,`doc_date`,`operation_id`);