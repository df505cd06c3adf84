import { availableParallelism } from "node:os";
import { parseIpRange } from "./auth/ip";

// Configuration is read from the environment once, here, and validated at start-up.
// Nothing else in the program reads process.env.

export interface Config {
  dbPath: string;
  host: string;
  port: number;
  adminToken: string | null;
  secretKey: Uint8Array | null;
  bankPollIntervalMs: number;
  sessionTtlSeconds: number;
  sessionSweepIntervalMs: number;
  balanceStaleSeconds: number;
  timezone: string;
  mcpAllowedOrigins: string[];
  trustProxy: string[];
  logLevel: LogLevel;
  /** Worker threads per large statement export; 0 renders every export in the server's thread. */
  exportThreads: number;
  /** Rows kept in memory (see db/sqlite/row-cache.ts); off reads every row from the database. */
  rowCache: boolean;
}

export type LogLevel = "debug" | "info" | "warn" | "error";
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
  if (!/^\d+$/.test(raw.trim())) throw new ConfigError(name, `must be an integer, got "${raw}"`);
  const value = Number(raw.trim());
  if (value < min || value > max)
    throw new ConfigError(name, `must be between ${min} and ${max}, got ${value}`);
  return value;
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
    throw new ConfigError("SVC_ADMIN_TOKEN", "must be at least 32 characters");
  }
  // A bearer value has no whitespace: such a token could never be presented.
  if (/\s/.test(adminToken)) throw new ConfigError("SVC_ADMIN_TOKEN", "must not contain whitespace");

  let secretKey: Uint8Array | null = null;
  const rawKey = env.SVC_SECRET_KEY ?? "";
  if (rawKey !== "") {
    secretKey = decodeSecretKey(rawKey);
    if (!secretKey) throw new ConfigError("SVC_SECRET_KEY", "must be 32 bytes encoded as base64");
  }

  const timezone = str(env, "SVC_TIMEZONE", "Europe/Moscow");
  if (!isValidTimezone(timezone)) throw new ConfigError("SVC_TIMEZONE", `unknown time zone "${timezone}"`);

  const logLevel = str(env, "SVC_LOG_LEVEL", "info") as LogLevel;
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new ConfigError("SVC_LOG_LEVEL", `must be one of ${LOG_LEVELS.join(", ")}`);
  }

  const origins = list(env, "MCP_ALLOWED_ORIGINS");
  for (const origin of origins) {
    if (!/^https?:\/\/[^/\s]+$/.test(origin)) {
      throw new ConfigError("MCP_ALLOWED_ORIGINS", `"${origin}" is not an origin like https://host:port`);
    }
  }

  const rowCache = str(env, "SVC_ROW_CACHE", "on");
  if (rowCache !== "on" && rowCache !== "off") throw new ConfigError("SVC_ROW_CACHE", "must be on or off");

  const trustProxy = list(env, "SVC_TRUST_PROXY");
  for (const cidr of trustProxy) {
    if (!parseIpRange(cidr))
      throw new ConfigError("SVC_TRUST_PROXY", `"${cidr}" is not an IP address or CIDR`);
  }

  return {
    dbPath: str(env, "SVC_DB_PATH", "./data/svc.db"),
    host: str(env, "SVC_HOST", "127.0.0.1"),
    port: int(env, "SVC_PORT", 8080, 0, 65535),
    adminToken: adminToken === "" ? null : adminToken,
    secretKey,
    bankPollIntervalMs: int(env, "SVC_BANK_POLL_INTERVAL_MS", 30_000, 10, 86_400_000),
    sessionTtlSeconds: int(env, "SVC_SESSION_TTL_SECONDS", 28_800, 1, 31_536_000),
    sessionSweepIntervalMs: int(env, "SVC_SESSION_SWEEP_INTERVAL_MS", 60_000, 10, 86_400_000),
    balanceStaleSeconds: int(env, "SVC_BALANCE_STALE_SECONDS", 3600, 0, 31_536_000),
    timezone,
    mcpAllowedOrigins: origins,
    trustProxy,
    logLevel,
    exportThreads: int(env, "SVC_EXPORT_THREADS", Math.min(2, availableParallelism()), 0, 16),
    rowCache: rowCache === "on",
  };
}

export function decodeSecretKey(raw: string): Uint8Array | null {
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(raw.trim())) return null;
  const bytes = Buffer.from(raw.trim(), "base64");
  return bytes.length === 32 ? new Uint8Array(bytes) : null;
}
