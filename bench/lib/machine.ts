// What the benchmarks ran on.
import { readFileSync } from "node:fs";
import { cpus, loadavg, release, totalmem } from "node:os";

export interface Machine {
  cpu_model: string;
  cores: number;
  memory_gb: number;
  os: string;
  kernel: string;
  bun: string;
  node: string;
  wrk: string;
  date: string;
  /** 1-minute load average when the run started: other work on the machine skews every number. */
  load_average_at_start: number;
}

function firstLine(cmd: string[]): string {
  try {
    const r = Bun.spawnSync(cmd, { stdout: "pipe", stderr: "pipe" });
    return `${r.stdout.toString()}${r.stderr.toString()}`.split("\n")[0]?.trim() ?? "unknown";
  } catch {
    return "unknown";
  }
}

export function describeMachine(): Machine {
  let os = "unknown";
  try {
    os = /^PRETTY_NAME="?([^"\n]*)"?/m.exec(readFileSync("/etc/os-release", "utf8"))?.[1] ?? os;
  } catch {
    // not Linux
  }
  return {
    cpu_model: cpus()[0]?.model ?? "unknown",
    cores: cpus().length,
    memory_gb: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    os,
    kernel: release(),
    bun: Bun.version,
    node: firstLine(["node", "--version"]),
    wrk: firstLine(["wrk", "--version"]).replace(/ \[.*$/, ""),
    date: new Date().toISOString(),
    load_average_at_start: Math.round(loadavg()[0]! * 100) / 100,
  };
}
