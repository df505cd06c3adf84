// The threads of long work (an export's pages, a search and its totals) give way to everything
// else: on Linux they are scheduled SCHED_IDLE, so a request arriving while they render takes a
// core from them at once instead of waiting for the end of their time slice. On two cores, two
// export threads, two search threads and the server's own thread took turns: the server's thread
// waited for a core 300-440 ms of every second beside an export and a search loop, and an
// unrelated poll's p99 was 8.5-8.9 ms; with the long work at SCHED_IDLE it waited 40-90 ms and the
// poll's p99 was 5.2-5.8 ms (docs/performance.md). The long work still has every core nobody else
// wants; under a load that keeps every core busy it waits, which is the point.
// Imports are left at normal priority: they hold the write lock chunk by chunk, and a holder that
// waits for a core would hold up every writer.
import { dlopen, FFIType } from "bun:ffi";

/** SVC_LONG_WORK_PRIORITY: `idle`, the threads of long work yield to everything else; `normal`. */
export type LongWorkPriority = "idle" | "normal";

export const LONG_WORK_PRIORITIES: readonly LongWorkPriority[] = ["idle", "normal"];

/** Linux's policy number (sched.h). */
const SCHED_IDLE = 5;
/** glibc's name, then the development name musl's loader also answers to. */
const LIBC_NAMES = ["libc.so.6", "libc.so"];

function openLibc() {
  for (const name of LIBC_NAMES) {
    try {
      return dlopen(name, {
        sched_setscheduler: { args: [FFIType.i32, FFIType.i32, FFIType.ptr], returns: FFIType.i32 },
      });
    } catch {
      // the next name
    }
  }
  return null;
}

/** Whether threads can be given the idle priority here (Linux with a C library to ask). */
export function idlePriorityAvailable(): boolean {
  if (process.platform !== "linux") return false;
  const libc = openLibc();
  libc?.close();
  return libc !== null;
}

/**
 * Gives the calling thread `priority` (call it first thing in a worker thread: threads it starts,
 * such as a PostgreSQL connection's, inherit it). False when it stays as it was.
 */
export function setThisThreadPriority(priority: LongWorkPriority): boolean {
  if (priority === "normal" || process.platform !== "linux") return false;
  const libc = openLibc();
  if (libc === null) return false;
  try {
    // pid 0: the calling thread (Linux schedules threads, not processes); SCHED_IDLE takes priority 0.
    return libc.symbols.sched_setscheduler(0, SCHED_IDLE, new Int32Array(1)) === 0;
  } finally {
    libc.close();
  }
}
