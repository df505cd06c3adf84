// How Linux schedules this process's threads, read from /proc (a task's stat: field 19 its nice
// value, field 41 its policy).
import { readdirSync, readFileSync } from "node:fs";
import { LOW_PRIORITY_STEP } from "../../src/core/thread-priority";

const SCHED_OTHER = 0;

function statOf(tid: string): string[] | null {
  try {
    const stat = readFileSync(`/proc/self/task/${tid}/stat`, "utf8");
    // The fields after the command's closing parenthesis start at field 3.
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  } catch {
    return null; // the thread ended meanwhile
  }
}

function field(fields: string[] | null, n: number): number | null {
  return fields === null ? null : Number(fields[n - 3]);
}

function mainThreadNice(): number | null {
  return field(statOf(String(process.pid)), 19);
}

/** The ids of this process's threads at the low priority of long work now (nicer than the main
 *  thread by the step; the test may itself run under `nice`). */
export function lowThreads(): string[] {
  const low = Math.min(19, (mainThreadNice() ?? 0) + LOW_PRIORITY_STEP);
  return readdirSync("/proc/self/task").filter((tid) => field(statOf(tid), 19) === low);
}

/** Whether the calling process's main thread is as it started: SCHED_OTHER, its nice untouched. */
export function mainThreadNormal(): boolean {
  return field(statOf(String(process.pid)), 41) === SCHED_OTHER && mainThreadNice() === startNice;
}

const startNice = mainThreadNice();
