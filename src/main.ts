// Composition root: config -> database -> services -> app -> workers -> listen.

import { chmodSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import pkg from "../package.json" with { type: "json" };
import { createApp } from "./app";
import { AuditRetention } from "./audit/audit-retention";
import { secretKeyFileOf } from "./auth/secret-box";
import { type Config, ConfigError, decodeSecretKey } from "./config";
import { buildServices, type ServiceOverrides, type Services } from "./container";
import { type Clock, dateInZone, secureRandomBytes, systemClock } from "./core/clock";
import { createLogger, flushStdout, type Logger } from "./core/logger";
import { lowPriorityAvailable } from "./core/thread-priority";
import { makePrivateParent } from "./db/sqlite/private-files";
import { acquireServeLock, type ServeLock } from "./db/sqlite/serve-lock";
import { openPostgresStore, openSqliteStore } from "./db/store";
import { type DemoSignIn, demoAgainBanner, demoBanner, seedDemo } from "./demo";
import { OAuthSweeper } from "./oauth/sweeper";
import { ScheduledBackups } from "./ops/scheduled-backups";

export const VERSION: string = pkg.version;

/** Something that runs in the background of the server process and must stop cleanly. */
export interface Worker {
  name: string;
  start(): void;
  stop(): Promise<void>;
}

export interface RunningServer {
  port: number;
  url: string;
  services: Services;
  stop(): Promise<void>;
}

export interface StartOptions {
  demo?: boolean;
  clock?: Clock;
  logger?: Logger;
  /** Where the --demo banner goes (default: standard error, the terminal; never the log stream). */
  print?: (text: string) => void;
  /** Service replacements for tests (see container.ts). */
  overrides?: ServiceOverrides;
}

/**
 * The key that seals bank credentials: SVC_SECRET_KEY, else a key file beside the database
 * (created by --demo with mode 0600 when missing, reused afterwards).
 */
function resolveSecretKey(config: Config, demo: boolean, logger: Logger): Uint8Array | null {
  if (config.secretKey) return config.secretKey;
  if (config.dbPath === ":memory:") return demo ? secureRandomBytes(32) : null;
  const keyFile = secretKeyFileOf(config.dbPath);
  if (existsSync(keyFile)) {
    const key = decodeSecretKey(readFileSync(keyFile, "utf8"));
    if (!key) throw new ConfigError("SVC_SECRET_KEY", `в ${keyFile} нет ключа: 32 байта в base64`);
    return key;
  }
  if (!demo) return null;
  const key = secureRandomBytes(32);
  writeFileSync(keyFile, `${Buffer.from(key).toString("base64")}\n`, { mode: 0o600 });
  chmodSync(keyFile, 0o600);
  logger.info("generated secret key", { file: keyFile });
  return key;
}

/** Where `--demo` keeps the admin token it generated when SVC_ADMIN_TOKEN was unset. */
function demoAdminTokenFile(dbPath: string): string {
  return join(dirname(dbPath), "admin.token");
}

/**
 * The admin token of a `--demo` run: SVC_ADMIN_TOKEN when set; else the one kept beside the
 * database (mode 0600), made on the first run, so the operator can always sign in to /admin.
 * Without --demo nothing is read or made: an unset SVC_ADMIN_TOKEN keeps the admin API closed.
 */
function resolveDemoAdminToken(config: Config): {
  token: string;
  source: "env" | "file";
  created: boolean;
} {
  if (config.adminToken) return { token: config.adminToken, source: "env", created: false };
  const generate = () => Buffer.from(secureRandomBytes(24)).toString("hex");
  if (config.dbPath === ":memory:") return { token: generate(), source: "file", created: true };
  const file = demoAdminTokenFile(config.dbPath);
  if (existsSync(file)) {
    const token = readFileSync(file, "utf8").trim();
    if (token.length >= 32 && !/\s/.test(token)) return { token, source: "file", created: false };
    throw new ConfigError("SVC_ADMIN_TOKEN", `в ${file} нет токена администратора (не короче 32 символов)`);
  }
  const token = generate();
  makePrivateParent(file);
  writeFileSync(file, `${token}\n`, { mode: 0o600 });
  chmodSync(file, 0o600);
  return { token, source: "file", created: true };
}

/** `svc admin` works on a SQLite file (its tools read and write it directly). */
function requireSqliteStore(config: Config): void {
  if (config.databaseUrl === null) return;
  throw new ConfigError(
    "SVC_DATABASE_URL",
    "svc admin работает с файлом SQLite; для PostgreSQL — админ-API и /admin любой реплики " +
      "(или svc migrate, svc admin migrate-to-postgres)",
  );
}

/** Services on an opened store; `svc admin` (SQLite only) and the server share it. */
export function openServices(config: Config, options: StartOptions = {}): Services {
  requireSqliteStore(config);
  const logger = options.logger ?? createLogger(config.logLevel);
  const store = openSqliteStore(config);
  const secretKey = resolveSecretKey(config, options.demo ?? false, logger);
  return buildServices(
    { ...config, secretKey },
    store,
    options.clock ?? systemClock,
    logger,
    options.overrides,
  );
}

/**
 * A replica on the shared PostgreSQL database: its migrations applied first (openPostgresStore),
 * then the services on its connections.
 * Every replica needs the same SVC_SECRET_KEY (bank credentials, paging cursors): none is made here.
 */
async function openReplicaServices(config: Config, options: StartOptions): Promise<Services> {
  if (options.demo) throw new ConfigError("SVC_DATABASE_URL", "--demo работает только с SQLite");
  if (!config.secretKey) {
    throw new ConfigError(
      "SVC_SECRET_KEY",
      "с PostgreSQL нужен один и тот же ключ на всех репликах: 32 байта в base64 (openssl rand -base64 32)",
    );
  }
  const logger = options.logger ?? createLogger(config.logLevel);
  const { store, applied } = await openPostgresStore(config);
  if (applied.length > 0) logger.info("migrations applied", { database: store.location, applied });
  return buildServices(config, store, options.clock ?? systemClock, logger, options.overrides);
}

export async function startServer(config: Config, options: StartOptions = {}): Promise<RunningServer> {
  if (config.databaseUrl !== null) {
    // Replicas share the database; nothing on this machine needs to be held.
    return startOn(config, options, await openReplicaServices(config, options), null);
  }
  const serveLock = acquireServeLock(config.dbPath, {
    pid: process.pid,
    startedAt: new Date().toISOString(),
  });
  try {
    const admin = options.demo ? resolveDemoAdminToken(config) : null;
    if (admin) config = { ...config, adminToken: admin.token };
    const services = openServices(config, options);
    // This process holds the file's serve lock: no other poller works on it, so a lease still held
    // is one of a server that ended without letting go (kill -9, power loss); its statements go on
    // now. (On PostgreSQL another replica may hold it: its leases pass by themselves.)
    const freed = services.statementRepo.releaseAllLeases();
    if (freed > 0) services.logger.info("statements of an earlier run taken up again", { statements: freed });
    const payments = services.paymentRepo.releaseAllLeases();
    if (payments > 0)
      services.logger.info("payment submissions of an earlier run let go", { submissions: payments });
    return await startOn(config, options, services, { serveLock, admin });
  } catch (e) {
    serveLock.release();
    throw e;
  }
}

/** `local`: what only a server of a SQLite file has (its serve lock, the --demo sign-in). */
async function startOn(
  config: Config,
  options: StartOptions,
  services: Services,
  local: { serveLock: ServeLock; admin: ReturnType<typeof resolveDemoAdminToken> | null } | null,
): Promise<RunningServer> {
  const { logger, store } = services;
  const admin = local?.admin ?? null;
  const app = createApp(services, { version: VERSION });
  const workers: Worker[] = [
    services.poller,
    services.syncRunner,
    services.paymentStatusPoller,
    services.balanceRefresher,
    services.mcp.sweeper,
    new OAuthSweeper(services.oauth, logger, services.fleetSchedule),
  ];
  workers.push(...store.backgroundJobs({ checkpoints: config.checkpoints }, logger));
  // Only a local file is svc's to back up (PostgreSQL's backups are its server's).
  if (config.backups && store.localFile !== null) {
    workers.push(
      new ScheduledBackups({ dbPath: store.localFile, ...config.backups, clock: services.clock, logger }),
    );
  }
  if (config.auditRetentionDays !== null) {
    workers.push(
      new AuditRetention(
        services.port,
        config.auditRetentionDays,
        services.clock,
        logger,
        undefined,
        services.fleetSchedule,
      ),
    );
  }

  const demo = options.demo
    ? seedDemo(services.admin, (id) => services.syncs.configure(id, { enabled: true }))
    : null;

  app.listen({
    hostname: config.host,
    port: config.port,
    // Our own limits (with the envelope) are lower; Bun's bare 413 must never be what a client sees.
    maxRequestBodySize: 64 * 1024 * 1024,
    // Elysia asks for SO_REUSEPORT by default: a second instance on the same port would start
    // and silently share the traffic (each with its own rate-limit windows). Fail instead.
    reusePort: false,
  });
  const server = app.server;
  if (!server) throw new Error("server did not start");
  const port = server.port ?? config.port;
  const host = config.host.includes(":") ? `[${config.host}]` : config.host;
  const url = `http://${host}:${port}`;
  for (const w of workers) w.start();
  // Payment submissions a crash interrupted are finished with their original bank keys.
  void services.payments.resumeInterrupted().then(
    (r) => r.resumed + r.failed > 0 && logger.info("interrupted payment submissions resumed", r),
    (e) =>
      logger.error("resuming payment submissions failed", {
        error: e instanceof Error ? e.message : String(e),
      }),
  );
  logger.info("listening", {
    url,
    port,
    version: VERSION,
    db: store.location,
  });
  if (config.longWorkPriority === "low" && !lowPriorityAvailable()) {
    logger.warn("long work runs at normal priority: this system cannot lower one thread's priority", {
      platform: process.platform,
    });
  }
  if (admin) {
    const today = dateInZone(services.clock.now(), config.timezone);
    flushStdout(); // the banner follows the "listening" line
    // The banner (with raw tokens) goes to standard error, the operator's terminal: standard
    // output is the JSON log stream, which log collectors keep and ship, and never carries one.
    const signIn: DemoSignIn = {
      url: `${url}/admin`,
      token: admin.created ? admin.token : null,
      source:
        admin.source === "env"
          ? "SVC_ADMIN_TOKEN"
          : config.dbPath === ":memory:"
            ? null
            : demoAdminTokenFile(config.dbPath),
    };
    (options.print ?? ((t: string) => process.stderr.write(t)))(
      demo ? demoBanner(demo, url, today, signIn) : demoAgainBanner(config.dbPath, signIn),
    );
  }

  let stopping: Promise<void> | null = null;
  const stop = () => {
    stopping ??= (async () => {
      logger.info("stopping");
      // Stop accepting; in-flight requests finish.
      await server.stop(false);
      await Promise.all(workers.map((w) => w.stop()));
      await services.exportThreads.stop();
      services.importThreads.stop();
      store.close();
      local?.serveLock.release();
      logger.info("stopped");
    })();
    return stopping;
  };
  return { port, url, services, stop };
}
