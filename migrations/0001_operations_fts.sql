-- Full-text index over what an agent searches: purpose, counterparty names and doc number.
-- unicode61 folds case for Cyrillic as well as Latin; remove_diacritics also makes ё match е.
CREATE VIRTUAL TABLE `operations_fts` USING fts5(
  `purpose`, `payer_name`, `payee_name`, `doc_number`,
  content='operations', content_rowid='id',
  tokenize='unicode61 remove_diacritics 2'
);
--> statement-breakpoint
CREATE TRIGGER `operations_fts_ai` AFTER INSERT ON `operations` BEGIN
  INSERT INTO `operations_fts`(rowid, `purpose`, `payer_name`, `payee_name`, `doc_number`)
  VALUES (new.`id`, new.`purpose`, new.`payer_name`, new.`payee_name`, new.`doc_number`);
END;
--> statement-breakpoint
CREATE TRIGGER `operations_fts_ad` AFTER DELETE ON `operations` BEGIN
  INSERT INTO `operations_fts`(`operations_fts`, rowid, `purpose`, `payer_name`, `payee_name`, `doc_number`)
  VALUES ('delete', old.`id`, old.`purpose`, old.`payer_name`, old.`payee_name`, old.`doc_number`);
END;
