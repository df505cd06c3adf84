import { availableParallelism } from "node:os";
import { parseIpRange } from "./auth/ip";
import { TOCHKA_WEBHOOK_KEY, webhookKeyProblem } from "./banks/tochka/webhook";
import { DEFAULT_TIMEZONE } from "./core/clock";
import type { LogLevel } from "./core/logger";
import { LONG_WORK_PRIORITIES, type LongWorkPriority } from "./core/thread-priority";

// Configuration is read from the environment once, here, and validated at start-up.
// Nothing else in the program reads process.env.

export interface Config {
  dbPath: string;
  /** SVC_DATABASE_URL: the PostgreSQL store (replicas); null: SQLite at dbPath. */
  databaseUrl: string | null;
  /** SVC_DATABASE_TIMEOUT_MS: the longest a PostgreSQL statement may take before the request gets 503. */
  databaseTimeoutMs: number;
  host: string;
  port: number;
  adminToken: string | null;
  secretKey: Uint8Array | null;
  bankPollIntervalMs: number;
  /** SVC_POLL_LEASE_SECONDS: how long a poller holds a statement without renewing; after a replica
   *  dies mid-poll, how long the others wait before taking it over. */
  pollLeaseMs: number;
  sessionTtlSeconds: number;
  sessionSweepIntervalMs: number;
  balanceStaleSeconds: number;
  timezone: string;
  mcpAllowedOrigins: string[];
  trustProxy: string[];
  /** SVC_PUBLIC_RATE_LIMIT_PER_MINUTE: requests per client address and minute on the routes that
   *  need no token (OAuth, the well-known documents, the admin sign-in), and refused bearers. */
  publicRateLimitPerMinute: number;
  logLevel: LogLevel;
  /** Worker threads per large statement export (0: every export in the server's thread); null:
   *  the store's default (statements/export/threads.ts). */
  exportThreads: number | null;
  /** Worker threads that run search_operations' searches (0: in the server's thread). */
  searchThreads: number;
  /** How the threads of exports and searches are scheduled beside the server's own thread. */
  longWorkPriority: LongWorkPriority;
  /** Bearer for GET /metrics; null: /metrics answers 404. */
  metricsToken: string | null;
  /** Scheduled backups: null when SVC_BACKUP_DIR is unset. */
  backups: { dir: string; intervalMinutes: number; keep: number } | null;
  /** Who checkpoints the WAL: svc itself, or an external replicator (Litestream). */
  checkpoints: "internal" | "external";
  /** Audit entries older than this many days are deleted; null keeps them forever. */
  auditRetentionDays: number | null;
  /** Rows kept in memory between requests (tokens, grants, accounts, statements, sessions, balances). */
  rowCache: boolean;
  /** Tochka Bank: its API (production and sandbox), its OAuth server, and the public key (JWK)
   *  its webhooks are signed with (SVC_TOCHKA_WEBHOOK_KEY). */
  tochka: { apiUrl: string; sandboxUrl: string; authUrl: string; webhookKey: string };
  /** The service's address as browsers and banks reach it (OAuth redirect URIs). */
  publicUrl: string;
  /** Fetch OAuth client metadata documents from internal addresses (and over http): labs, tests. */
  oauthAllowInternalClients: boolean;
}

const LOG_LEVELS: readonly LogLevel[] = ["debug", "info", "warn", "error"];

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(`${variable}: ${message}`);
    this.name = "ConfigError";
  }
}

type Env = Record<string, string | undefined>;

function str(env: Env, name: string, fallback: string): string {
  const value = env[name];
  return value === undefined || value === "" ? fallback : value;
}

function int(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  if (!/^\d+$/.test(raw.trim())) throw new ConfigError(name, `должно быть целым числом, а не "${raw}"`);
  const value = Number(raw.trim());
  if (value < min || value > max)
    throw new ConfigError(name, `должно быть от ${min} до ${max}, а не ${value}`);
  return value;
}

/** An integer setting whose default depends on more than the environment (null: not set). */
function optionalInt(env: Env, name: string, min: number, max: number): number | null {
  const raw = env[name];
  return raw === undefined || raw === "" ? null : int(env, name, min, min, max);
}

/** An http(s) base URL without a trailing slash. */
/** SVC_TOCHKA_WEBHOOK_KEY: the bank's public key as a JWK; default the one it publishes. */
function tochkaWebhookKey(env: Env): string {
  const raw = str(env, "SVC_TOCHKA_WEBHOOK_KEY", TOCHKA_WEBHOOK_KEY).trim();
  const problem = webhookKeyProblem(raw);
  if (problem) throw new ConfigError("SVC_TOCHKA_WEBHOOK_KEY", problem);
  return raw;
}

function baseUrl(env: Env, name: string, fallback: string): string {
  const raw = str(env, name, fallback).trim();
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(name, `"${raw}" — не адрес вида https://host/path`);
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    throw new ConfigError(name, `"${raw}" — нужен адрес http:// или https://`);
  }
  if (url.search !== "" || url.hash !== "") throw new ConfigError(name, `"${raw}" — без ? и #`);
  return raw.replace(/\/+$/, "");
}

/** A postgres:// URL. The value is never echoed: it usually carries the password. */
function databaseUrl(env: Env): string | null {
  const raw = str(env, "SVC_DATABASE_URL", "").trim();
  if (raw === "") return null;
  const shape = "нужен адрес вида postgres://пользователь:пароль@хост:5432/база";
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError("SVC_DATABASE_URL", `не адрес; ${shape}`);
  }
  if (url.protocol !== "postgres:" && url.protocol !== "postgresql:") {
    throw new ConfigError("SVC_DATABASE_URL", `схема ${url.protocol} не поддерживается; ${shape}`);
  }
  if (url.hostname === "") throw new ConfigError("SVC_DATABASE_URL", `не указан хост; ${shape}`);
  return raw;
}

function list(env: Env, name: string): string[] {
  return str(env, name, "")
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

function isValidTimezone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

export function loadConfig(env: Env = process.env): Config {
  const adminToken = env.SVC_ADMIN_TOKEN ?? "";
  if (adminToken !== "" && adminToken.length < 32) {
    throw new ConfigError("SVC_ADMIN_TOKEN", "не короче 32 символов");
  }
  // A bearer value has no whitespace: such a token could never be presented.
  if (/\s/.test(adminToken)) throw new ConfigError("SVC_ADMIN_TOKEN", "без пробелов и переводов строк");

  let secretKey: Uint8Array | null = null;
  const rawKey = env.SVC_SECRET_KEY ?? "";
  if (rawKey !== "") {
    secretKey = decodeSecretKey(rawKey);
    if (!secretKey) throw new ConfigError("SVC_SECRET_KEY", "32 байта в base64");
  }

  const timezone = str(env, "SVC_TIMEZONE", DEFAULT_TIMEZONE);
  if (!isValidTimezone(timezone))
    throw new ConfigError("SVC_TIMEZONE", `неизвестный часовой пояс "${timezone}"`);

  const logLevel = str(env, "SVC_LOG_LEVEL", "info") as LogLevel;
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new ConfigError("SVC_LOG_LEVEL", `одно из: ${LOG_LEVELS.join(", ")}`);
  }

  const origins = list(env, "MCP_ALLOWED_ORIGINS");
  for (const origin of origins) {
    if (!/^https?:\/\/[^/\s]+$/.test(origin)) {
      throw new ConfigError("MCP_ALLOWED_ORIGINS", `"${origin}" — не origin вида https://host:port`);
    }
  }

  const trustProxy = list(env, "SVC_TRUST_PROXY");
  for (const cidr of trustProxy) {
    if (!parseIpRange(cidr))
      throw new ConfigError("SVC_TRUST_PROXY", `"${cidr}" — не IP-адрес и не подсеть CIDR`);
  }

  const metricsToken = env.SVC_METRICS_TOKEN ?? "";
  if (metricsToken !== "" && (metricsToken.length < 16 || /\s/.test(metricsToken))) {
    throw new ConfigError("SVC_METRICS_TOKEN", "не короче 16 символов, без пробелов");
  }

  const checkpoints = str(env, "SVC_CHECKPOINTS", "internal");
  if (checkpoints !== "internal" && checkpoints !== "external") {
    throw new ConfigError("SVC_CHECKPOINTS", `internal или external, а не "${checkpoints}"`);
  }

  const backupDir = str(env, "SVC_BACKUP_DIR", "");
  const backupInterval = int(env, "SVC_BACKUP_INTERVAL_MINUTES", 1440, 1, 525_600);
  const backupKeep = int(env, "SVC_BACKUP_KEEP", 7, 1, 10_000);
  const retention = env.SVC_AUDIT_RETENTION_DAYS ?? "";
  const rowCache = str(env, "SVC_ROW_CACHE", "on");
  if (rowCache !== "on" && rowCache !== "off") {
    throw new ConfigError("SVC_ROW_CACHE", `on или off, а не "${rowCache}"`);
  }
  const longWorkPriority = str(env, "SVC_LONG_WORK_PRIORITY", "low") as LongWorkPriority;
  if (!LONG_WORK_PRIORITIES.includes(longWorkPriority)) {
    throw new ConfigError("SVC_LONG_WORK_PRIORITY", `low или normal, а не "${longWorkPriority}"`);
  }

  const internalClients = str(env, "SVC_OAUTH_ALLOW_INTERNAL_CLIENTS", "off");
  if (internalClients !== "on" && internalClients !== "off") {
    throw new ConfigError("SVC_OAUTH_ALLOW_INTERNAL_CLIENTS", `on или off, а не "${internalClients}"`);
  }
  const host = str(env, "SVC_HOST", "127.0.0.1");
  const port = int(env, "SVC_PORT", 8080, 0, 65535);
  return {
    dbPath: str(env, "SVC_DB_PATH", "./data/svc.db"),
    databaseUrl: databaseUrl(env),
    databaseTimeoutMs: int(env, "SVC_DATABASE_TIMEOUT_MS", 5000, 100, 600_000),
    host,
    port,
    adminToken: adminToken === "" ? null : adminToken,
    secretKey,
    bankPollIntervalMs: int(env, "SVC_BANK_POLL_INTERVAL_MS", 30_000, 10, 86_400_000),
    pollLeaseMs: int(env, "SVC_POLL_LEASE_SECONDS", 120, 1, 86_400) * 1000,
    sessionTtlSeconds: int(env, "SVC_SESSION_TTL_SECONDS", 28_800, 1, 31_536_000),
    sessionSweepIntervalMs: int(env, "SVC_SESSION_SWEEP_INTERVAL_MS", 60_000, 10, 86_400_000),
    balanceStaleSeconds: int(env, "SVC_BALANCE_STALE_SECONDS", 3600, 0, 31_536_000),
    timezone,
    mcpAllowedOrigins: origins,
    trustProxy,
    publicRateLimitPerMinute: int(env, "SVC_PUBLIC_RATE_LIMIT_PER_MINUTE", 60, 1, 100_000),
    logLevel,
    exportThreads: optionalInt(env, "SVC_EXPORT_THREADS", 0, 16),
    searchThreads: int(env, "SVC_SEARCH_THREADS", Math.min(2, availableParallelism()), 0, 16),
    longWorkPriority,
    metricsToken: metricsToken === "" ? null : metricsToken,
    backups: backupDir === "" ? null : { dir: backupDir, intervalMinutes: backupInterval, keep: backupKeep },
    checkpoints,
    auditRetentionDays: retention === "" ? null : int(env, "SVC_AUDIT_RETENTION_DAYS", 0, 1, 36_500),
    rowCache: rowCache === "on",
    tochka: {
      apiUrl: baseUrl(env, "SVC_TOCHKA_API_URL", "https://enter.tochka.com/uapi"),
      sandboxUrl: baseUrl(env, "SVC_TOCHKA_SANDBOX_URL", "https://enter.tochka.com/sandbox/v2"),
      authUrl: baseUrl(env, "SVC_TOCHKA_AUTH_URL", "https://enter.tochka.com"),
      webhookKey: tochkaWebhookKey(env),
    },
    publicUrl: baseUrl(env, "SVC_PUBLIC_URL", `http://${host.includes(":") ? `[${host}]` : host}:${port}`),
    oauthAllowInternalClients: internalClients === "on",
  };
}

export function decodeSecretKey(raw: string): Uint8Array | null {
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(raw.trim())) return null;
  const bytes = Buffer.from(raw.trim(), "base64");
  return bytes.length === 32 ? new Uint8Array(bytes) : null;
}
