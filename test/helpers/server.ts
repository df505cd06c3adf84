// Starts the real `svc serve` (from source, or the compiled binary) on a free port.
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { Subprocess } from "bun";
import { withAccountKey } from "../../src/formats/validators";
import { ADMIN_TOKEN } from "./app";

export const ROOT = resolve(import.meta.dir, "../..");
export const BUN = process.execPath;

export interface RunningProcess {
  proc: Subprocess<"ignore", "pipe", "pipe">;
  url: string;
  lines: string[];
  admin(method: string, path: string, body?: unknown): Promise<Response>;
  stop(signal?: NodeJS.Signals | number): Promise<number>;
}

const createdDirs: string[] = [];

/** Removes every directory tempDir made (unless BENCH_KEEP is set); `bun test` calls it once all
 *  files have run (test/preload.ts), other processes when they exit. */
export function removeTempDirs(): void {
  if (process.env.BENCH_KEEP) return; // a benchmark run asked to keep its data
  for (const dir of createdDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
}
process.on("exit", removeTempDirs);

/** A fresh temporary directory, removed at the end (see removeTempDirs). */
/** A port nothing listens on now (for a server that must know its address before it starts). */
export function freePort(): number {
  const probe = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = probe.port;
  probe.stop(true);
  return port;
}

export function tempDir(prefix = "svc-test-"): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  createdDirs.push(dir);
  return dir;
}

export async function startServe(opts: {
  dbPath: string;
  env?: Record<string, string>;
  args?: string[];
  command?: string[];
  cwd?: string;
  /** Standard output to this file instead of a pipe read here (benchmarks: reading every access
   *  log line would take CPU from the server being measured). `lines` then stays empty. */
  logFile?: string;
}): Promise<RunningProcess> {
  const command = opts.command ?? [BUN, "run", join(ROOT, "cli/svc.ts")];
  const proc = Bun.spawn([...command, "serve", ...(opts.args ?? [])], {
    cwd: opts.cwd ?? ROOT,
    env: {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? "/tmp",
      SVC_DB_PATH: opts.dbPath,
      SVC_PORT: "0",
      SVC_ADMIN_TOKEN: ADMIN_TOKEN,
      ...opts.env,
    },
    stdin: "ignore",
    stdout: opts.logFile ? Bun.file(opts.logFile) : "pipe",
    stderr: "pipe",
  });
  const lines: string[] = [];
  let url: string | null = null;
  const logFile = opts.logFile;
  const stdout = proc.stdout as ReadableStream<Uint8Array> | number | undefined;
  const reader = typeof stdout === "object" ? stdout.getReader() : null;
  const decoder = new TextDecoder();
  let buffered = "";
  const pump = (async () => {
    if (!reader) return;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      buffered += decoder.decode(value, { stream: true });
      let nl = buffered.indexOf("\n");
      while (nl >= 0) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        lines.push(line);
        if (url === null && line.includes('"msg":"listening"'))
          url = (JSON.parse(line) as { url: string }).url;
        nl = buffered.indexOf("\n");
      }
    }
  })();
  for (let i = 0; i < 300 && url === null; i++) {
    if (proc.exitCode !== null) break;
    if (logFile && existsSync(logFile)) {
      const line = readFileSync(logFile, "utf8")
        .split("\n")
        .find((l) => l.includes('"msg":"listening"'));
      if (line) url = (JSON.parse(line) as { url: string }).url;
    }
    await Bun.sleep(20);
  }
  if (url === null) {
    proc.kill(9);
    const err = await new Response(proc.stderr).text();
    throw new Error(`server did not start: ${err}\n${lines.join("\n")}`);
  }
  const base = url as string;
  for (let i = 0; i < 100; i++) {
    const ok = await fetch(`${base}/healthz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) break;
    await Bun.sleep(20);
  }
  return {
    proc,
    url: base,
    lines,
    admin: (method, path, body) =>
      fetch(`${base}/admin/api${path}`, {
        method,
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
      }),
    async stop(signal: NodeJS.Signals | number = "SIGTERM") {
      if (proc.exitCode === null) proc.kill(signal);
      const code = await proc.exited;
      await pump.catch(() => {});
      return code;
    },
  };
}

let seededAccounts = 0;

/** Company, sandbox account and one token (integration by default), through a running server's admin API. */
export async function seedToken(
  server: RunningProcess,
  opts: {
    purpose?: "integration" | "mcp";
    rate_limit_per_minute?: number;
    name?: string;
    sandbox?: { ops_per_day?: number };
    bank?: string;
    mode?: "live" | "test";
  } = {},
) {
  const company = (await (
    await server.admin("POST", "/companies", { name: "ООО Тест", inn: "7719617469" })
  ).json()) as {
    company_id: string;
  };
  // One account number per seed: a number with its BIK is one account.
  const number = withAccountKey(`40702810${String(++seededAccounts).padStart(12, "0")}`, "044525225");
  const account = (await (
    await server.admin("POST", "/bank-accounts", {
      company_id: company.company_id,
      bank: opts.bank ?? "sandbox",
      account_number: number,
      bik: "044525225",
      alias: "main",
      sandbox: opts.sandbox,
    })
  ).json()) as { bank_account_id: string };
  const token = (await (
    await server.admin("POST", "/tokens", {
      company_id: company.company_id,
      name: opts.name ?? "e2e",
      purpose: opts.purpose ?? "integration",
      mode: opts.mode ?? "test",
      scope_read_statements: true,
      accounts: [{ bank_account_id: account.bank_account_id, allow_read_statements: true }],
      rate_limit_per_minute: opts.rate_limit_per_minute ?? 10000,
    })
  ).json()) as { token: string; api_token_id: string };
  return {
    companyId: company.company_id,
    accountId: account.bank_account_id,
    number,
    token: token.token,
    tokenId: token.api_token_id,
  };
}

/**
 * Company, an account of bank kind `file` (statements from the bank's own 1C files) and a live
 * integration token that reads it (a test token reaches sandbox banks only).
 */
export function seedFileAccount(server: RunningProcess) {
  return seedToken(server, { bank: "file", mode: "live" });
}

/** Company, sandbox account and an integration token, through the admin API of a running server. */
export function seedIntegration(server: RunningProcess, sandbox?: { ops_per_day?: number }) {
  return seedToken(server, { sandbox });
}

/** Runs SQL against a database file from a separate process (its first open of the file included). */
export function sqlInAnotherProcess(path: string, sql: string): void {
  const script = `const { Database } = require("bun:sqlite"); const db = new Database(${JSON.stringify(path)}); db.exec("PRAGMA busy_timeout = 5000"); db.exec(${JSON.stringify(sql)}); db.close();`;
  const done = Bun.spawnSync([process.execPath, "-e", script], { stderr: "pipe" });
  if (done.exitCode !== 0) throw new Error(done.stderr.toString());
}

/** Runs `svc admin …` in its own process on a database file; throws on a non-zero exit. */
export async function svcAdmin(
  dbPath: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<string> {
  const { out, err, code } = await svcAdminRun(dbPath, args, env);
  if (code !== 0) throw new Error(`svc admin ${args.join(" ")}: exit ${code}: ${err}`);
  return out;
}

/** Runs `svc admin …` in its own process; its output, errors and exit code, whatever they are. */
export async function svcAdminRun(
  dbPath: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<{ out: string; err: string; code: number }> {
  const proc = Bun.spawn([BUN, "run", join(ROOT, "cli/svc.ts"), "admin", ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", SVC_DB_PATH: dbPath, ...env },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [out, err, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  return { out, err, code };
}
