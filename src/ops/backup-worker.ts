// Runs in its own thread (see scheduled-backups.ts): a backup of a large database takes seconds of
// synchronous SQLite work, which must not stop the server's event loop.
import { backupDatabase } from "./backup";

declare const self: Worker;

export interface BackupWorkerRequest {
  source: string;
  target: string;
}
export type BackupWorkerReply = { ok: true; bytes: number } | { ok: false; error: string };

self.onmessage = (event: MessageEvent<BackupWorkerRequest>) => {
  try {
    const { bytes } = backupDatabase(event.data.source, event.data.target);
    self.postMessage({ ok: true, bytes } satisfies BackupWorkerReply);
  } catch (e) {
    self.postMessage({
      ok: false,
      error: e instanceof Error ? e.message : String(e),
    } satisfies BackupWorkerReply);
  }
};
