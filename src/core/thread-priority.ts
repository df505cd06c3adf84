// The threads of long work (an export's pages, a search and its totals) give way to the server's
// thread: on Linux they run 10 nice steps below it (nice 10 beside a server at 0), so a request
// that wakes the server's thread while they render takes a core from them at once instead of
// waiting for the end of their time slice (SQLite's export threads only once somebody else's
// request has come: see statements/export/threads.ts). On
// two cores, two export threads, two search threads and the server's own thread took turns: an
// unrelated poll's p99 beside an export and a search loop was 8.1-10.8 ms with them at normal
// priority and 4.9-6.8 ms at nice 10 (docs/performance.md), with as many exports and searches done.
// Not SCHED_IDLE, which gave a little more (5.3-5.7 ms): an idle thread has almost no share of a
// core that any other program wants, so on a machine kept busy by something else (the test suite
// on two cores did it) an export or a search waited until it timed out. At nice 10 a thread still
// has a tenth of a core beside each program that wants one whole.
// Imports are left at normal priority: they hold the write lock chunk by chunk, and a holder that
// waits for a core would hold up every writer.
import { dlopen, FFIType } from "bun:ffi";

/** SVC_LONG_WORK_PRIORITY: `low`, the threads of long work give way to the server's; `normal`. */
export type LongWorkPriority = "low" | "normal";

export const LONG_WORK_PRIORITIES: readonly LongWorkPriority[] = ["low", "normal"];

/** How much nicer than the server's thread a thread of long work is at `low` (the `nice`
 *  command's own default step). */
export const LOW_PRIORITY_STEP = 10;
/** The nicest a thread can be. */
const MAX_NICE = 19;
/** setpriority's `which` for a process, which on Linux with `who` 0 is the calling thread. */
const PRIO_PROCESS = 0;
/** glibc's name, then the development name musl's loader also answers to. */
const LIBC_NAMES = ["libc.so.6", "libc.so"];

function openLibc() {
  for (const name of LIBC_NAMES) {
    try {
      return dlopen(name, {
        getpriority: { args: [FFIType.i32, FFIType.u32], returns: FFIType.i32 },
        setpriority: { args: [FFIType.i32, FFIType.u32, FFIType.i32], returns: FFIType.i32 },
      });
    } catch {
      // the next name
    }
  }
  return null;
}

/** Whether threads can be given the low priority here (Linux with a C library to ask). */
export function lowPriorityAvailable(): boolean {
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
  // Elsewhere than on Linux, setpriority would lower the whole process, the server's thread too.
  if (priority === "normal" || process.platform !== "linux") return false;
  const libc = openLibc();
  if (libc === null) return false;
  try {
    // Linux keeps a nice value per thread: `who` 0 is the calling thread, not the process. A new
    // thread starts at its creator's value: the server's (whatever `nice` it was started with).
    const nice = Math.min(MAX_NICE, libc.symbols.getpriority(PRIO_PROCESS, 0) + LOW_PRIORITY_STEP);
    return libc.symbols.setpriority(PRIO_PROCESS, 0, nice) === 0;
  } finally {
    libc.close();
  }
}
