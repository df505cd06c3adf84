// lanes: sqlite
// The real `svc` command: a server on a free port, signals, migrations, demo data and the admin CLI.
import { Database } from "bun:sqlite";
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Subprocess } from "bun";
import pkg from "../../package.json" with { type: "json" };
import { withAccountKey } from "../../src/formats/validators";

const ROOT = join(import.meta.dir, "..", "..");
const BUN = join(ROOT, "node_modules", ".bin", "bun");
const ADMIN_TOKEN = "e2e-admin-token-0123456789abcdefghijklmn";
const TOKEN_RE = /svc_(live|test)_[0-9A-Za-z]{40}/g;
/** A harness limit for tests that start processes, not a performance assertion. */
const E2E_TIMEOUT_MS = 60_000;

const spawned = new Set<Subprocess>();
const tempDirs: string[] = [];

afterAll(() => {
  for (const proc of spawned) if (proc.exitCode === null && proc.signalCode === null) proc.kill("SIGKILL");
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "svc-e2e-"));
  tempDirs.push(dir);
  return dir;
}

/** Only what the command needs: nothing from the developer's own SVC_* environment leaks in. */
function env(extra: Record<string, string>): Record<string, string> {
  return { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? tmpdir(), ...extra };
}

/** Collects a child's stdout and lets a test wait for a line. */
class Output {
  text = "";
  private waiters: {
    pred: (line: string) => boolean;
    resolve: (line: string) => void;
    reject: (e: Error) => void;
  }[] = [];
  private ended = false;
  readonly done: Promise<void>;

  constructor(stream: ReadableStream<Uint8Array>) {
    this.done = (async () => {
      const decoder = new TextDecoder();
      for await (const chunk of stream) {
        this.text += decoder.decode(chunk, { stream: true });
        this.check();
      }
      this.text += decoder.decode();
      this.ended = true;
      this.check();
    })();
  }

  get lines(): string[] {
    return this.text.split("\n").filter((l) => l.length > 0);
  }

  waitForLine(pred: (line: string) => boolean): Promise<string> {
    return new Promise((resolve, reject) => {
      this.waiters.push({ pred, resolve, reject });
      this.check();
    });
  }

  private check(): void {
    const complete = this.ended ? this.lines : this.text.split("\n").slice(0, -1);
    this.waiters = this.waiters.filter((w) => {
      const hit = complete.find(w.pred);
      if (hit !== undefined) w.resolve(hit);
      else if (this.ended) w.reject(new Error(`output ended without the expected line:\n${this.text}`));
      else return true;
      return false;
    });
  }
}

interface Server {
  proc: Subprocess<"ignore", "pipe", "pipe">;
  out: Output;
  /** Standard error as it comes (the --demo banner). */
  err: Output;
  stderr: Promise<string>;
  base: string;
}

async function startServe(
  dbPath: string,
  args: string[] = [],
  extraEnv: Record<string, string> = {},
): Promise<Server> {
  const proc = Bun.spawn([BUN, "run", "cli/svc.ts", "serve", ...args], {
    cwd: ROOT,
    env: env({
      SVC_PORT: "0",
      SVC_HOST: "127.0.0.1",
      SVC_DB_PATH: dbPath,
      SVC_ADMIN_TOKEN: ADMIN_TOKEN,
      ...extraEnv,
    }),
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  spawned.add(proc);
  const out = new Output(proc.stdout);
  const err = new Output(proc.stderr);
  const stderr = err.done.then(() => err.text);
  const listening = await out
    .waitForLine((l) => l.startsWith("{") && JSON.parse(l).msg === "listening")
    .catch(async (e: Error) => {
      throw new Error(`${e.message}\nstderr:\n${await stderr}`);
    });
  const port = (JSON.parse(listening) as { port: number }).port;
  expect(port).toBeGreaterThan(0);
  const base = `http://127.0.0.1:${port}`;
  await waitForHealth(base, proc);
  return { proc, out, err, stderr, base };
}

async function waitForHealth(base: string, proc: Subprocess): Promise<void> {
  for (let attempt = 0; attempt < 200; attempt++) {
    if (proc.exitCode !== null) throw new Error(`server exited with ${proc.exitCode}`);
    try {
      const res = await fetch(`${base}/healthz`);
      if (res.status === 200) {
        expect(await res.json()).toEqual({ status: "ok" });
        return;
      }
    } catch {
      // not accepting yet
    }
    await new Promise((r) => setImmediate(r));
  }
  throw new Error("server never answered /healthz");
}

async function stop(server: Server): Promise<number> {
  server.proc.kill("SIGTERM");
  const code = await server.proc.exited;
  await Promise.all([server.out.done, server.err.done]);
  return code;
}

async function run(args: string[], extraEnv: Record<string, string>) {
  const proc = Bun.spawn([BUN, "run", "cli/svc.ts", ...args], {
    cwd: ROOT,
    env: env(extraEnv),
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  spawned.add(proc);
  const [code, stdout, stderr] = await Promise.all([
    proc.exited,
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
  ]);
  return { code, stdout, stderr };
}

function admin(base: string, method: string, path: string, body?: unknown): Promise<Response> {
  return fetch(`${base}/admin/api${path}`, {
    method,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

describe("svc serve", () => {
  test(
    "listens on a free port, serves admin and token calls, stops cleanly on SIGTERM",
    async () => {
      const dir = tempDir();
      const server = await startServe(join(dir, "nested", "svc.db"));
      const { base } = server;
      let raw = "";
      try {
        const health = await fetch(`${base}/healthz`);
        expect(health.headers.get("x-request-id")).toBeTruthy();

        const companyRes = await admin(base, "POST", "/companies", { name: "ООО E2E", inn: "7719617469" });
        expect(companyRes.status).toBe(201);
        const company = (await companyRes.json()) as { company_id: string };

        const accountRes = await admin(base, "POST", "/bank-accounts", {
          company_id: company.company_id,
          bank: "sandbox",
          account_number: withAccountKey("40702810900000000001", "044525225"),
          bik: "044525225",
        });
        expect(accountRes.status).toBe(201);
        const account = (await accountRes.json()) as { bank_account_id: string };

        const tokenRes = await admin(base, "POST", "/tokens", {
          company_id: company.company_id,
          name: "e2e",
          purpose: "integration",
          mode: "test",
          scope_read_statements: true,
          accounts: [{ bank_account_id: account.bank_account_id, allow_read_statements: true }],
        });
        expect(tokenRes.status).toBe(201);
        raw = ((await tokenRes.json()) as { token: string }).token;
        expect(raw).toMatch(/^svc_test_[0-9A-Za-z]{40}$/);

        const statementUrl = `${base}/api/v1/integration/statements/${crypto.randomUUID()}`;
        // A well-formed token that the service never issued is refused as unknown...
        const unknown = await fetch(statementUrl, {
          headers: { authorization: `Bearer svc_test_${"A".repeat(40)}` },
        });
        expect(unknown.status).toBe(401);
        expect(((await unknown.json()) as { error: { code: string } }).error.code).toBe("invalid_token");
        // ...and no token at all is a format error.
        const none = await fetch(statementUrl);
        expect(((await none.json()) as { error: { code: string } }).error.code).toBe("invalid_token_format");
        // The admin-issued one gets past authentication: the statement simply does not exist.
        const known = await fetch(statementUrl, { headers: { authorization: `Bearer ${raw}` } });
        const knownBody = (await known.json()) as { error?: { code: string } };
        expect(known.status).not.toBe(401);
        expect({ status: known.status, code: knownBody.error?.code }).toEqual({
          status: 404,
          code: "not_found",
        });
        expect(known.headers.get("x-ratelimit-limit")).toBe("60");

        // The token is usable for a real order.
        const today = new Date().toISOString().slice(0, 10);
        const order = await fetch(`${base}/api/v1/integration/statements`, {
          method: "POST",
          headers: { authorization: `Bearer ${raw}`, "content-type": "application/json" },
          body: JSON.stringify({
            bank_account_id: account.bank_account_id,
            external_id: "e2e-1",
            date_from: today,
            date_to: today,
          }),
        });
        expect(order.status).toBe(201);
        const ordered = (await order.json()) as { statement_id: string };
        const poll = await fetch(`${base}/api/v1/integration/statements/${ordered.statement_id}`, {
          headers: { authorization: `Bearer ${raw}` },
        });
        expect(poll.status).toBe(200);
        expect(((await poll.json()) as { statement_id: string }).statement_id).toBe(ordered.statement_id);

        // Over-limit bodies get the envelope from the real server too, not Bun's bare 413.
        const big = JSON.stringify({ name: "x".repeat(2 * 1024 * 1024), inn: "7719617469" });
        const sized = await admin(base, "POST", "/companies", JSON.parse(big));
        expect(sized.status).toBe(413);
        // The unread body is not left on a kept-alive connection (which would hold up SIGTERM below).
        expect(sized.headers.get("connection")).toBe("close");
        expect(sized.headers.get("x-request-id")).toBeTruthy();
        expect(((await sized.json()) as { error: { code: string } }).error.code).toBe("payload_too_large");
        let sent = 0;
        const streamed = await fetch(`${base}/admin/api/companies`, {
          method: "POST",
          headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
          body: new ReadableStream<Uint8Array>({
            pull(controller) {
              if (sent >= 2 * 1024 * 1024) return controller.close();
              sent += 64 * 1024;
              controller.enqueue(new Uint8Array(64 * 1024).fill(0x20));
            },
          }),
          duplex: "half",
        } as RequestInit);
        expect(streamed.status).toBe(413);
        expect(((await streamed.json()) as { error: { code: string } }).error.code).toBe("payload_too_large");

        // A second server on the same port cannot start, and says so.
        const clash = Bun.spawn([BUN, "run", "cli/svc.ts", "serve"], {
          cwd: ROOT,
          env: env({ SVC_PORT: new URL(base).port, SVC_DB_PATH: join(dir, "other.db") }),
          stdin: "ignore",
          stdout: "pipe",
          stderr: "pipe",
        });
        spawned.add(clash);
        const clashOut = new Output(clash.stdout);
        const outcome = await Promise.race([
          clash.exited.then((code) => ({ exited: code })),
          clashOut
            .waitForLine((l) => l.includes('"listening"'))
            .then(
              () => ({ listening: true as const }),
              () => new Promise<never>(() => {}), // output ended: the exit wins the race
            ),
        ]);
        if ("listening" in outcome) clash.kill("SIGKILL");
        expect(outcome).toEqual({ exited: expect.any(Number) });
        expect(await clash.exited).not.toBe(0);
        expect((await new Response(clash.stderr).text()).length).toBeGreaterThan(0);

        // A second server on the same database file (another port) refuses too: it would give
        // every token a second rate-limit window and run every background job twice.
        const twin = Bun.spawn([BUN, "run", "cli/svc.ts", "serve"], {
          cwd: ROOT,
          env: env({ SVC_PORT: "0", SVC_DB_PATH: join(dir, "nested", "svc.db") }),
          stdin: "ignore",
          stdout: "pipe",
          stderr: "pipe",
        });
        spawned.add(twin);
        expect(await twin.exited).toBe(2);
        expect(await new Response(twin.stderr).text()).toContain("другой svc serve уже работает с базой");
      } finally {
        const code = await stop(server);
        expect(code).toBe(0);
      }
      const stdout = server.out.text;
      expect(raw).not.toBe("");
      expect(stdout).not.toContain(raw);
      expect(stdout).not.toContain(raw.slice(13));
      expect(stdout).not.toContain(ADMIN_TOKEN);
      expect(await server.stderr).not.toContain(raw);
      // Structured logs only: every stdout line is a JSON object, including the shutdown.
      const lines = server.out.lines.map(
        (l) => JSON.parse(l) as { msg: string; route?: string; ip?: string },
      );
      expect(lines.map((l) => l.msg)).toEqual(expect.arrayContaining(["listening", "request", "stopped"]));
      // The socket address is the client (normalised from ::ffff:127.0.0.1 where Bun reports that).
      const healthLine = lines.find((l) => l.msg === "request" && l.route === "/healthz");
      expect(healthLine?.ip).toBe("127.0.0.1");
    },
    E2E_TIMEOUT_MS,
  );

  test(
    "--demo prints two svc_test_ tokens once, on standard error and never in the log stream; a second start on the same database prints none",
    async () => {
      const dir = tempDir();
      const dbPath = join(dir, "svc.db");
      const first = await startServe(dbPath, ["--demo"]);
      let tokens: string[] = [];
      try {
        await first.err.waitForLine((l) => l.includes("agent (mcp) token"));
        tokens = [...first.err.text.matchAll(TOKEN_RE)].map((m) => m[0]);
        const distinct = [...new Set(tokens)];
        expect(distinct).toHaveLength(2);
        expect(distinct.every((tok) => tok.startsWith("svc_test_"))).toBe(true);
        // The printed integration token works.
        const integration = first.err.lines
          .find((l) => l.includes("integration token:"))!
          .split(": ")[1]!
          .trim();
        const list = await fetch(`${first.base}/api/v1/integration/statements`, {
          headers: { authorization: `Bearer ${integration}` },
        });
        expect(list.status).toBe(200);
      } finally {
        expect(await stop(first)).toBe(0);
      }
      // Standard output is the JSON log stream: every line JSON, no token in any of them.
      expect(first.out.lines.every((l) => l.startsWith("{"))).toBe(true);
      expect(first.out.text.match(TOKEN_RE)).toBeNull();
      // The generated key is private to the owner.
      expect(statSync(join(dir, "secret.key")).mode & 0o777).toBe(0o600);

      const second = await startServe(dbPath, ["--demo"]);
      try {
        const companies = await admin(second.base, "GET", "/companies");
        expect(((await companies.json()) as { companies: unknown[] }).companies).toHaveLength(1);
      } finally {
        expect(await stop(second)).toBe(0);
      }
      expect(second.out.text.match(TOKEN_RE)).toBeNull();
      expect(second.err.text.match(TOKEN_RE)).toBeNull();
      expect(second.err.text).toContain("Demo data already in");
      for (const tok of tokens) expect(`${second.out.text}${second.err.text}`).not.toContain(tok);
    },
    E2E_TIMEOUT_MS,
  );
});

describe("svc migrate / version", () => {
  test(
    "migrate applies the schema to a new file and exits 0; running it again is harmless",
    async () => {
      const dbPath = join(tempDir(), "m", "svc.db");
      const first = await run(["migrate"], { SVC_DB_PATH: dbPath });
      expect(first.code).toBe(0);
      const db = new Database(dbPath, { readonly: true });
      try {
        const tables = db
          .query<{ name: string }, []>("SELECT name FROM sqlite_master WHERE type = 'table'")
          .all()
          .map((r) => r.name);
        expect(tables).toEqual(
          expect.arrayContaining(["companies", "bank_accounts", "api_tokens", "audit_log"]),
        );
      } finally {
        db.close();
      }
      const again = await run(["migrate"], { SVC_DB_PATH: dbPath });
      expect(again.code).toBe(0);
    },
    E2E_TIMEOUT_MS,
  );

  test(
    "version prints the package version",
    async () => {
      const { code, stdout } = await run(["version"], {});
      expect(code).toBe(0);
      expect(stdout.trim()).toBe(pkg.version);
    },
    E2E_TIMEOUT_MS,
  );
});

describe("svc admin", () => {
  test(
    "company create prints the company; an mcp token with --send-payments is refused",
    async () => {
      const dbPath = join(tempDir(), "svc.db");
      const e = { SVC_DB_PATH: dbPath };
      const created = await run(["admin", "company", "create", "--name", "X", "--inn", "7719617469"], e);
      expect(created.code).toBe(0);
      const company = JSON.parse(created.stdout) as { company_id: string; name: string; inn: string };
      expect(company).toMatchObject({ name: "X", inn: "7719617469" });

      const refused = await run(
        [
          "admin",
          "token",
          "create",
          "--company",
          company.company_id,
          "--name",
          "t",
          "--purpose",
          "mcp",
          "--read-statements",
          "--send-payments",
        ],
        e,
      );
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain("validation_error");
      expect(refused.stdout).not.toMatch(TOKEN_RE);

      // Bank credentials must be a JSON object.
      const account = [
        "admin",
        "account",
        "create",
        "--company",
        company.company_id,
        "--bank",
        "sandbox",
        "--number",
        withAccountKey("40702810900000000001", "044525225"),
        "--bik",
        "044525225",
      ];
      for (const bad of ["[1,2]", '"login"', "{nope"]) {
        const res = await run([...account, "--credentials", bad], {
          ...e,
          SVC_SECRET_KEY: Buffer.alloc(32, 3).toString("base64"),
        });
        expect({ bad, code: res.code }).toEqual({ bad, code: 2 });
        expect(res.stderr).toContain("--credentials: объект JSON");
      }
      const accounts = await run(["admin", "account", "list"], e);
      expect(JSON.parse(accounts.stdout)).toEqual({ bank_accounts: [] });

      const list = await run(["admin", "token", "list"], e);
      expect(list.code).toBe(0);
      expect(JSON.parse(list.stdout)).toEqual({ tokens: [] });

      // The same command without the payment right succeeds and shows the raw token once.
      const ok = await run(
        [
          "admin",
          "token",
          "create",
          "--company",
          company.company_id,
          "--name",
          "t",
          "--purpose",
          "mcp",
          "--read-statements",
        ],
        e,
      );
      expect(ok.code).toBe(0);
      const token = (JSON.parse(ok.stdout) as { token: string }).token;
      expect(token).toMatch(/^svc_live_[0-9A-Za-z]{40}$/);
      const listed = await run(["admin", "token", "list"], e);
      expect(listed.stdout).not.toContain(token);
      for (const file of [dbPath, `${dbPath}-wal`]) {
        if (existsSync(file)) expect(readFileSync(file).includes(token)).toBe(false);
      }

      // The issue's own example: no --name, one account allowed to read.
      const acct = await run(account, e);
      expect(acct.code).toBe(0);
      const accountId = (JSON.parse(acct.stdout) as { bank_account_id: string }).bank_account_id;
      const example = await run(
        [
          "admin",
          "token",
          "create",
          "--company",
          company.company_id,
          "--purpose",
          "mcp",
          "--read-statements",
          "--account",
          accountId,
        ],
        e,
      );
      expect(example.code).toBe(0);
      const view = JSON.parse(example.stdout) as {
        token: string;
        name: string;
        accounts: { bank_account_id: string; allow_read_statements: boolean; allow_send_payments: boolean }[];
      };
      expect(view.token).toMatch(/^svc_live_[0-9A-Za-z]{40}$/);
      expect(view.name).toBe("mcp token");
      expect(view.accounts).toEqual([
        { bank_account_id: accountId, allow_read_statements: true, allow_send_payments: false },
      ]);
    },
    E2E_TIMEOUT_MS,
  );
});
