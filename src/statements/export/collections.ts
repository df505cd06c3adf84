// The full garbage collection after a large export (index.ts), paced. A full collection gives the
// export's garbage back to the system, but it holds the server's thread while it runs: 10-14 ms
// after a 155k-operation export, every other request waiting. Exports one after another would
// stall the server at every end; so at most one collection runs per interval, and an export that
// ends sooner has the next one scheduled for when the interval is over (one timer, however many
// exports end meanwhile). The memory still comes back, at most an interval later.

/** The least time between two full collections. */
const COLLECT_EVERY_MS = 10_000;

export interface CollectionPacerDeps {
  /** Runs a full collection (Bun.gc(true)). */
  collect: () => void;
  /** A monotonic clock, in milliseconds. */
  now: () => number;
  /** Runs `run` after `ms`; the timer must not keep the process alive. */
  later: (run: () => void, ms: number) => void;
  everyMs?: number;
}

export class CollectionPacer {
  private last = Number.NEGATIVE_INFINITY;
  private scheduled = false;
  private readonly everyMs: number;

  constructor(private readonly deps: CollectionPacerDeps) {
    this.everyMs = deps.everyMs ?? COLLECT_EVERY_MS;
  }

  /** A large export ended: collect now, or once the interval since the last collection is over. */
  exportEnded(): void {
    if (this.scheduled) return;
    const wait = this.last + this.everyMs - this.deps.now();
    if (wait <= 0) {
      this.run();
      return;
    }
    this.scheduled = true;
    this.deps.later(() => {
      this.scheduled = false;
      this.run();
    }, wait);
  }

  private run(): void {
    this.last = this.deps.now();
    this.deps.collect();
  }
}

/** The server's own pacer. */
export const exportCollections = new CollectionPacer({
  collect: () => Bun.gc(true),
  now: () => performance.now(),
  later: (run, ms) => setTimeout(run, ms).unref(),
});
