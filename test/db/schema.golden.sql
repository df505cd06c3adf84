-- index sqlite_autoindex___drizzle_migrations_1 on __drizzle_migrations
(no sql: created by SQLite)

-- table account_syncs on account_syncs
CREATE TABLE `account_syncs` ( `bank_account_id` text PRIMARY KEY NOT NULL, `enabled` integer DEFAULT false NOT NULL, `since` text NOT NULL, `interval_minutes` integer DEFAULT 60 NOT NULL, `next_run_ms` integer DEFAULT 0 NOT NULL, `run_no` integer DEFAULT 0 NOT NULL, `last_run_at` text, `last_error` text, `failures` integer DEFAULT 0 NOT NULL, `error_run` integer DEFAULT 0 NOT NULL, `updated_at` text NOT NULL, FOREIGN KEY (`bank_account_id`) REFERENCES `bank_accounts`(`id`) ON UPDATE no action ON DELETE no action );

-- index account_syncs_due_idx on account_syncs
CREATE INDEX `account_syncs_due_idx` ON `account_syncs` (`enabled`,`next_run_ms`);

-- index sqlite_autoindex_account_syncs_1 on account_syncs
(no sql: created by SQLite)

-- table api_tokens on api_tokens
CREATE TABLE `api_tokens` ( `id` text PRIMARY KEY NOT NULL, `company_id` text NOT NULL, `name` text NOT NULL, `purpose` text NOT NULL, `mode` text NOT NULL, `token_hash` text NOT NULL, `token_prefix` text NOT NULL, `scope_read_statements` integer DEFAULT false NOT NULL, `scope_send_payments` integer DEFAULT false NOT NULL, `allowed_ips` text DEFAULT '[]' NOT NULL, `rate_limit_per_minute` integer, `expires_at` text, `revoked_at` text, `created_at` text NOT NULL, `last_used_at` text, `oauth_grant_id` text, FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE no action );

-- index api_tokens_company_idx on api_tokens
CREATE INDEX `api_tokens_company_idx` ON `api_tokens` (`company_id`);

-- index api_tokens_hash_uq on api_tokens
CREATE UNIQUE INDEX `api_tokens_hash_uq` ON `api_tokens` (`token_hash`);

-- index sqlite_autoindex_api_tokens_1 on api_tokens
(no sql: created by SQLite)

-- table audit_log on audit_log
CREATE TABLE `audit_log` ( `id` integer PRIMARY KEY AUTOINCREMENT NOT NULL, `at` text NOT NULL, `actor` text NOT NULL, `api_token_id` text, `mcp_session_id` text, `action` text NOT NULL, `tool` text, `target` text, `arguments` text, `outcome` text NOT NULL, `duration_ms` integer, `request_id` text, `ip` text, `transport` text , `protocol_revision` text);

-- index audit_log_action_idx on audit_log
CREATE INDEX `audit_log_action_idx` ON `audit_log` (`action`,`id`);

-- index audit_log_at_idx on audit_log
CREATE INDEX `audit_log_at_idx` ON `audit_log` (`at`);

-- trigger audit_token_blocks_ai on audit_log
CREATE TRIGGER `audit_token_blocks_ai` AFTER INSERT ON `audit_log` WHEN new.`api_token_id` IS NOT NULL BEGIN INSERT OR IGNORE INTO `audit_token_blocks` (`api_token_id`, `block`) VALUES (new.`api_token_id`, new.`id` >> 12); END;

-- table audit_token_blocks on audit_token_blocks
CREATE TABLE `audit_token_blocks` ( `api_token_id` text NOT NULL, `block` integer NOT NULL, PRIMARY KEY (`api_token_id`, `block`) ) WITHOUT ROWID;

-- table balances on balances
CREATE TABLE `balances` ( `bank_account_id` text PRIMARY KEY NOT NULL, `balance` integer NOT NULL, `currency` text NOT NULL, `as_of` text NOT NULL, FOREIGN KEY (`bank_account_id`) REFERENCES `bank_accounts`(`id`) ON UPDATE no action ON DELETE no action );

-- index sqlite_autoindex_balances_1 on balances
(no sql: created by SQLite)

-- table bank_accounts on bank_accounts
CREATE TABLE `bank_accounts` ( `id` text PRIMARY KEY NOT NULL, `company_id` text NOT NULL, `bank` text NOT NULL, `account_number` text NOT NULL, `bik` text NOT NULL, `currency` text NOT NULL, `alias` text NOT NULL, `sandbox_ops_per_day` integer, `sandbox_opening_balance` integer, `created_at` text NOT NULL, `environment` text DEFAULT 'production' NOT NULL, `connection_id` text REFERENCES bank_connections(id), FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE no action );

-- index bank_accounts_company_idx on bank_accounts
CREATE INDEX `bank_accounts_company_idx` ON `bank_accounts` (`company_id`);

-- index bank_accounts_number_bik_uq on bank_accounts
CREATE UNIQUE INDEX `bank_accounts_number_bik_uq` ON `bank_accounts` (`account_number`,`bik`);

-- index sqlite_autoindex_bank_accounts_1 on bank_accounts
(no sql: created by SQLite)

-- table bank_auth_states on bank_auth_states
CREATE TABLE `bank_auth_states` ( `state_hash` text PRIMARY KEY NOT NULL, `connection_id` text NOT NULL, `expires_at_ms` integer NOT NULL, FOREIGN KEY (`connection_id`) REFERENCES `bank_connections`(`id`) ON UPDATE no action ON DELETE no action );

-- index sqlite_autoindex_bank_auth_states_1 on bank_auth_states
(no sql: created by SQLite)

-- table bank_connections on bank_connections
CREATE TABLE `bank_connections` ( `id` text PRIMARY KEY NOT NULL, `bank` text NOT NULL, `credentials_enc` blob NOT NULL, `status` text NOT NULL, `status_message` text, `refresh_lease_until_ms` integer DEFAULT 0 NOT NULL, `created_at` text NOT NULL, `updated_at` text NOT NULL );

-- index sqlite_autoindex_bank_connections_1 on bank_connections
(no sql: created by SQLite)

-- table companies on companies
CREATE TABLE `companies` ( `id` text PRIMARY KEY NOT NULL, `name` text NOT NULL, `inn` text NOT NULL, `kpp` text, `created_at` text NOT NULL );

-- index sqlite_autoindex_companies_1 on companies
(no sql: created by SQLite)

-- table directbank_packets on directbank_packets
CREATE TABLE `directbank_packets` ( `id` text PRIMARY KEY NOT NULL, `api_token_id` text NOT NULL, `bank_account_id` text NOT NULL, `kind` text NOT NULL, `received_id` text NOT NULL, `client_packet_id` text NOT NULL, `request_document_id` text, `document_id` text NOT NULL, `statement_ids` text, `date_from` text, `date_to` text, `format_version` text NOT NULL, `compressed` integer DEFAULT false NOT NULL, `error_code` text, `error_text` text, `created_at` text NOT NULL, `ready_at` text, `taken_at` text, FOREIGN KEY (`bank_account_id`) REFERENCES `bank_accounts`(`id`) ON UPDATE no action ON DELETE no action );

-- index directbank_packets_client_idx on directbank_packets
CREATE INDEX `directbank_packets_client_idx` ON `directbank_packets` (`api_token_id`,`client_packet_id`);

-- index directbank_packets_ready_idx on directbank_packets
CREATE INDEX `directbank_packets_ready_idx` ON `directbank_packets` (`api_token_id`,`ready_at`);

-- index sqlite_autoindex_directbank_packets_1 on directbank_packets
(no sql: created by SQLite)

-- table directbank_sessions on directbank_sessions
CREATE TABLE `directbank_sessions` ( `id` text PRIMARY KEY NOT NULL, `api_token_id` text NOT NULL, `format_version` text NOT NULL, `created_at` text NOT NULL, `expires_at_ms` integer NOT NULL );

-- index directbank_sessions_expiry_idx on directbank_sessions
CREATE INDEX `directbank_sessions_expiry_idx` ON `directbank_sessions` (`expires_at_ms`);

-- index sqlite_autoindex_directbank_sessions_1 on directbank_sessions
(no sql: created by SQLite)

-- table mcp_sessions on mcp_sessions
CREATE TABLE `mcp_sessions` ( `id` text PRIMARY KEY NOT NULL, `api_token_id` text NOT NULL, `protocol_version` text NOT NULL, `created_at` text NOT NULL, `expires_at_ms` integer NOT NULL );

-- index mcp_sessions_expiry_idx on mcp_sessions
CREATE INDEX `mcp_sessions_expiry_idx` ON `mcp_sessions` (`expires_at_ms`);

-- index sqlite_autoindex_mcp_sessions_1 on mcp_sessions
(no sql: created by SQLite)

-- table oauth_clients on oauth_clients
CREATE TABLE `oauth_clients` ( `id` text PRIMARY KEY NOT NULL, `kind` text NOT NULL, `name` text NOT NULL, `redirect_uris` text NOT NULL, `token_endpoint_auth_method` text NOT NULL, `secret_hash` text, `created_at` text NOT NULL );

-- index oauth_clients_created_idx on oauth_clients
CREATE INDEX `oauth_clients_created_idx` ON `oauth_clients` (`created_at`,`id`);

-- index sqlite_autoindex_oauth_clients_1 on oauth_clients
(no sql: created by SQLite)

-- table oauth_grants on oauth_grants
CREATE TABLE `oauth_grants` ( `id` text PRIMARY KEY NOT NULL, `client_id` text NOT NULL, `api_token_id` text NOT NULL, `company_id` text NOT NULL, `scope` text NOT NULL, `resource` text NOT NULL, `created_at` text NOT NULL, `revoked_at` text );

-- index oauth_grants_client_idx on oauth_grants
CREATE INDEX `oauth_grants_client_idx` ON `oauth_grants` (`client_id`);

-- index sqlite_autoindex_oauth_grants_1 on oauth_grants
(no sql: created by SQLite)

-- table oauth_refresh_tokens on oauth_refresh_tokens
CREATE TABLE `oauth_refresh_tokens` ( `hash` text PRIMARY KEY NOT NULL, `grant_id` text NOT NULL, `created_at_ms` integer NOT NULL, `used_at_ms` integer );

-- index oauth_refresh_tokens_grant_idx on oauth_refresh_tokens
CREATE INDEX `oauth_refresh_tokens_grant_idx` ON `oauth_refresh_tokens` (`grant_id`);

-- index sqlite_autoindex_oauth_refresh_tokens_1 on oauth_refresh_tokens
(no sql: created by SQLite)

-- table oauth_requests on oauth_requests
CREATE TABLE `oauth_requests` ( `id` text PRIMARY KEY NOT NULL, `client_id` text NOT NULL, `redirect_uri` text NOT NULL, `state` text, `code_challenge` text NOT NULL, `scope` text NOT NULL, `resource` text NOT NULL, `status` text NOT NULL, `code_hash` text, `grant_id` text, `created_at_ms` integer NOT NULL, `expires_at_ms` integer NOT NULL );

-- index oauth_requests_client_idx on oauth_requests
CREATE INDEX `oauth_requests_client_idx` ON `oauth_requests` (`client_id`);

-- index oauth_requests_code_uq on oauth_requests
CREATE UNIQUE INDEX `oauth_requests_code_uq` ON `oauth_requests` (`code_hash`);

-- index oauth_requests_expires_idx on oauth_requests
CREATE INDEX `oauth_requests_expires_idx` ON `oauth_requests` (`expires_at_ms`);

-- index oauth_requests_status_created_idx on oauth_requests
CREATE INDEX `oauth_requests_status_created_idx` ON `oauth_requests` (`status`,`created_at_ms`);

-- index sqlite_autoindex_oauth_requests_1 on oauth_requests
(no sql: created by SQLite)

-- table operations on operations
CREATE TABLE `operations` ( `id` integer PRIMARY KEY NOT NULL, `bank_account_id` text NOT NULL, `operation_id` text NOT NULL, `doc_date` text NOT NULL, `direction` text NOT NULL, `doc_type` text NOT NULL, `doc_number` text NOT NULL, `amount` integer NOT NULL, `currency` text NOT NULL, `purpose` text NOT NULL, `counterparty_inn` text NOT NULL, `payer_name` text NOT NULL, `payer_inn` text NOT NULL, `payer_kpp` text NOT NULL, `payer_account` text NOT NULL, `payer_bank_name` text NOT NULL, `payer_bank_bik` text NOT NULL, `payer_bank_corr_account` text NOT NULL, `payee_name` text NOT NULL, `payee_inn` text NOT NULL, `payee_kpp` text NOT NULL, `payee_account` text NOT NULL, `payee_bank_name` text NOT NULL, `payee_bank_bik` text NOT NULL, `payee_bank_corr_account` text NOT NULL, `uin` text, `purpose_code` text, `priority` text , `budget_fields` text);

-- index operations_account_op_uq on operations
CREATE UNIQUE INDEX `operations_account_op_uq` ON `operations` (`bank_account_id`,`operation_id`);

-- index operations_amount_idx on operations
CREATE INDEX `operations_amount_idx` ON `operations` (`bank_account_id`,`amount`);

-- index operations_date_idx on operations
CREATE INDEX `operations_date_idx` ON `operations` (`bank_account_id`,`doc_date`,`operation_id`);

-- index operations_inn_idx on operations
CREATE INDEX `operations_inn_idx` ON `operations` (`bank_account_id`,`counterparty_inn`,`doc_date`,`operation_id`);

-- trigger operations_fts_ad on operations
CREATE TRIGGER `operations_fts_ad` AFTER DELETE ON `operations` BEGIN INSERT INTO `operations_fts`(`operations_fts`, rowid, `purpose`, `payer_name`, `payee_name`, `doc_number`) VALUES ('delete', old.`id`, replace(replace(old.`purpose`, 'ё', 'е'), 'Ё', 'Е'), replace(replace(old.`payer_name`, 'ё', 'е'), 'Ё', 'Е'), replace(replace(old.`payee_name`, 'ё', 'е'), 'Ё', 'Е'), old.`doc_number`); END;

-- trigger operations_fts_ai on operations
CREATE TRIGGER `operations_fts_ai` AFTER INSERT ON `operations` BEGIN INSERT INTO `operations_fts`(rowid, `purpose`, `payer_name`, `payee_name`, `doc_number`) VALUES (new.`id`, replace(replace(new.`purpose`, 'ё', 'е'), 'Ё', 'Е'), replace(replace(new.`payer_name`, 'ё', 'е'), 'Ё', 'Е'), replace(replace(new.`payee_name`, 'ё', 'е'), 'Ё', 'Е'), new.`doc_number`); END;

-- table operations_fts on operations_fts
CREATE VIRTUAL TABLE `operations_fts` USING fts5( `purpose`, `payer_name`, `payee_name`, `doc_number`, content='operations', content_rowid='id', tokenize='unicode61 remove_diacritics 2', prefix='2 3 4 5 6 7 8' );

-- table operations_fts_config on operations_fts_config
CREATE TABLE 'operations_fts_config'(k PRIMARY KEY, v) WITHOUT ROWID;

-- table operations_fts_data on operations_fts_data
CREATE TABLE 'operations_fts_data'(id INTEGER PRIMARY KEY, block BLOB);

-- table operations_fts_docsize on operations_fts_docsize
CREATE TABLE 'operations_fts_docsize'(id INTEGER PRIMARY KEY, sz BLOB);

-- table operations_fts_idx on operations_fts_idx
CREATE TABLE 'operations_fts_idx'(segid, term, pgno, PRIMARY KEY(segid, term)) WITHOUT ROWID;

-- table payment_imports on payment_imports
CREATE TABLE `payment_imports` ( `id` text PRIMARY KEY NOT NULL, `api_token_id` text NOT NULL, `bank_account_id` text NOT NULL, `file_bytes` integer NOT NULL, `created_at` text NOT NULL, FOREIGN KEY (`bank_account_id`) REFERENCES `bank_accounts`(`id`) ON UPDATE no action ON DELETE no action );

-- index payment_imports_token_idx on payment_imports
CREATE INDEX `payment_imports_token_idx` ON `payment_imports` (`api_token_id`,`created_at`);

-- index sqlite_autoindex_payment_imports_1 on payment_imports
(no sql: created by SQLite)

-- table payment_items on payment_items
CREATE TABLE `payment_items` ( `id` text PRIMARY KEY NOT NULL, `import_id` text NOT NULL, `seq` integer NOT NULL, `line` integer NOT NULL, `status` text NOT NULL, `doc_number` text NOT NULL, `doc_date` text NOT NULL, `amount` integer NOT NULL, `currency` text NOT NULL, `purpose` text NOT NULL, `priority` text, `payee_name` text NOT NULL, `payee_inn` text NOT NULL, `payee_kpp` text NOT NULL, `payee_account` text NOT NULL, `payee_bank_name` text NOT NULL, `payee_bank_bik` text NOT NULL, `payee_bank_corr_account` text NOT NULL, `submission_id` text, `bank_idempotency_key` text, `bank_reference` text, `sign_url` text, `error_code` text, `error_message` text, `submitted_at` text, `next_status_check_at_ms` integer, FOREIGN KEY (`import_id`) REFERENCES `payment_imports`(`id`) ON UPDATE no action ON DELETE no action );

-- index payment_items_import_seq_uq on payment_items
CREATE UNIQUE INDEX `payment_items_import_seq_uq` ON `payment_items` (`import_id`,`seq`);

-- index payment_items_status_check_idx on payment_items
CREATE INDEX `payment_items_status_check_idx` ON `payment_items` (`next_status_check_at_ms`);

-- index payment_items_submission_idx on payment_items
CREATE INDEX `payment_items_submission_idx` ON `payment_items` (`submission_id`);

-- index sqlite_autoindex_payment_items_1 on payment_items
(no sql: created by SQLite)

-- table payment_submissions on payment_submissions
CREATE TABLE `payment_submissions` ( `id` text PRIMARY KEY NOT NULL, `api_token_id` text NOT NULL, `external_id` text NOT NULL, `payload_hash` text NOT NULL, `kind` text NOT NULL, `import_id` text NOT NULL, `item_id` text, `status` text NOT NULL, `result_json` text, `created_at` text NOT NULL, `completed_at` text, `lease_until_ms` integer DEFAULT 0 NOT NULL, FOREIGN KEY (`import_id`) REFERENCES `payment_imports`(`id`) ON UPDATE no action ON DELETE no action );

-- index payment_submissions_status_idx on payment_submissions
CREATE INDEX `payment_submissions_status_idx` ON `payment_submissions` (`status`);

-- index payment_submissions_token_external_uq on payment_submissions
CREATE UNIQUE INDEX `payment_submissions_token_external_uq` ON `payment_submissions` (`api_token_id`,`external_id`);

-- index sqlite_autoindex_payment_submissions_1 on payment_submissions
(no sql: created by SQLite)

-- table sandbox_requests on sandbox_requests
CREATE TABLE `sandbox_requests` ( `id` integer PRIMARY KEY AUTOINCREMENT NOT NULL, `at` text NOT NULL, `bank_account_id` text NOT NULL, `kind` text NOT NULL, `date_from` text, `date_to` text, `client_ref` text );

-- index sandbox_requests_account_idx on sandbox_requests
CREATE INDEX `sandbox_requests_account_idx` ON `sandbox_requests` (`bank_account_id`,`id`);

-- table sqlite_sequence on sqlite_sequence
CREATE TABLE sqlite_sequence(name,seq);

-- table statement_days on statement_days
CREATE TABLE `statement_days` ( `bank_account_id` text NOT NULL, `day` text NOT NULL, `fetched_at` text NOT NULL, PRIMARY KEY(`bank_account_id`, `day`), FOREIGN KEY (`bank_account_id`) REFERENCES `bank_accounts`(`id`) ON UPDATE no action ON DELETE no action );

-- index sqlite_autoindex_statement_days_1 on statement_days
(no sql: created by SQLite)

-- table statement_operations on statement_operations
CREATE TABLE `statement_operations` ( `statement_id` text NOT NULL, `seq` integer NOT NULL, `operation_id` text NOT NULL, PRIMARY KEY(`statement_id`, `seq`) );

-- index sqlite_autoindex_statement_operations_1 on statement_operations
(no sql: created by SQLite)

-- table statements on statements
CREATE TABLE `statements` ( `id` text PRIMARY KEY NOT NULL, `bank_account_id` text NOT NULL, `api_token_id` text, `source` text NOT NULL, `external_id` text, `date_from` text NOT NULL, `date_to` text NOT NULL, `status` text NOT NULL, `bank_state` text NOT NULL, `bank_request_id` text, `attempts` integer DEFAULT 0 NOT NULL, `next_poll_at_ms` integer DEFAULT 0 NOT NULL, `error_code` text, `error_message` text, `opening_balance` integer, `closing_balance` integer, `total_credit` integer, `total_debit` integer, `operations_count` integer, `fetched_at` text, `created_at` text NOT NULL, `doc_types` text, `import_sha256` text, `bank_error_code` text, `lease_until_ms` integer DEFAULT 0 NOT NULL, `sync_key` text, FOREIGN KEY (`bank_account_id`) REFERENCES `bank_accounts`(`id`) ON UPDATE no action ON DELETE no action );

-- index sqlite_autoindex_statements_1 on statements
(no sql: created by SQLite)

-- index statements_account_idx on statements
CREATE INDEX `statements_account_idx` ON `statements` (`bank_account_id`,`created_at`,`id`);

-- index statements_due_idx on statements
CREATE INDEX `statements_due_idx` ON `statements` (`status`,`next_poll_at_ms`);

-- index statements_sync_key_uq on statements
CREATE UNIQUE INDEX `statements_sync_key_uq` ON `statements` (`bank_account_id`,`sync_key`);

-- index statements_token_external_uq on statements
CREATE UNIQUE INDEX `statements_token_external_uq` ON `statements` (`api_token_id`,`external_id`);

-- table svc_jobs on svc_jobs
CREATE TABLE `svc_jobs` ( `name` text PRIMARY KEY NOT NULL, `next_run_ms` integer NOT NULL );

-- index sqlite_autoindex_svc_jobs_1 on svc_jobs
(no sql: created by SQLite)

-- table token_accounts on token_accounts
CREATE TABLE `token_accounts` ( `token_id` text NOT NULL, `bank_account_id` text NOT NULL, `allow_read_statements` integer DEFAULT false NOT NULL, `allow_send_payments` integer DEFAULT false NOT NULL, PRIMARY KEY(`token_id`, `bank_account_id`), FOREIGN KEY (`token_id`) REFERENCES `api_tokens`(`id`) ON UPDATE no action ON DELETE no action, FOREIGN KEY (`bank_account_id`) REFERENCES `bank_accounts`(`id`) ON UPDATE no action ON DELETE no action );

-- index sqlite_autoindex_token_accounts_1 on token_accounts
(no sql: created by SQLite)
