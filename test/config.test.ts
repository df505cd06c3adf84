// lanes: sqlite
import { describe, expect, test } from "bun:test";
import { availableParallelism } from "node:os";
import { TOCHKA_WEBHOOK_KEY } from "../src/banks/tochka/webhook";
import { ConfigError, loadConfig } from "../src/config";

const KEY = Buffer.alloc(32, 1).toString("base64");

function configError(env: Record<string, string>): ConfigError {
  try {
    loadConfig(env);
  } catch (e) {
    if (e instanceof ConfigError) return e;
    throw e;
  }
  throw new Error(`loadConfig accepted ${JSON.stringify(env)}`);
}

describe("loadConfig", () => {
  test("defaults are those of decisions §1", () => {
    expect(loadConfig({})).toEqual({
      dbPath: "./data/svc.db",
      databaseUrl: null,
      databaseTimeoutMs: 5000,
      pollLeaseMs: 120_000,
      host: "127.0.0.1",
      port: 8080,
      adminToken: null,
      secretKey: null,
      bankPollIntervalMs: 30_000,
      sessionTtlSeconds: 28_800,
      sessionSweepIntervalMs: 60_000,
      balanceStaleSeconds: 3600,
      timezone: "Europe/Moscow",
      mcpAllowedOrigins: [],
      trustProxy: [],
      publicRateLimitPerMinute: 60,
      logLevel: "info",
      // Unset: the store's default (on SQLite the cores up to 2, on PostgreSQL one per export).
      exportThreads: null,
      searchThreads: Math.min(2, availableParallelism()),
      longWorkPriority: "low",
      metricsToken: null,
      backups: null,
      checkpoints: "internal",
      auditRetentionDays: null,
      rowCache: true,
      tochka: {
        apiUrl: "https://enter.tochka.com/uapi",
        sandboxUrl: "https://enter.tochka.com/sandbox/v2",
        authUrl: "https://enter.tochka.com",
        webhookKey: TOCHKA_WEBHOOK_KEY,
      },
      publicUrl: "http://127.0.0.1:8080",
      oauthAllowInternalClients: false,
    });
  });

  test("every variable is read", () => {
    const config = loadConfig({
      SVC_DB_PATH: ":memory:",
      SVC_DATABASE_URL: "postgresql://svc:pw@db.internal:5433/svc?sslmode=require",
      SVC_HOST: "0.0.0.0",
      SVC_PORT: "0",
      SVC_ADMIN_TOKEN: "a".repeat(32),
      SVC_SECRET_KEY: KEY,
      SVC_BANK_POLL_INTERVAL_MS: "1000",
      SVC_SESSION_TTL_SECONDS: "60",
      SVC_SESSION_SWEEP_INTERVAL_MS: "500",
      SVC_BALANCE_STALE_SECONDS: "10",
      SVC_TIMEZONE: "Asia/Yekaterinburg",
      MCP_ALLOWED_ORIGINS: "https://agent.example.com, http://localhost:3000",
      SVC_TRUST_PROXY: "10.0.0.0/8, ::1",
      SVC_PUBLIC_RATE_LIMIT_PER_MINUTE: "600",
      SVC_LOG_LEVEL: "debug",
      SVC_EXPORT_THREADS: "0",
      SVC_SEARCH_THREADS: "1",
      SVC_METRICS_TOKEN: "m".repeat(16),
      SVC_BACKUP_DIR: "/var/backups/svc",
      SVC_BACKUP_INTERVAL_MINUTES: "60",
      SVC_BACKUP_KEEP: "24",
      SVC_CHECKPOINTS: "external",
      SVC_AUDIT_RETENTION_DAYS: "365",
      SVC_ROW_CACHE: "off",
      SVC_LONG_WORK_PRIORITY: "normal",
      SVC_DATABASE_TIMEOUT_MS: "2500",
      SVC_POLL_LEASE_SECONDS: "30",
      SVC_TOCHKA_API_URL: "http://127.0.0.1:9000/uapi/",
      SVC_TOCHKA_SANDBOX_URL: "http://127.0.0.1:9000/sandbox/v2",
      SVC_TOCHKA_AUTH_URL: "http://127.0.0.1:9000",
      SVC_PUBLIC_URL: "https://svc.example.com",
      SVC_OAUTH_ALLOW_INTERNAL_CLIENTS: "on",
    });
    expect(config).toEqual({
      dbPath: ":memory:",
      databaseUrl: "postgresql://svc:pw@db.internal:5433/svc?sslmode=require",
      databaseTimeoutMs: 2500,
      pollLeaseMs: 30_000,
      host: "0.0.0.0",
      port: 0,
      adminToken: "a".repeat(32),
      secretKey: new Uint8Array(Buffer.alloc(32, 1)),
      bankPollIntervalMs: 1000,
      sessionTtlSeconds: 60,
      sessionSweepIntervalMs: 500,
      balanceStaleSeconds: 10,
      timezone: "Asia/Yekaterinburg",
      mcpAllowedOrigins: ["https://agent.example.com", "http://localhost:3000"],
      trustProxy: ["10.0.0.0/8", "::1"],
      publicRateLimitPerMinute: 600,
      logLevel: "debug",
      exportThreads: 0,
      searchThreads: 1,
      longWorkPriority: "normal",
      metricsToken: "m".repeat(16),
      backups: { dir: "/var/backups/svc", intervalMinutes: 60, keep: 24 },
      checkpoints: "external",
      auditRetentionDays: 365,
      rowCache: false,
      tochka: {
        apiUrl: "http://127.0.0.1:9000/uapi",
        sandboxUrl: "http://127.0.0.1:9000/sandbox/v2",
        authUrl: "http://127.0.0.1:9000",
        webhookKey: TOCHKA_WEBHOOK_KEY,
      },
      publicUrl: "https://svc.example.com",
      oauthAllowInternalClients: true,
    });
  });

  test("bank and public addresses must be http(s) URLs without query or fragment", () => {
    expect(() => loadConfig({ SVC_TOCHKA_API_URL: "enter.tochka.com" })).toThrow(/SVC_TOCHKA_API_URL/);
    expect(() => loadConfig({ SVC_TOCHKA_AUTH_URL: "ftp://bank.example" })).toThrow(/SVC_TOCHKA_AUTH_URL/);
    expect(() => loadConfig({ SVC_PUBLIC_URL: "https://svc.example.com/?x=1" })).toThrow(/SVC_PUBLIC_URL/);
  });

  test("SVC_DATABASE_URL must be a postgres URL, and a refusal never echoes it (it carries the password)", () => {
    for (const bad of ["mysql://u:s3cret@h/db", "s3cret-not-a-url", "postgres://u:s3cret@/db"]) {
      let message = "";
      try {
        loadConfig({ SVC_DATABASE_URL: bad });
      } catch (e) {
        message = (e as Error).message;
      }
      expect(message).toStartWith("SVC_DATABASE_URL:");
      expect(message).not.toContain("s3cret");
    }
    expect(loadConfig({ SVC_DATABASE_URL: "postgres://db/svc" }).databaseUrl).toBe("postgres://db/svc");
  });

  test("an empty value means unset", () => {
    const config = loadConfig({
      SVC_ADMIN_TOKEN: "",
      SVC_SECRET_KEY: "",
      SVC_PORT: "",
      SVC_TIMEZONE: "",
      SVC_LOG_LEVEL: "",
      MCP_ALLOWED_ORIGINS: "",
      SVC_TRUST_PROXY: "",
      SVC_ROW_CACHE: "",
    });
    expect(config.adminToken).toBeNull();
    expect(config.secretKey).toBeNull();
    expect(config.port).toBe(8080);
    expect(config.timezone).toBe("Europe/Moscow");
    expect(config.logLevel).toBe("info");
    expect(config.mcpAllowedOrigins).toEqual([]);
    expect(config.trustProxy).toEqual([]);
    expect(config.rowCache).toBe(true);
  });

  test("the port range ends are accepted", () => {
    expect(loadConfig({ SVC_PORT: "0" }).port).toBe(0);
    expect(loadConfig({ SVC_PORT: "65535" }).port).toBe(65535);
  });

  test("an admin token of exactly 32 characters is accepted", () => {
    expect(loadConfig({ SVC_ADMIN_TOKEN: "x".repeat(32) }).adminToken).toBe("x".repeat(32));
  });

  const bad: [string, Record<string, string>][] = [
    ["SVC_PORT", { SVC_PORT: "abc" }],
    ["SVC_PORT", { SVC_PORT: "70000" }],
    ["SVC_PORT", { SVC_PORT: "65536" }],
    ["SVC_PORT", { SVC_PORT: "-1" }],
    ["SVC_PORT", { SVC_PORT: "80.5" }],
    ["SVC_ADMIN_TOKEN", { SVC_ADMIN_TOKEN: "short" }],
    ["SVC_ADMIN_TOKEN", { SVC_ADMIN_TOKEN: "x".repeat(31) }],
    ["SVC_ADMIN_TOKEN", { SVC_ADMIN_TOKEN: `${"x".repeat(32)}\n` }],
    ["SVC_ADMIN_TOKEN", { SVC_ADMIN_TOKEN: `${"x".repeat(16)} ${"x".repeat(16)}` }],
    ["SVC_SECRET_KEY", { SVC_SECRET_KEY: Buffer.alloc(16, 1).toString("base64") }],
    ["SVC_SECRET_KEY", { SVC_SECRET_KEY: Buffer.alloc(33, 1).toString("base64") }],
    ["SVC_SECRET_KEY", { SVC_SECRET_KEY: "not base64 at all!" }],
    ["SVC_TIMEZONE", { SVC_TIMEZONE: "Mars/Olympus" }],
    ["SVC_LOG_LEVEL", { SVC_LOG_LEVEL: "loud" }],
    ["MCP_ALLOWED_ORIGINS", { MCP_ALLOWED_ORIGINS: "notanorigin" }],
    ["MCP_ALLOWED_ORIGINS", { MCP_ALLOWED_ORIGINS: "https://ok.example, ftp://x.example" }],
    ["MCP_ALLOWED_ORIGINS", { MCP_ALLOWED_ORIGINS: "https://x.example/path" }],
    ["SVC_TRUST_PROXY", { SVC_TRUST_PROXY: "foo" }],
    ["SVC_TRUST_PROXY", { SVC_TRUST_PROXY: "10.0.0.0/8, 10.0.0.0/33" }],
    ["SVC_PUBLIC_RATE_LIMIT_PER_MINUTE", { SVC_PUBLIC_RATE_LIMIT_PER_MINUTE: "0" }],
    ["SVC_PUBLIC_RATE_LIMIT_PER_MINUTE", { SVC_PUBLIC_RATE_LIMIT_PER_MINUTE: "many" }],
    ["SVC_PUBLIC_RATE_LIMIT_PER_MINUTE", { SVC_PUBLIC_RATE_LIMIT_PER_MINUTE: "100001" }],
    ["SVC_BANK_POLL_INTERVAL_MS", { SVC_BANK_POLL_INTERVAL_MS: "soon" }],
    ["SVC_SESSION_TTL_SECONDS", { SVC_SESSION_TTL_SECONDS: "0" }],
    ["SVC_SESSION_SWEEP_INTERVAL_MS", { SVC_SESSION_SWEEP_INTERVAL_MS: "x" }],
    ["SVC_BALANCE_STALE_SECONDS", { SVC_BALANCE_STALE_SECONDS: "-5" }],
    ["SVC_EXPORT_THREADS", { SVC_EXPORT_THREADS: "17" }],
    ["SVC_EXPORT_THREADS", { SVC_EXPORT_THREADS: "two" }],
    ["SVC_SEARCH_THREADS", { SVC_SEARCH_THREADS: "17" }],
    ["SVC_SEARCH_THREADS", { SVC_SEARCH_THREADS: "-1" }],
    ["SVC_METRICS_TOKEN", { SVC_METRICS_TOKEN: "short" }],
    ["SVC_METRICS_TOKEN", { SVC_METRICS_TOKEN: `${"m".repeat(16)} x` }],
    ["SVC_CHECKPOINTS", { SVC_CHECKPOINTS: "litestream" }],
    ["SVC_BACKUP_INTERVAL_MINUTES", { SVC_BACKUP_INTERVAL_MINUTES: "0" }],
    ["SVC_BACKUP_KEEP", { SVC_BACKUP_KEEP: "none" }],
    ["SVC_AUDIT_RETENTION_DAYS", { SVC_AUDIT_RETENTION_DAYS: "0" }],
    ["SVC_AUDIT_RETENTION_DAYS", { SVC_AUDIT_RETENTION_DAYS: "a year" }],
    ["SVC_ROW_CACHE", { SVC_ROW_CACHE: "no" }],
    ["SVC_ROW_CACHE", { SVC_ROW_CACHE: "ON" }],
    ["SVC_LONG_WORK_PRIORITY", { SVC_LONG_WORK_PRIORITY: "idle" }],
    ["SVC_LONG_WORK_PRIORITY", { SVC_LONG_WORK_PRIORITY: "Low" }],
  ];
  for (const [variable, env] of bad) {
    test(`${JSON.stringify(env)} is a ConfigError naming ${variable}`, () => {
      const error = configError(env);
      expect(error.variable).toBe(variable);
      expect(error.message).toContain(variable);
    });
  }
});

describe("svc serve with a bad configuration", () => {
  test("SVC_PORT=abc stops the process with a non-zero exit and a message naming SVC_PORT", async () => {
    const root = `${import.meta.dir}/..`;
    const proc = Bun.spawn([`${root}/node_modules/.bin/bun`, "run", "cli/svc.ts", "serve"], {
      cwd: root,
      env: {
        PATH: process.env.PATH ?? "",
        HOME: process.env.HOME ?? "/tmp",
        SVC_PORT: "abc",
        SVC_DB_PATH: ":memory:",
      },
      stdout: "pipe",
      stderr: "pipe",
    });
    try {
      const [code, stderr, stdout] = await Promise.all([
        proc.exited,
        new Response(proc.stderr).text(),
        new Response(proc.stdout).text(),
      ]);
      expect(code).not.toBe(0);
      expect(stderr).toContain("SVC_PORT");
      // It stopped before listening.
      expect(stdout).not.toContain("listening");
    } finally {
      proc.kill();
    }
  });
});
