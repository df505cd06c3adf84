// Running wrk: prebuilt request files for rotate.lua, and the JSON summary it prints.
import { writeFileSync } from "node:fs";
import { join } from "node:path";

export const BENCH_DIR = join(import.meta.dir, "..");

export interface RawRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
}

/** Writes complete HTTP/1.1 requests separated by NUL bytes (what rotate.lua reads). */
export function writeRequests(file: string, host: string, requests: RawRequest[]): void {
  const parts = requests.map((r) => {
    const body = r.body ?? "";
    const lines = [`${r.method} ${r.path} HTTP/1.1`, `Host: ${host}`];
    for (const [k, v] of Object.entries(r.headers)) lines.push(`${k}: ${v}`);
    if (r.body !== undefined) lines.push(`Content-Length: ${Buffer.byteLength(body)}`);
    return `${lines.join("\r\n")}\r\n\r\n${body}`;
  });
  writeFileSync(file, parts.join("\0"));
}

export interface WrkResult {
  requests: number;
  seconds: number;
  rps: number;
  p50_ms: number;
  p90_ms: number;
  p99_ms: number;
  max_ms: number;
  non_2xx: number;
  socket_errors: number;
}

export interface WrkOptions {
  url: string;
  requestsFile: string;
  connections: number;
  threads: number;
  seconds: number;
}

export async function runWrk(o: WrkOptions): Promise<WrkResult> {
  const proc = Bun.spawn(
    [
      "wrk",
      "-t",
      String(o.threads),
      "-c",
      String(o.connections),
      "-d",
      `${o.seconds}s`,
      "--timeout",
      "5s",
      "--latency",
      "-s",
      join(BENCH_DIR, "rotate.lua"),
      o.url,
      "--",
      o.requestsFile,
    ],
    { stdout: "pipe", stderr: "pipe" },
  );
  const [out, err, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  const line = out.split("\n").find((l) => l.startsWith("WRK_JSON "));
  if (code !== 0 || !line) throw new Error(`wrk failed (${code}): ${err}\n${out}`);
  const s = JSON.parse(line.slice("WRK_JSON ".length)) as {
    requests: number;
    duration_us: number;
    errors: { connect: number; read: number; write: number; status: number; timeout: number };
    latency_us: { p50: number; p90: number; p99: number; max: number };
  };
  const seconds = s.duration_us / 1e6;
  const ms = (us: number) => Math.round(us) / 1000;
  return {
    requests: s.requests,
    seconds: Math.round(seconds * 100) / 100,
    rps: Math.round(s.requests / seconds),
    p50_ms: ms(s.latency_us.p50),
    p90_ms: ms(s.latency_us.p90),
    p99_ms: ms(s.latency_us.p99),
    max_ms: ms(s.latency_us.max),
    non_2xx: s.errors.status,
    socket_errors: s.errors.connect + s.errors.read + s.errors.write + s.errors.timeout,
  };
}
