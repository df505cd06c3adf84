// Child processes of the benchmarks: servers that print {"msg":"listening","port":N}, and the
// memory of a process read from /proc.
import { readFileSync, writeFileSync } from "node:fs";
import type { Subprocess } from "bun";

export interface Listener {
  proc: Subprocess<"ignore", "pipe", "pipe">;
  url: string;
  pid: number;
  stop(): Promise<void>;
}

/** Spawns a server and waits for its "listening" JSON line (at most `timeoutMs`). */
export async function spawnListener(
  cmd: string[],
  env: Record<string, string> = {},
  timeoutMs = 10_000,
): Promise<Listener> {
  const proc = Bun.spawn(cmd, {
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", ...env },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const reader = proc.stdout.getReader();
  const decoder = new TextDecoder();
  let buffered = "";
  const deadline = Date.now() + timeoutMs;
  let port: number | null = null;
  while (port === null && Date.now() < deadline) {
    const { done, value } = await reader.read();
    if (done) break;
    buffered += decoder.decode(value, { stream: true });
    for (const line of buffered.split("\n")) {
      if (line.includes('"listening"')) port = (JSON.parse(line) as { port: number }).port;
    }
  }
  if (port === null) {
    proc.kill(9);
    throw new Error(`${cmd.join(" ")} did not start: ${await new Response(proc.stderr).text()}`);
  }
  // Keep draining stdout so that the child never blocks on a full pipe.
  void (async () => {
    for (;;) if ((await reader.read()).done) return;
  })().catch(() => {});
  return {
    proc,
    pid: proc.pid,
    url: `http://127.0.0.1:${port}`,
    async stop() {
      if (proc.exitCode === null) proc.kill("SIGTERM");
      await Promise.race([proc.exited, Bun.sleep(3000)]);
      if (proc.exitCode === null) proc.kill(9);
    },
  };
}

export interface MemoryStatus {
  rssMb: number;
  hwmMb: number;
}

export function memoryOf(pid: number): MemoryStatus {
  const text = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+)`, "m").exec(text)?.[1] ?? 0);
  return { rssMb: kb("VmRSS") / 1024, hwmMb: kb("VmHWM") / 1024 };
}

/** CPU time a process has used so far (user and system), in seconds. */
export function cpuSeconds(pid: number): number {
  // The fields after the command name, which is in parentheses and may hold spaces.
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  // utime and stime (fields 14 and 15 of stat) in clock ticks, 100 a second on Linux.
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** Resets the peak RSS (VmHWM) of a process to its current RSS; false when the kernel refuses. */
export function resetPeak(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, "5");
    return true;
  } catch {
    return false;
  }
}

/** Samples VmRSS every `everyMs` until stopped; returns the largest RSS and the VmHWM seen. */
export function sampleMemory(pid: number, everyMs = 5): { stop(): MemoryStatus } {
  let peakRss = 0;
  const take = () => {
    try {
      peakRss = Math.max(peakRss, memoryOf(pid).rssMb);
    } catch {
      // the process is gone
    }
  };
  take();
  const timer = setInterval(take, everyMs);
  return {
    stop() {
      clearInterval(timer);
      take();
      const hwm = memoryOf(pid).hwmMb;
      return { rssMb: peakRss, hwmMb: hwm };
    },
  };
}
