// Builds the services of one process from its configuration and an open database. main.ts and
// the tests both use it, so tests run the same wiring as production.
import { AdminAccounts } from "./admin/accounts";
import type { AdminServices } from "./admin/areas";
import { AdminAudit } from "./admin/audit";
import { BankLogins } from "./admin/bank-logins";
import { AdminCompanies } from "./admin/companies";
import { AdminTokens } from "./admin/tokens";
import { AuditBatcher } from "./audit/audit-batcher";
import { AuditLog } from "./audit/audit-log";
import { AccessPolicy } from "./auth/access-policy";
import { AddressLimiter } from "./auth/address-limiter";
import { TokenGuard } from "./auth/guard";
import { type IpRange, parseIpRange } from "./auth/ip";
import { InMemoryRateLimiter } from "./auth/rate-limiter";
import { SecretBox } from "./auth/secret-box";
import { BankConnections } from "./banks/connections";
import { createDirectBankAdapter } from "./banks/directbank/adapter";
import { createFileBankAdapter } from "./banks/file";
import { BankGateway } from "./banks/gateway";
import type { BankRegistry } from "./banks/registry";
import { createSandboxRegistry } from "./banks/registry";
import { SqlSandboxRequestLog } from "./banks/sandbox/sql-request-log";
import { createTochkaAdapter } from "./banks/tochka/adapter";
import { TochkaWebhookVerifier } from "./banks/tochka/webhook";
import type { Config } from "./config";
import { type Clock, dateInZone } from "./core/clock";
import type { Logger } from "./core/logger";
import type { RateLimiter } from "./core/rate-window";
import { RequestArrivals } from "./core/request-arrivals";
import { FleetSchedule } from "./db/fleet-schedule";
import type { OpenedDatabase } from "./db/open";
import { BankAccountRepository, CompanyRepository } from "./db/repos/accounts";
import { BankConnectionRepository } from "./db/repos/connections";
import { TokenRepository } from "./db/repos/tokens";
import { RowCache } from "./db/row-cache";
import type { SearchLimits } from "./db/search-limits";
import { type Store, sqliteDatabaseOf, sqliteStore } from "./db/store";
import { DirectBankRepository } from "./directbank/repository";
import { DirectBankService } from "./directbank/service";
import { createMcpServices, type SessionStore } from "./mcp";
import { OAuthRepository } from "./oauth/repository";
import { OAuthService } from "./oauth/service";
import { PrometheusMetrics } from "./ops/metrics";
import { storeReadings } from "./ops/readings";
import { PaymentRepository } from "./payments/repository";
import { PaymentService } from "./payments/service";
import { PaymentStatusPoller } from "./payments/status-poller";
import { AccountCoverage } from "./statements/account-coverage";
import { CoverageReader } from "./statements/coverage";
import { ExportThreads, type ExportThreadsOptions } from "./statements/export/threads";
import { ImportThreads, type ImportThreadsOptions } from "./statements/import/threads";
import { BalanceRefresher, StatementPoller } from "./statements/poller";
import { type BalanceRow, StatementRepository } from "./statements/repository";
import { StatementService } from "./statements/service";
import { SyncRepository } from "./sync/repository";
import { SyncRunner } from "./sync/runner";
import { type SyncLag, SyncService } from "./sync/service";

export interface ServiceOverrides {
  rateLimiter?: RateLimiter;
  sessionStore?: SessionStore;
  banks?: (deps: { clock: Clock; sandboxLog: SqlSandboxRequestLog; today: () => string }) => BankRegistry;
  exportThreads?: ExportThreadsOptions;
  importThreads?: ImportThreadsOptions;
  /** How client metadata documents are fetched (a test's own TLS trust). */
  oauthFetch?: typeof fetch;
  /** What one search_operations may cost (a test's small budget). */
  searchLimits?: SearchLimits;
}

/** `store`: the database to work on; an opened SQLite database is taken as its store. */
export function buildServices(
  config: Config,
  storeOrDatabase: Store | OpenedDatabase,
  clock: Clock,
  logger: Logger,
  overrides: ServiceOverrides = {},
) {
  const store: Store = "kind" in storeOrDatabase ? storeOrDatabase : sqliteStore(storeOrDatabase, config);
  const today = () => dateInZone(clock.now(), config.timezone);
  const { port } = store;
  const companies = new CompanyRepository(port);
  // Other processes (`svc admin`, other replicas) change tokens and accounts: cached rows follow.
  const externalChanges = store.changes;
  const accounts = new BankAccountRepository(port, externalChanges);
  const tokens = new TokenRepository(port, externalChanges);
  // Counted only where someone can scrape them (SVC_METRICS_TOKEN set); otherwise nothing is kept.
  const metrics = config.metricsToken
    ? new PrometheusMetrics(storeReadings(store, clock, (): SyncLag[] => syncs.lags()))
    : null;
  const audit = new AuditLog(port);
  // Agent calls commit their audit entries in groups; everything else writes its own.
  const agentAudit = new AuditBatcher(audit, metrics ?? undefined);
  // Replicas share one count per token; one SQLite server counts in its memory.
  const rateLimiter =
    overrides.rateLimiter ??
    store.sharedRateLimiter(clock, config.databaseTimeoutMs) ??
    new InMemoryRateLimiter(clock);
  // Requests without a token to count by, per client address; each replica counts its own.
  const clientLimiter = new AddressLimiter(clock, config.publicRateLimitPerMinute);
  const guard = new TokenGuard(tokens, rateLimiter, clock, logger, clientLimiter);
  const access = new AccessPolicy(accounts);
  const secretBox = config.secretKey ? new SecretBox(config.secretKey) : null;

  const atomically = <T>(fn: () => T): T => port.transaction(fn);
  const fleetSchedule = new FleetSchedule(port, clock, logger);
  const connectionRepo = new BankConnectionRepository(port);
  const connections = new BankConnections({ repo: connectionRepo, secretBox, clock, atomically });

  const sandboxLog = new SqlSandboxRequestLog(port);
  const banks = overrides.banks
    ? overrides.banks({ clock, sandboxLog, today })
    : createSandboxRegistry({ clock, log: sandboxLog, today });
  // Statements from the bank's own 1C files (bank kind `file`) are possible with any registry.
  if (!banks.has("file")) banks.register(createFileBankAdapter());
  if (!banks.has("tochka")) {
    banks.register(createTochkaAdapter({ settings: config.tochka, connections, clock, logger }));
  }
  if (!banks.has("directbank")) banks.register(createDirectBankAdapter({ connections, clock }));
  const gateway = new BankGateway(banks, companies, connections, metrics ?? undefined);
  // The admin services, one per area; every change is audited in its own transaction.
  const adminAudit = new AdminAudit({ clock, audit, atomically });
  const bankAdapter = (bank: string) => gateway.adapterFor({ bank });
  const knownBanks = () => banks.names();
  const adminAccounts = new AdminAccounts({
    clock,
    companies,
    accounts,
    secretBox,
    knownBanks,
    bankAdapter,
    connections,
    connectionRepo,
    audit: adminAudit,
    atomically,
  });
  const admin: AdminServices = {
    companies: new AdminCompanies({ clock, companies, audit: adminAudit, atomically }),
    accounts: adminAccounts,
    bankLogins: new BankLogins({
      clock,
      accounts,
      adminAccounts,
      knownBanks,
      bankAdapter,
      bankRef: (account) => gateway.refFor(account),
      connections,
      connectionRepo,
      publicUrl: config.publicUrl,
      audit: adminAudit,
      atomically,
    }),
    tokens: new AdminTokens({ clock, companies, accounts, tokens, audit: adminAudit, atomically }),
    audit: adminAudit,
  };

  // Balances are written by the statements repository and read by every get_balance.
  const balanceRows = new RowCache<BalanceRow>(externalChanges, "balances");
  const statementRepo = new StatementRepository(port, externalChanges, { balanceRows });
  const exportQueries = store.exportReads;
  // Counted by the HTTP core as requests arrive; export threads step aside when they see one.
  const requestArrivals = new RequestArrivals();
  const exportThreads = new ExportThreads(store.workerLocation, logger, {
    threads: config.exportThreads,
    arrivals: requestArrivals,
    priority: config.longWorkPriority,
    ...overrides.exportThreads,
  });
  // Imports of large files are parsed and stored by worker threads with connections of their own
  // (an in-memory database has no other connection: there they run in this thread).
  const importThreads = new ImportThreads(
    store.workerLocation,
    statementRepo,
    logger,
    overrides.importThreads,
  );
  const accountOf = (id: string) => accounts.findById(id);
  const statements = new StatementService({
    clock,
    timezone: config.timezone,
    balanceStaleSeconds: config.balanceStaleSeconds,
    repo: statementRepo,
    access,
    gateway,
    accountOf,
    imports: importThreads,
  });
  const poller = new StatementPoller({
    repo: statementRepo,
    gateway,
    accountOf,
    clock,
    logger,
    today,
    intervalMs: config.bankPollIntervalMs,
    leaseMs: config.pollLeaseMs,
    pacingMs: (bank) => (banks.has(bank) ? (banks.get(bank).minIntervalMs ?? 0) : 0),
    onSettled: (row, outcome) => syncs.pieceSettled(row, outcome),
  });
  statements.onOrder((id) => poller.dispatch(id));
  // Accounts that keep themselves fresh: their pieces are ordinary statements for the poller.
  const syncs: SyncService = new SyncService({
    clock,
    timezone: config.timezone,
    repo: new SyncRepository(port),
    coverage: new CoverageReader(port, config.timezone),
    accountOf,
    gateway,
    audit,
    atomically,
    dispatch: (id) => poller.dispatch(id),
  });
  const syncRunner = new SyncRunner(syncs, config.bankPollIntervalMs, logger);
  const coverage = new AccountCoverage(new CoverageReader(port, config.timezone), clock);
  const tochkaWebhooks = new TochkaWebhookVerifier(config.tochka.webhookKey);
  const balanceRefresher = new BalanceRefresher(
    () => accounts.list(),
    (account) => statements.refreshBalance(account),
    config.bankPollIntervalMs * 10,
    logger,
    fleetSchedule,
  );
  const directbank = new DirectBankService({
    clock,
    timezone: config.timezone,
    publicUrl: config.publicUrl,
    guard,
    tokens,
    companies,
    accounts,
    access,
    statements,
    statementRepo,
    exportReads: exportQueries,
    repo: new DirectBankRepository(port),
  });
  const oauth = new OAuthService({
    repo: new OAuthRepository(port),
    tokens,
    companies,
    accounts,
    audit,
    clock,
    publicUrl: config.publicUrl,
    allowInternalClients: config.oauthAllowInternalClients,
    fetch: overrides.oauthFetch,
  });
  const paymentRepo = new PaymentRepository(port, audit);
  const payments = new PaymentService({
    clock,
    repo: paymentRepo,
    access,
    gateway,
    accountOf,
    leaseMs: config.pollLeaseMs,
  });
  const paymentStatusPoller = new PaymentStatusPoller({
    repo: paymentRepo,
    gateway,
    accountOf,
    clock,
    logger,
    intervalMs: config.bankPollIntervalMs,
  });
  const mcp = createMcpServices({
    config,
    fleetSchedule,
    port,
    readPort: store.readPort,
    changes: externalChanges,
    balances: balanceRows,
    access,
    clock,
    logger,
    sessionStore: overrides.sessionStore,
    searchLimits: overrides.searchLimits,
    searches: store.searches,
  });
  const trustedProxies = config.trustProxy.map(parseIpRange).filter((r): r is IpRange => r !== null);

  return {
    config,
    store,
    /** The SQLite database (tests, SQLite-only tools); there is none on PostgreSQL. */
    get database(): OpenedDatabase {
      return sqliteDatabaseOf(store);
    },
    /** The database as the stores in portable SQL hold it. */
    port,
    fleetSchedule,
    clock,
    logger,
    today,
    companies,
    externalChanges,
    accounts,
    tokens,
    audit,
    agentAudit,
    rateLimiter,
    clientLimiter,
    guard,
    access,
    secretBox,
    admin,
    sandboxLog,
    banks,
    connectionRepo,
    connections,
    gateway,
    statementRepo,
    exportQueries,
    exportThreads,
    requestArrivals,
    importThreads,
    statements,
    poller,
    syncs,
    syncRunner,
    coverage,
    tochkaWebhooks,
    balanceRefresher,
    directbank,
    paymentRepo,
    payments,
    paymentStatusPoller,
    oauth,
    mcp,
    trustedProxies,
    metrics,
  };
}

export type Services = ReturnType<typeof buildServices>;
