// Runs in its own thread (see threads.ts): renders every `stride`-th page of one export,
// starting at page `first`, through its own read-only connection (to the SQLite file or the
// PostgreSQL database), and posts each page's bytes. At most `ahead` pages wait unread by the
// server; each one read is acknowledged ("more"). Between pages no statement is open, so "stop"
// can close the connection cleanly at any time.
import { RequestArrivals } from "../../core/request-arrivals";
import { type LongWorkPriority, setThisThreadPriority } from "../../core/thread-priority";
import { openWorkerConnection, type StoreLocation, type WorkerConnection } from "../../db/worker-connection";
import { type ExportJob, type PageRenderer, pageRenderer } from ".";

declare const self: Worker;

export interface ExportWorkerStart {
  store: StoreLocation;
  priority: LongWorkPriority;
  /**
   * Given at `low` only: the server's count of requests and its value when the export began. The
   * thread renders at normal priority until another request arrives, then at `low`; null: at
   * `priority` from the start.
   */
  arrivals: { buffer: SharedArrayBuffer; atStart: number } | null;
  job: ExportJob;
  first: number;
  stride: number;
  pages: number;
  ahead: number;
}

export type ExportWorkerCommand = { start: ExportWorkerStart } | "more" | "stop";
/** A page's bytes, a failure, or the answer to "stop". */
export type ExportWorkerMessage = Uint8Array | { error: string } | "stopped";

let db: WorkerConnection | null = null;
let render: PageRenderer | null = null;
let next = 0;
let stride = 1;
let pages = 0;
let credit = 0;
/** Set while the thread waits for another request before it lowers its priority. */
let lowerOnArrival: { arrivals: RequestArrivals; atStart: number } | null = null;

function close(): void {
  render = null;
  db?.close();
  db = null;
}

function pump(): void {
  while (render && credit > 0 && next < pages) {
    if (lowerOnArrival && lowerOnArrival.arrivals.seen() !== lowerOnArrival.atStart) {
      lowerOnArrival = null;
      setThisThreadPriority("low");
    }
    let bytes: Uint8Array;
    try {
      bytes = render(next);
    } catch (e) {
      close();
      self.postMessage({ error: e instanceof Error ? e.message : String(e) } satisfies ExportWorkerMessage);
      return;
    }
    next += stride;
    credit -= 1;
    // Handed over, not copied (an empty page has no buffer of its own to hand over).
    self.postMessage(
      bytes satisfies ExportWorkerMessage,
      bytes.byteLength > 0 ? [bytes.buffer as ArrayBuffer] : [],
    );
  }
  if (next >= pages) close();
}

self.onmessage = (event: MessageEvent<ExportWorkerCommand>) => {
  const command = event.data;
  if (command === "stop") {
    close();
    self.postMessage("stopped" satisfies ExportWorkerMessage);
    return;
  }
  if (command === "more") {
    credit += 1;
    pump();
    return;
  }
  const start = command.start;
  if (start.arrivals) {
    lowerOnArrival = {
      arrivals: new RequestArrivals(start.arrivals.buffer),
      atStart: start.arrivals.atStart,
    };
  } else {
    // Before the connection: its own thread (PostgreSQL's) inherits the priority.
    setThisThreadPriority(start.priority);
  }
  try {
    // The same guarantees as the agents' connection: the database refuses writes through it.
    db = openWorkerConnection(start.store, { mode: "read" });
    render = pageRenderer(db.exportReads(), start.job);
  } catch (e) {
    close();
    self.postMessage({ error: e instanceof Error ? e.message : String(e) } satisfies ExportWorkerMessage);
    return;
  }
  next = start.first;
  stride = start.stride;
  pages = start.pages;
  credit = start.ahead;
  pump();
};
