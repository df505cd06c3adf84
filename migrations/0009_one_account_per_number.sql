-- One account per number and BIK. svc checks for existing duplicates before applying this and
-- refuses to start, naming them, rather than delete anything (see db/open.ts).
CREATE UNIQUE INDEX `bank_accounts_number_bik_uq` ON `bank_accounts` (`account_number`,`bik`);