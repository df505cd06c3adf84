// The relational model for PostgreSQL: the same tables, columns, keys and indexes as ../schema.ts
// (SQLite), which stays the definition; test/db/pg-schema.test.ts holds the two equal. Differences
// of the dialect only: kopecks, counts and _ms times are 64-bit (a 32-bit integer overflows at
// 21.4 M roubles and in 25 days of milliseconds), booleans are booleans, blobs are bytea,
// autoincrement ids are identity columns, and text sorts in byte order.
import { sql } from "drizzle-orm";
import { bigint, boolean, customType, index, pgTable, primaryKey, uniqueIndex } from "drizzle-orm/pg-core";

const bytea = customType<{ data: Buffer; driverData: Buffer }>({ dataType: () => "bytea" });
const int64 = (name: string) => bigint(name, { mode: "number" });
// Text in byte order, as SQLite compares it (BINARY): ids, ISO times and keyset cursors sort the
// same in both stores whatever the cluster's locale. (The enum lists are the SQLite schema's.)
const byteText = customType<{ data: string; driverData: string }>({ dataType: () => 'text COLLATE "C"' });
const text = (name: string, _values?: { enum: readonly string[] }) => byteText(name);

export const companies = pgTable("companies", {
  id: text("id").primaryKey(),
  name: text("name").notNull(),
  inn: text("inn").notNull(),
  kpp: text("kpp"),
  createdAt: text("created_at").notNull(),
});

// A bank login: the customer's credentials at one bank, shared by the accounts reached through it.
// OAuth tokens rotate here (a new refresh token on every refresh), one refresh at a time.
export const bankConnections = pgTable("bank_connections", {
  id: text("id").primaryKey(),
  bank: text("bank").notNull(),
  // AES-256-GCM ciphertext of the login (iv | tag | data); never leaves the service.
  credentialsEnc: bytea("credentials_enc").notNull(),
  // active | consent_required (OAuth not yet approved in the bank) | renewal_needed (the bank refused it)
  status: text("status", { enum: ["active", "consent_required", "renewal_needed"] }).notNull(),
  statusMessage: text("status_message"),
  // Cross-process single flight of token refreshes: a process refreshes only while it holds this.
  refreshLeaseUntilMs: int64("refresh_lease_until_ms").notNull().default(0),
  createdAt: text("created_at").notNull(),
  updatedAt: text("updated_at").notNull(),
});

// The bank's consent flow in progress: `state` sent to the bank's authorize page, kept as a hash.
export const bankAuthStates = pgTable("bank_auth_states", {
  stateHash: text("state_hash").primaryKey(),
  connectionId: text("connection_id")
    .notNull()
    .references(() => bankConnections.id),
  expiresAtMs: int64("expires_at_ms").notNull(),
});

export const bankAccounts = pgTable(
  "bank_accounts",
  {
    id: text("id").primaryKey(),
    companyId: text("company_id")
      .notNull()
      .references(() => companies.id),
    bank: text("bank").notNull(),
    accountNumber: text("account_number").notNull(),
    bik: text("bik").notNull(),
    currency: text("currency").notNull(),
    alias: text("alias").notNull(),
    // The bank's sandbox or its real service (a bank such as Tochka runs both); sandbox banks use
    // "production" as they have no other.
    environment: text("environment", { enum: ["production", "sandbox"] })
      .notNull()
      .default("production"),
    // The bank login this account is reached through; several accounts may share one.
    connectionId: text("connection_id").references(() => bankConnections.id),
    sandboxOpsPerDay: int64("sandbox_ops_per_day"),
    sandboxOpeningBalance: int64("sandbox_opening_balance"),
    createdAt: text("created_at").notNull(),
  },
  (t) => [
    index("bank_accounts_company_idx").on(t.companyId),
    // An account number with its bank's BIK is one account, whichever company would add it again.
    uniqueIndex("bank_accounts_number_bik_uq").on(t.accountNumber, t.bik),
  ],
);

export const apiTokens = pgTable(
  "api_tokens",
  {
    id: text("id").primaryKey(),
    companyId: text("company_id")
      .notNull()
      .references(() => companies.id),
    name: text("name").notNull(),
    purpose: text("purpose", { enum: ["integration", "mcp"] }).notNull(),
    mode: text("mode", { enum: ["live", "test"] }).notNull(),
    tokenHash: text("token_hash").notNull(),
    tokenPrefix: text("token_prefix").notNull(),
    scopeReadStatements: boolean("scope_read_statements").notNull().default(false),
    scopeSendPayments: boolean("scope_send_payments").notNull().default(false),
    allowedIps: text("allowed_ips").notNull().default(sql`'[]'`),
    rateLimitPerMinute: int64("rate_limit_per_minute"),
    expiresAt: text("expires_at"),
    revokedAt: text("revoked_at"),
    createdAt: text("created_at").notNull(),
    lastUsedAt: text("last_used_at"),
    // Set for the token of an OAuth grant (its hash is the grant's current access token's): such a
    // token works at /mcp only, and only such tokens do.
    oauthGrantId: text("oauth_grant_id"),
  },
  (t) => [uniqueIndex("api_tokens_hash_uq").on(t.tokenHash), index("api_tokens_company_idx").on(t.companyId)],
);

export const tokenAccounts = pgTable(
  "token_accounts",
  {
    tokenId: text("token_id")
      .notNull()
      .references(() => apiTokens.id),
    bankAccountId: text("bank_account_id")
      .notNull()
      .references(() => bankAccounts.id),
    allowReadStatements: boolean("allow_read_statements").notNull().default(false),
    allowSendPayments: boolean("allow_send_payments").notNull().default(false),
  },
  (t) => [primaryKey({ columns: [t.tokenId, t.bankAccountId] })],
);

export const auditLog = pgTable(
  "audit_log",
  {
    id: int64("id").primaryKey().generatedByDefaultAsIdentity(),
    at: text("at").notNull(),
    actor: text("actor").notNull(), // "token", "admin" or "system"
    apiTokenId: text("api_token_id"),
    mcpSessionId: text("mcp_session_id"),
    action: text("action").notNull(),
    tool: text("tool"),
    target: text("target"),
    arguments: text("arguments"),
    outcome: text("outcome").notNull(),
    durationMs: int64("duration_ms"),
    requestId: text("request_id"),
    ip: text("ip"),
    transport: text("transport"),
    // The agent protocol revision a request was made in (2026-07-28, 2025-11-25, …).
    protocolRevision: text("protocol_revision"),
  },
  (t) => [
    index("audit_log_at_idx").on(t.at),
    // Entries per token are found through audit_token_blocks (migration 0005), not an index.
    index("audit_log_action_idx").on(t.action, t.id),
  ],
);

export const statements = pgTable(
  "statements",
  {
    id: text("id").primaryKey(),
    bankAccountId: text("bank_account_id")
      .notNull()
      .references(() => bankAccounts.id),
    apiTokenId: text("api_token_id"),
    source: text("source", { enum: ["integration", "ui", "import", "sync"] }).notNull(),
    externalId: text("external_id"),
    dateFrom: text("date_from").notNull(),
    dateTo: text("date_to").notNull(),
    status: text("status", { enum: ["processing", "ready", "failed"] }).notNull(),
    // Outbox: "pending" until the bank has acknowledged the request, then "requested".
    bankState: text("bank_state", { enum: ["pending", "requested", "done"] }).notNull(),
    bankRequestId: text("bank_request_id"),
    attempts: int64("attempts").notNull().default(0),
    nextPollAtMs: int64("next_poll_at_ms").notNull().default(0),
    errorCode: text("error_code"),
    errorMessage: text("error_message"),
    // The bank's own code of a refusal (Tochka's Errors[].errorCode), shown as details.bank_code.
    bankErrorCode: text("bank_error_code"),
    openingBalance: int64("opening_balance"),
    closingBalance: int64("closing_balance"),
    totalCredit: int64("total_credit"),
    totalDebit: int64("total_debit"),
    operationsCount: int64("operations_count"),
    fetchedAt: text("fetched_at"),
    // JSON array of the document kinds among its stored operations (the 1C header lists them),
    // set when it becomes ready; null for statements made ready before it was kept.
    docTypes: text("doc_types"),
    createdAt: text("created_at").notNull(),
    // SHA-256 of the bank's own 1C file a statement was imported from (source "import"): a repeat
    // with the same external_id and the same file is idempotent, another file is a conflict.
    importSha256: text("import_sha256"),
    leaseUntilMs: int64("lease_until_ms").notNull().default(0),
    // A piece ordered by the account's sync (source "sync"): "{run}/{date_from}/{date_to}", the
    // run's number and its days, so a piece is ordered once whichever replica plans the run.
    syncKey: text("sync_key"),
  },
  (t) => [
    uniqueIndex("statements_token_external_uq").on(t.apiTokenId, t.externalId),
    uniqueIndex("statements_sync_key_uq").on(t.bankAccountId, t.syncKey),
    index("statements_account_idx").on(t.bankAccountId, t.createdAt, t.id),
    index("statements_due_idx").on(t.status, t.nextPollAtMs),
  ],
);

export const operations = pgTable(
  "operations",
  {
    // SQLite's explicit rowid alias; here an identity column.
    id: int64("id").primaryKey().generatedByDefaultAsIdentity(),
    bankAccountId: text("bank_account_id").notNull(),
    operationId: text("operation_id").notNull(),
    docDate: text("doc_date").notNull(),
    direction: text("direction", { enum: ["credit", "debit"] }).notNull(),
    docType: text("doc_type").notNull(),
    docNumber: text("doc_number").notNull(),
    amount: int64("amount").notNull(),
    currency: text("currency").notNull(),
    purpose: text("purpose").notNull(),
    counterpartyInn: text("counterparty_inn").notNull(),
    payerName: text("payer_name").notNull(),
    payerInn: text("payer_inn").notNull(),
    payerKpp: text("payer_kpp").notNull(),
    payerAccount: text("payer_account").notNull(),
    payerBankName: text("payer_bank_name").notNull(),
    payerBankBik: text("payer_bank_bik").notNull(),
    payerBankCorrAccount: text("payer_bank_corr_account").notNull(),
    payeeName: text("payee_name").notNull(),
    payeeInn: text("payee_inn").notNull(),
    payeeKpp: text("payee_kpp").notNull(),
    payeeAccount: text("payee_account").notNull(),
    payeeBankName: text("payee_bank_name").notNull(),
    payeeBankBik: text("payee_bank_bik").notNull(),
    payeeBankCorrAccount: text("payee_bank_corr_account").notNull(),
    uin: text("uin"),
    purposeCode: text("purpose_code"),
    priority: text("priority"),
    // JSON of the budget-payment fields (formats/types.ts BudgetFields); null on other documents.
    budgetFields: text("budget_fields"),
  },
  (t) => [
    uniqueIndex("operations_account_op_uq").on(t.bankAccountId, t.operationId),
    index("operations_date_idx").on(t.bankAccountId, t.docDate, t.operationId),
    index("operations_amount_idx").on(t.bankAccountId, t.amount),
    index("operations_inn_idx").on(t.bankAccountId, t.counterpartyInn, t.docDate, t.operationId),
  ],
);

// Which operations a statement holds, in the bank's order.
export const statementOperations = pgTable(
  "statement_operations",
  {
    statementId: text("statement_id").notNull(),
    seq: int64("seq").notNull(),
    operationId: text("operation_id").notNull(),
  },
  (t) => [primaryKey({ columns: [t.statementId, t.seq] })],
);

export const balances = pgTable("balances", {
  bankAccountId: text("bank_account_id")
    .primaryKey()
    .references(() => bankAccounts.id),
  balance: int64("balance").notNull(),
  currency: text("currency").notNull(),
  asOf: text("as_of").notNull(),
});

// Per account and calendar day, the newest fetched_at of a ready statement holding that day
// (kept by StatementRepository.markReady): whether the day is covered is decided when read, in
// the business time zone (statements/coverage.ts).
export const statementDays = pgTable(
  "statement_days",
  {
    bankAccountId: text("bank_account_id")
      .notNull()
      .references(() => bankAccounts.id),
    day: text("day").notNull(),
    fetchedAt: text("fetched_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.bankAccountId, t.day] })],
);

export const sandboxRequests = pgTable(
  "sandbox_requests",
  {
    id: int64("id").primaryKey().generatedByDefaultAsIdentity(),
    at: text("at").notNull(),
    bankAccountId: text("bank_account_id").notNull(),
    kind: text("kind").notNull(),
    dateFrom: text("date_from"),
    dateTo: text("date_to"),
    clientRef: text("client_ref"),
  },
  (t) => [index("sandbox_requests_account_idx").on(t.bankAccountId, t.id)],
);

export const mcpSessions = pgTable(
  "mcp_sessions",
  {
    id: text("id").primaryKey(),
    apiTokenId: text("api_token_id").notNull(),
    protocolVersion: text("protocol_version").notNull(),
    createdAt: text("created_at").notNull(),
    expiresAtMs: int64("expires_at_ms").notNull(),
  },
  (t) => [index("mcp_sessions_expiry_idx").on(t.expiresAtMs)],
);

// Payment files uploaded by integration clients: one import per upload, one item per payment order.
export const paymentImports = pgTable(
  "payment_imports",
  {
    id: text("id").primaryKey(),
    apiTokenId: text("api_token_id").notNull(),
    bankAccountId: text("bank_account_id")
      .notNull()
      .references(() => bankAccounts.id),
    fileBytes: int64("file_bytes").notNull(),
    createdAt: text("created_at").notNull(),
  },
  (t) => [index("payment_imports_token_idx").on(t.apiTokenId, t.createdAt)],
);

export const paymentItems = pgTable(
  "payment_items",
  {
    id: text("id").primaryKey(),
    importId: text("import_id")
      .notNull()
      .references(() => paymentImports.id),
    seq: int64("seq").notNull(),
    line: int64("line").notNull(),
    // draft -> submitting (committed before the bank call) -> submitted | rejected; a bank that
    // reports what became of a submitted document moves it on: signed_and_paid | canceled | rejected.
    status: text("status", {
      enum: ["draft", "submitting", "submitted", "rejected", "signed_and_paid", "canceled"],
    }).notNull(),
    docNumber: text("doc_number").notNull(),
    docDate: text("doc_date").notNull(),
    amount: int64("amount").notNull(),
    currency: text("currency").notNull(),
    purpose: text("purpose").notNull(),
    priority: text("priority"),
    payeeName: text("payee_name").notNull(),
    payeeInn: text("payee_inn").notNull(),
    payeeKpp: text("payee_kpp").notNull(),
    payeeAccount: text("payee_account").notNull(),
    payeeBankName: text("payee_bank_name").notNull(),
    payeeBankBik: text("payee_bank_bik").notNull(),
    payeeBankCorrAccount: text("payee_bank_corr_account").notNull(),
    // The submission that claimed the item; its bank idempotency key is stable across retries.
    submissionId: text("submission_id"),
    bankIdempotencyKey: text("bank_idempotency_key"),
    // Stored, never returned.
    bankReference: text("bank_reference"),
    signUrl: text("sign_url"),
    errorCode: text("error_code"),
    errorMessage: text("error_message"),
    // When to ask the bank again what became of a submitted document (clock ms); null: never.
    nextStatusCheckAtMs: int64("next_status_check_at_ms"),
    submittedAt: text("submitted_at"),
  },
  (t) => [
    uniqueIndex("payment_items_import_seq_uq").on(t.importId, t.seq),
    index("payment_items_submission_idx").on(t.submissionId),
    index("payment_items_status_check_idx").on(t.nextStatusCheckAtMs),
  ],
);

// Idempotency records of submit calls: (api_token_id, external_id) is unique; payload_hash tells
// a repeat from a conflicting reuse; result_json is the first answer, replayed on repeats.
export const paymentSubmissions = pgTable(
  "payment_submissions",
  {
    id: text("id").primaryKey(),
    apiTokenId: text("api_token_id").notNull(),
    externalId: text("external_id").notNull(),
    payloadHash: text("payload_hash").notNull(),
    kind: text("kind", { enum: ["import", "item"] }).notNull(),
    importId: text("import_id")
      .notNull()
      .references(() => paymentImports.id),
    itemId: text("item_id"),
    status: text("status", { enum: ["in_progress", "completed"] }).notNull(),
    resultJson: text("result_json"),
    createdAt: text("created_at").notNull(),
    completedAt: text("completed_at"),
    // Until when (ms) one process sends its items: another (a replica) waits for its answer meanwhile.
    leaseUntilMs: int64("lease_until_ms").notNull().default(0),
  },
  (t) => [
    uniqueIndex("payment_submissions_token_external_uq").on(t.apiTokenId, t.externalId),
    index("payment_submissions_status_idx").on(t.status),
  ],
);

// OAuth clients of /mcp: registered (RFC 7591, id minted here) or known by their metadata
// document's URL (the URL is the id). Secrets, when a client has one, only as hashes.
export const oauthClients = pgTable(
  "oauth_clients",
  {
    id: text("id").primaryKey(),
    kind: text("kind", { enum: ["registered", "metadata_document"] }).notNull(),
    name: text("name").notNull(),
    redirectUris: text("redirect_uris").notNull(),
    tokenEndpointAuthMethod: text("token_endpoint_auth_method").notNull(),
    secretHash: text("secret_hash"),
    createdAt: text("created_at").notNull(),
  },
  // The operator's list pages by (created_at, id); the sweep finds old clients by created_at.
  (t) => [index("oauth_clients_created_idx").on(t.createdAt, t.id)],
);

// Authorization requests waiting for the operator's consent, then their single-use code.
export const oauthRequests = pgTable(
  "oauth_requests",
  {
    id: text("id").primaryKey(),
    clientId: text("client_id").notNull(),
    redirectUri: text("redirect_uri").notNull(),
    state: text("state"),
    codeChallenge: text("code_challenge").notNull(),
    scope: text("scope").notNull(),
    resource: text("resource").notNull(),
    // pending -> approved (a code is out) -> used | denied | expired
    status: text("status", { enum: ["pending", "approved", "denied", "used"] }).notNull(),
    codeHash: text("code_hash"),
    grantId: text("grant_id"),
    createdAtMs: int64("created_at_ms").notNull(),
    expiresAtMs: int64("expires_at_ms").notNull(),
  },
  (t) => [
    uniqueIndex("oauth_requests_code_uq").on(t.codeHash),
    // The pending list, the sweep of expired requests, a client's requests (the sweep of clients).
    index("oauth_requests_status_created_idx").on(t.status, t.createdAtMs),
    index("oauth_requests_expires_idx").on(t.expiresAtMs),
    index("oauth_requests_client_idx").on(t.clientId),
  ],
);

// What the operator approved: a client's access to a company's chosen accounts, carried by an
// agent token (api_tokens.oauth_grant_id) so that rules, limits and audit are an agent token's.
export const oauthGrants = pgTable(
  "oauth_grants",
  {
    id: text("id").primaryKey(),
    clientId: text("client_id").notNull(),
    apiTokenId: text("api_token_id").notNull(),
    companyId: text("company_id").notNull(),
    scope: text("scope").notNull(),
    resource: text("resource").notNull(),
    createdAt: text("created_at").notNull(),
    revokedAt: text("revoked_at"),
  },
  (t) => [index("oauth_grants_client_idx").on(t.clientId)],
);

// Refresh tokens (hashes): each works once; a used one presented again revokes its grant.
export const oauthRefreshTokens = pgTable(
  "oauth_refresh_tokens",
  {
    hash: text("hash").primaryKey(),
    grantId: text("grant_id").notNull(),
    createdAtMs: int64("created_at_ms").notNull(),
    usedAtMs: int64("used_at_ms"),
  },
  (t) => [index("oauth_refresh_tokens_grant_idx").on(t.grantId)],
);

export const svcJobs = pgTable("svc_jobs", {
  name: text("name").primaryKey(),
  nextRunMs: int64("next_run_ms").notNull(),
});

export const directbankSessions = pgTable(
  "directbank_sessions",
  {
    id: text("id").primaryKey(),
    apiTokenId: text("api_token_id").notNull(),
    formatVersion: text("format_version").notNull(),
    createdAt: text("created_at").notNull(),
    expiresAtMs: int64("expires_at_ms").notNull(),
  },
  (t) => [index("directbank_sessions_expiry_idx").on(t.expiresAtMs)],
);

export const directbankPackets = pgTable(
  "directbank_packets",
  {
    id: text("id").primaryKey(),
    apiTokenId: text("api_token_id").notNull(),
    bankAccountId: text("bank_account_id")
      .notNull()
      .references(() => bankAccounts.id),
    kind: text("kind", { enum: ["notice", "statement", "balance"] }).notNull(),
    receivedId: text("received_id").notNull(),
    clientPacketId: text("client_packet_id").notNull(),
    requestDocumentId: text("request_document_id"),
    documentId: text("document_id").notNull(),
    statementIds: text("statement_ids"),
    dateFrom: text("date_from"),
    dateTo: text("date_to"),
    formatVersion: text("format_version").notNull(),
    compressed: boolean("compressed").notNull().default(false),
    errorCode: text("error_code"),
    errorText: text("error_text"),
    createdAt: text("created_at").notNull(),
    readyAt: text("ready_at"),
    takenAt: text("taken_at"),
  },
  (t) => [
    index("directbank_packets_ready_idx").on(t.apiTokenId, t.readyAt),
    index("directbank_packets_client_idx").on(t.apiTokenId, t.clientPacketId),
  ],
);

// An account that keeps itself fresh (decisions §16): svc orders its statements itself. A run is
// claimed by moving next_run_ms (one statement, atomic on either store: of several replicas one
// gets it) in the same transaction that orders its pieces; run_no numbers the runs for the
// pieces' keys. failures counts the runs in a row whose pieces the bank refused (error_run: the
// last such run), which sets the backoff.
export const accountSyncs = pgTable(
  "account_syncs",
  {
    bankAccountId: text("bank_account_id")
      .primaryKey()
      .references(() => bankAccounts.id),
    enabled: boolean("enabled").notNull().default(false),
    since: text("since").notNull(),
    intervalMinutes: int64("interval_minutes").notNull().default(60),
    nextRunMs: int64("next_run_ms").notNull().default(0),
    runNo: int64("run_no").notNull().default(0),
    lastRunAt: text("last_run_at"),
    lastError: text("last_error"),
    failures: int64("failures").notNull().default(0),
    errorRun: int64("error_run").notNull().default(0),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [index("account_syncs_due_idx").on(t.enabled, t.nextRunMs)],
);
