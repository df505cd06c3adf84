-- Search folds ё into е: people and agents write both ("счёт", "счет"), and unicode61's
-- remove_diacritics leaves Cyrillic alone. The index is fed the folded text (the queries are
-- folded too, see ftsQuery); the index is external-content over `operations`, whose own text
-- stays as the bank wrote it. The index is refilled here from the folded text, not with
-- 'rebuild' (which would read the unfolded columns).
DROP TRIGGER `operations_fts_ai`;
--> statement-breakpoint
DROP TRIGGER `operations_fts_ad`;
--> statement-breakpoint
CREATE TRIGGER `operations_fts_ai` AFTER INSERT ON `operations` BEGIN
  INSERT INTO `operations_fts`(rowid, `purpose`, `payer_name`, `payee_name`, `doc_number`)
  VALUES (new.`id`,
    replace(replace(new.`purpose`, 'ё', 'е'), 'Ё', 'Е'),
    replace(replace(new.`payer_name`, 'ё', 'е'), 'Ё', 'Е'),
    replace(replace(new.`payee_name`, 'ё', 'е'), 'Ё', 'Е'),
    new.`doc_number`);
END;
--> statement-breakpoint
CREATE TRIGGER `operations_fts_ad` AFTER DELETE ON `operations` BEGIN
  INSERT INTO `operations_fts`(`operations_fts`, rowid, `purpose`, `payer_name`, `payee_name`, `doc_number`)
  VALUES ('delete', old.`id`,
    replace(replace(old.`purpose`, 'ё', 'е'), 'Ё', 'Е'),
    replace(replace(old.`payer_name`, 'ё', 'е'), 'Ё', 'Е'),
    replace(replace(old.`payee_name`, 'ё', 'е'), 'Ё', 'Е'),
    old.`doc_number`);
END;
--> statement-breakpoint
INSERT INTO `operations_fts`(`operations_fts`) VALUES ('delete-all');
--> statement-breakpoint
INSERT INTO `operations_fts`(rowid, `purpose`, `payer_name`, `payee_name`, `doc_number`)
  SELECT `id`,
    replace(replace(`purpose`, 'ё', 'е'), 'Ё', 'Е'),
    replace(replace(`payer_name`, 'ё', 'е'), 'Ё', 'Е'),
    replace(replace(`payee_name`, 'ё', 'е'), 'Ё', 'Е'),
    `doc_number`
  FROM `operations`;
