// Jobs that must run once per interval for the whole fleet, not once per replica (the session
// sweeper, the balance refresher, audit retention). Each replica's timer asks before running; the
// one whose claim moves the job's next run (one statement, atomic on either store) runs it, the
// others skip that interval. With one server (SQLite) it always wins: one write per interval.
import type { Clock } from "../core/clock";
import { errorText, type Logger } from "../core/logger";
import type { SqlPort } from "./sql-port";

export class FleetSchedule {
  private readonly claimStmt;

  constructor(
    port: SqlPort,
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {
    this.claimStmt = port.prepare<unknown, [string, number, number]>(
      `INSERT INTO svc_jobs (name, next_run_ms) VALUES (?, ?)
       ON CONFLICT (name) DO UPDATE SET next_run_ms = excluded.next_run_ms WHERE svc_jobs.next_run_ms <= ?`,
    );
  }

  /** Whether this replica runs `job` now; false while another has it for this interval, and when
   *  the database cannot be asked (the next interval tries again). */
  claim(job: string, intervalMs: number): boolean {
    const now = this.clock.now().getTime();
    try {
      return this.claimStmt.run(job, now + intervalMs, now).changes === 1;
    } catch (e) {
      this.logger.warn("job schedule unavailable", {
        job,
        error: e instanceof Error ? e.message : String(e),
      });
      return false;
    }
  }
}

/** A timer that runs `run` every `intervalMs` when this replica wins the interval (no schedule:
 *  every time). */
export function fleetInterval(
  schedule: FleetSchedule | null,
  job: string,
  intervalMs: number,
  run: () => void,
): ReturnType<typeof setInterval> {
  return setInterval(() => {
    if (schedule === null || schedule.claim(job, intervalMs)) run();
  }, intervalMs);
}

/**
 * A job that runs in batches once per interval for the whole fleet (audit retention, the OAuth
 * sweep): `start` schedules it (and, with `runAtStart`, runs it at once when this replica may),
 * `runOnce` runs it now unless it is running already, a failure is logged and counts as nothing
 * done, and `stop` waits for a run in progress, which looks at `stopped` between its batches.
 */
export abstract class FleetJob {
  abstract readonly name: string;
  private timer: ReturnType<typeof setInterval> | null = null;
  private running: Promise<number> | null = null;
  protected stopped = false;

  constructor(
    protected readonly logger: Logger,
    private readonly schedule: FleetSchedule | null,
    private readonly intervalMs: number,
    private readonly runAtStart = false,
  ) {}

  /** One run: resolves with the rows it handled. */
  protected abstract work(): Promise<number>;

  start(): void {
    this.stopped = false;
    if (this.timer) return;
    if (this.runAtStart && (this.schedule === null || this.schedule.claim(this.name, this.intervalMs)))
      void this.runOnce();
    this.timer = fleetInterval(this.schedule, this.name, this.intervalMs, () => void this.runOnce());
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
  }

  runOnce(): Promise<number> {
    this.running ??= this.work()
      .catch((e) => {
        this.logger.error(`${this.name} failed`, { error: errorText(e) });
        return 0;
      })
      .finally(() => {
        this.running = null;
      });
    return this.running;
  }
}

/** Lets the event loop answer requests between two batches of a job. */
export function betweenBatches(): Promise<void> {
  return new Promise<void>((resolve) => setTimeout(resolve, 0));
}
