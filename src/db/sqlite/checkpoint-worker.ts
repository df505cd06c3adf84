// Runs in its own thread (see wal-checkpointer.ts): copies the WAL of the server's database back
// into the database file every interval. PASSIVE never waits for a lock and never blocks the
// server's readers or writer; the copy and its fsync happen here instead of inside a request.
import { Database } from "bun:sqlite";

declare const self: Worker;

export interface CheckpointWorkerStart {
  path: string;
  intervalMs: number;
}

let db: Database | null = null;
let timer: ReturnType<typeof setInterval> | null = null;
/** Reported once when checkpoints start failing and once when they work again, not every tick. */
let failing = false;

function checkpoint(): void {
  db?.query("PRAGMA wal_checkpoint(PASSIVE)").get();
}

self.onmessage = (event: MessageEvent<CheckpointWorkerStart | "stop">) => {
  if (event.data === "stop") {
    if (timer) clearInterval(timer);
    try {
      checkpoint();
    } catch {
      // Already reported by the ticks; stopping goes on.
    } finally {
      db?.close();
      db = null;
      self.postMessage("stopped");
    }
    return;
  }
  // The server has created the file; a wrong path must fail here, not create an empty database.
  db = new Database(event.data.path, { readwrite: true });
  timer = setInterval(() => {
    try {
      checkpoint();
      if (failing) self.postMessage("recovered");
      failing = false;
    } catch (e) {
      if (!failing) self.postMessage({ error: e instanceof Error ? e.message : String(e) });
      failing = true;
    }
  }, event.data.intervalMs);
  self.postMessage("started");
};
