-- Entries of one token were found through audit_log_token_idx (api_token_id, id). With many
-- tokens calling at once, every grouped commit of agent audit rows wrote a different leaf of that
-- index per token: the largest cost of an agent call. Instead, audit_token_blocks records which
-- blocks of 4096 consecutive ids hold entries of a token (a block-range map, maintained by a
-- trigger for every writer); a per-token query scans only those blocks, by rowid. A new row adds
-- a map entry only when its token first appears in its block.
DROP INDEX `audit_log_token_idx`;
--> statement-breakpoint
CREATE TABLE `audit_token_blocks` (
  `api_token_id` text NOT NULL,
  `block` integer NOT NULL,
  PRIMARY KEY (`api_token_id`, `block`)
) WITHOUT ROWID;
--> statement-breakpoint
INSERT INTO `audit_token_blocks` (`api_token_id`, `block`)
  SELECT DISTINCT `api_token_id`, `id` >> 12 FROM `audit_log` WHERE `api_token_id` IS NOT NULL;
--> statement-breakpoint
CREATE TRIGGER `audit_token_blocks_ai` AFTER INSERT ON `audit_log` WHEN new.`api_token_id` IS NOT NULL BEGIN
  INSERT OR IGNORE INTO `audit_token_blocks` (`api_token_id`, `block`) VALUES (new.`api_token_id`, new.`id` >> 12);
END;
