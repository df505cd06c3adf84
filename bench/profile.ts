// CPU profiles of the server (for finding what limits a benchmark):
//   bun run bench/profile.ts mcp|rest|healthz [seconds]   wrk at 32 connections against one route
//   bun run bench/profile.ts export               one 155k-operation statement, each format
// Starts svc from source under `bun --cpu-prof`, drives it, stops it, and prints the functions
// with the most self time and the most inclusive time. The raw profiles (.cpuprofile, Chrome
// DevTools format) are kept; their paths are printed.
import { mkdirSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { dateInZone } from "../src/core/clock";
import { ROOT, startServe, tempDir } from "../test/helpers/server";
import {
  agentCallRequests,
  createAccount,
  createCompany,
  createTokens,
  mcpSession,
  orderRequest,
  orderStatement,
  pollRequests,
} from "./lib/svc";
import { runWrk, writeRequests } from "./lib/wrk";

const kind = process.argv[2] ?? "mcp";
const seconds = Number(process.argv[3] ?? 10);
const dir = tempDir("svc-profile-");
// PROFILE=off measures the same load without the profiler (for trying a change quickly).
const underProfiler = process.env.PROFILE === "off" ? "" : " (under the profiler)";
const profiled = (profDir: string) =>
  process.env.PROFILE === "off"
    ? undefined
    : [process.execPath, "--cpu-prof", `--cpu-prof-dir=${profDir}`, "run", join(ROOT, "cli/svc.ts")];

if (kind === "export") await profileExports();
else if (kind === "orders") await profileOrders();
else await profileHttp();

async function profileOrders(): Promise<void> {
  const server = await startServe({
    dbPath: join(dir, "svc.db"),
    command: profiled(dir),
    env: { SVC_BANK_POLL_INTERVAL_MS: "200" },
  });
  const drain = setInterval(() => {
    server.lines.length = 0;
  }, 1000);
  const companyId = await createCompany(server);
  const accountId = await createAccount(server, companyId, 5);
  const tokens = await createTokens(server, {
    companyId,
    accountIds: [accountId],
    purpose: "integration",
    count: 10,
  });
  const today = dateInZone(new Date(), "Europe/Moscow");
  const total = 5000;
  let next = 0;
  const started = performance.now();
  const worker = async () => {
    for (let i = next++; i < total; i = next++) {
      const day = new Date(Date.parse(`${today}T00:00:00Z`) - (1 + (i % 365)) * 86_400_000)
        .toISOString()
        .slice(0, 10);
      const res = await orderRequest(server.url, tokens[i % tokens.length]!.token, {
        accountId,
        externalId: `o-${i}`,
        from: day,
        to: day,
      });
      await res.arrayBuffer();
    }
  };
  await Promise.all(Array.from({ length: 32 }, worker));
  const secs = (performance.now() - started) / 1000;
  await Bun.sleep(2000);
  clearInterval(drain);
  await server.stop();
  process.stdout.write(`orders: ${Math.round(total / secs)}/s${underProfiler}\n`);
  summarize(dir, 30, 60);
}

async function profileExports(): Promise<void> {
  const dbPath = join(dir, "svc.db");
  const env = { SVC_BANK_POLL_INTERVAL_MS: "200" };
  const setup = await startServe({ dbPath, env });
  const companyId = await createCompany(setup);
  const accountId = await createAccount(setup, companyId, 5000);
  const [t] = await createTokens(setup, {
    companyId,
    accountIds: [accountId],
    purpose: "integration",
    count: 1,
  });
  const to = dateInZone(new Date(Date.now() - 86_400_000), "Europe/Moscow");
  const from = new Date(Date.parse(`${to}T00:00:00Z`) - 30 * 86_400_000).toISOString().slice(0, 10);
  const id = await orderStatement(setup.url, t!.token, { accountId, externalId: "x", from, to });
  for (;;) {
    const r = await fetch(`${setup.url}/api/v1/integration/statements/${id}`, {
      headers: { authorization: `Bearer ${t!.token}` },
    });
    if (((await r.json()) as { status: string }).status === "ready") break;
    await Bun.sleep(1000);
  }
  await setup.stop();
  for (const format of ["json", "csv", "1c"]) {
    const profDir = join(dir, format);
    mkdirSync(profDir);
    const server = await startServe({ dbPath, env, command: profiled(profDir) });
    const url = `${server.url}/api/v1/integration/statements/${id}/export?format=${format}`;
    for (let i = 0; i < 2; i++) {
      const out = Bun.spawnSync(
        [
          "curl",
          "-sS",
          "-o",
          "/dev/null",
          "-w",
          "%{size_download} %{time_total}",
          "-H",
          `Authorization: Bearer ${t!.token}`,
          url,
        ],
        { stdout: "pipe" },
      ).stdout.toString();
      process.stdout.write(`export ${format}: ${out} (bytes, seconds)${underProfiler}\n`);
    }
    await server.stop();
    process.stdout.write(`\n=== export ${format}\n`);
    summarize(profDir, 25, 40);
  }
}

async function profileHttp(): Promise<void> {
  const server = await startServe({
    dbPath: join(dir, "svc.db"),
    command: profiled(dir),
    env: { SVC_LOG_LEVEL: process.env.SVC_LOG_LEVEL ?? "info" },
    logFile: process.env.LOG_PIPE ? undefined : join(dir, "stdout.log"),
  });
  const drain = setInterval(() => {
    server.lines.length = 0;
  }, 1000);

  const companyId = await createCompany(server);
  const accountId = await createAccount(server, companyId, 5);
  await server.admin("POST", `/bank-accounts/${accountId}/balance/refresh`);
  const host = new URL(server.url).host;
  const file = join(dir, "requests");
  if (kind === "healthz") {
    writeRequests(file, host, [{ method: "GET", path: "/healthz", headers: {} }]);
  } else if (kind === "mcp") {
    const tokens = await createTokens(server, {
      companyId,
      accountIds: [accountId],
      purpose: "mcp",
      count: 50,
    });
    const sessions: string[] = [];
    for (const t of tokens) sessions.push(await mcpSession(`${server.url}/api/v1/mcp`, t.token));
    writeRequests(file, host, agentCallRequests(tokens, sessions, accountId));
  } else {
    const tokens = await createTokens(server, {
      companyId,
      accountIds: [accountId],
      purpose: "integration",
      count: 50,
    });
    const day = dateInZone(new Date(Date.now() - 86_400_000), "Europe/Moscow");
    const ids: string[] = [];
    for (const [i, t] of tokens.entries())
      ids.push(
        await orderStatement(server.url, t.token, { accountId, externalId: `p${i}`, from: day, to: day }),
      );
    await Bun.sleep(500);
    writeRequests(file, host, pollRequests(tokens, ids));
  }
  const r = await runWrk({ url: server.url, requestsFile: file, connections: 32, threads: 2, seconds });
  clearInterval(drain);
  await server.stop();
  process.stdout.write(`${kind}: ${r.rps} req/s p50 ${r.p50_ms} ms p99 ${r.p99_ms} ms${underProfiler}\n`);
  summarize(dir);
}

function summarize(profDir: string, top1 = 35, top2 = 60): void {
  if (process.env.PROFILE === "off") return;
  interface Node {
    id: number;
    callFrame: { functionName: string; url: string; lineNumber: number };
    children?: number[];
  }
  const profFile = readdirSync(profDir).find((f) => f.endsWith(".cpuprofile"));
  if (!profFile) throw new Error(`no .cpuprofile in ${dir}`);
  const prof = JSON.parse(readFileSync(join(profDir, profFile), "utf8")) as {
    nodes: Node[];
    samples: number[];
    timeDeltas: number[];
  };
  const byId = new Map(prof.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of prof.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const label = (n: Node) => {
    const url = n.callFrame.url.replace(`${ROOT}/`, "").replace(/^.*node_modules\//, "nm/");
    return `${n.callFrame.functionName || "(anonymous)"} ${url}:${n.callFrame.lineNumber + 1}`;
  };
  const self = new Map<string, number>();
  const inclusive = new Map<string, number>();
  let total = 0;
  for (let i = 0; i < prof.samples.length; i++) {
    const dt = prof.timeDeltas[i] ?? 0;
    total += dt;
    let node = byId.get(prof.samples[i]!);
    if (!node) continue;
    self.set(label(node), (self.get(label(node)) ?? 0) + dt);
    const seen = new Set<string>();
    for (let id: number | undefined = node.id; id !== undefined; id = parent.get(id)) {
      node = byId.get(id)!;
      const l = label(node);
      if (seen.has(l)) continue;
      seen.add(l);
      inclusive.set(l, (inclusive.get(l) ?? 0) + dt);
    }
  }
  const top = (m: Map<string, number>, n: number) =>
    [...m.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([k, v]) => `${((100 * v) / total).toFixed(1).padStart(5)}%  ${k}`)
      .join("\n");
  process.stdout.write(
    `\nself time (top 35)\n${top(self, top1)}\n\ninclusive time (top 60)\n${top(inclusive, top2)}\n`,
  );
  process.stdout.write(`\nprofile: ${join(profDir, profFile)}\n`);
}
