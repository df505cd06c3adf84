// How Linux schedules this process's threads, read from /proc (field 41 of a task's stat: its policy).
import { readdirSync, readFileSync } from "node:fs";

const SCHED_IDLE = 5;

function policyOf(tid: string): number | null {
  try {
    const stat = readFileSync(`/proc/self/task/${tid}/stat`, "utf8");
    // The fields after the command's closing parenthesis start at field 3.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return Number(fields[41 - 3]);
  } catch {
    return null; // the thread ended meanwhile
  }
}

/** The ids of this process's threads scheduled SCHED_IDLE now. */
export function idleThreads(): string[] {
  return readdirSync("/proc/self/task").filter((tid) => policyOf(tid) === SCHED_IDLE);
}

/** Whether the calling process's main thread is scheduled as normal (SCHED_OTHER). */
export function mainThreadNormal(): boolean {
  return policyOf(String(process.pid)) === 0;
}
