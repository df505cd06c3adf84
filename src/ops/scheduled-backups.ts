// Backups every SVC_BACKUP_INTERVAL_MINUTES into SVC_BACKUP_DIR, keeping the newest
// SVC_BACKUP_KEEP. Each backup runs in a worker thread; a failed one is logged and retried at the
// next interval, never stopping the server.
import { readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { Clock } from "../core/clock";
import type { Logger } from "../core/logger";
import { workerEntry } from "../core/worker-entry";
import type { BackupWorkerReply, BackupWorkerRequest } from "./backup-worker";

const NAME = /^svc-\d{8}T\d{6}Z\.db$/;

/** `svc-20261124T093000Z.db`: sorts by time as text. */
export function backupFileName(at: Date): string {
  return `svc-${at
    .toISOString()
    .replace(/[-:]/g, "")
    .replace(/\.\d{3}Z$/, "Z")}.db`;
}

export interface ScheduledBackupsOptions {
  dbPath: string;
  dir: string;
  intervalMinutes: number;
  keep: number;
  clock: Clock;
  logger: Logger;
}

export class ScheduledBackups {
  readonly name = "scheduled-backups";
  private timer: ReturnType<typeof setInterval> | null = null;
  private running: Promise<void> | null = null;

  constructor(private readonly o: ScheduledBackupsOptions) {}

  start(): void {
    this.timer = setInterval(() => void this.runOnce(), this.o.intervalMinutes * 60_000);
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
  }

  /** One backup now, then the oldest ones beyond `keep` are deleted. */
  runOnce(): Promise<void> {
    this.running ??= this.backup().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  private async backup(): Promise<void> {
    const target = join(this.o.dir, backupFileName(this.o.clock.now()));
    const reply = await inWorker({ source: this.o.dbPath, target });
    if (!reply.ok) {
      this.o.logger.error("scheduled backup failed", { file: target, error: reply.error });
      return;
    }
    this.o.logger.info("backup written", { file: target, bytes: reply.bytes });
    const old = readdirSync(this.o.dir)
      .filter((f) => NAME.test(f))
      .sort()
      .reverse()
      .slice(this.o.keep);
    for (const f of old) rmSync(join(this.o.dir, f), { force: true });
  }
}

function inWorker(request: BackupWorkerRequest): Promise<BackupWorkerReply> {
  return new Promise((resolve) => {
    const worker = new Worker(workerEntry("src/ops/backup-worker.ts"), { smol: true });
    const done = (reply: BackupWorkerReply) => {
      worker.terminate();
      resolve(reply);
    };
    worker.onmessage = (event: MessageEvent<BackupWorkerReply>) => done(event.data);
    worker.onerror = (event) => done({ ok: false, error: event.message });
    worker.postMessage(request);
  });
}
