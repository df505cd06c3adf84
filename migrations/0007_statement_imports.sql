-- Statements imported from a bank's own 1C file keep the file's SHA-256 (idempotency by external_id).
ALTER TABLE `statements` ADD `import_sha256` text;