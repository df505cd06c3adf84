-- The document kinds among a statement's operations, kept when it becomes ready: the 1C export's
-- header lists them, and finding them at every export read every operation of the statement
-- (about 100 ms for 155,000). Statements made ready before keep NULL and are read as before.
ALTER TABLE `statements` ADD `doc_types` text;
