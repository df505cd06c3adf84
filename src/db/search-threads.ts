// Where search_operations' searches and totals run: in worker threads, each with its own read-only
// connection, so that a search of a big account (tens to hundreds of milliseconds of SQLite's or
// PostgreSQL's work) never holds the server's thread, where every other request waits. The threads
// start with the first search and live with the store; a search waits for a free one. An in-memory
// database (no other connection can see it), or no threads asked for: searched in this thread.
import type { LongWorkPriority } from "../core/thread-priority";
import { workerEntry } from "../core/worker-entry";
import type { StatementOperation } from "../formats/types";
import type { OperationFilter, TotalsFilter } from "./operation-filter";
import type { OperationTotals } from "./operation-rows";
import { operationTotals, searchOperations } from "./operation-search";
import { SearchBudgetExceeded, type SearchLimits } from "./search-limits";
import type { SearchRequest, SearchWorkerCommand, SearchWorkerMessage } from "./search-worker";
import { type SqlPort, StoreUnavailable } from "./sql-port";
import type { StoreLocation } from "./worker-connection";

/** The searches of one store, wherever they run. */
export interface OperationSearches {
  /** Stored operations of one account matching the filter, ordered by (doc_date, operation_id). */
  search(f: OperationFilter, limits: SearchLimits): Promise<StatementOperation[]>;
  /** The count and sums of every match in the whole period (see `operationTotals`). */
  totals(f: TotalsFilter, limits: SearchLimits): Promise<OperationTotals>;
  /** Threads started and not ended (0 when searches run here). */
  readonly threads: number;
  /** Ends the threads (a search still running is answered with StoreUnavailable). */
  close(): void;
}

/** The worker's module (an entrypoint of the compiled binary too: see the Makefile). */
const WORKER_MODULE = "src/db/search-worker.ts";

/** Searches in this thread, over `port`. */
export function searchesHere(port: SqlPort): OperationSearches {
  return {
    search: async (f, limits) => searchOperations(port, f, limits),
    totals: async (f, limits) => operationTotals(port, f, limits),
    threads: 0,
    close: () => {},
  };
}

interface Pending {
  request: SearchRequest;
  resolve: (value: StatementOperation[] | OperationTotals) => void;
  reject: (error: Error) => void;
}

/** One thread and the search it runs. */
class SearchThread {
  private readonly worker: Worker;
  running: Pending | null = null;

  constructor(
    location: StoreLocation,
    priority: LongWorkPriority,
    private readonly onFree: (thread: SearchThread) => void,
    private readonly onLost: (thread: SearchThread) => void,
  ) {
    this.worker = new Worker(workerEntry(WORKER_MODULE), { smol: true });
    // A thread waiting for work keeps no process alive (tests, `svc admin`): the server has its own.
    this.worker.unref();
    this.worker.onmessage = (event: MessageEvent<SearchWorkerMessage>) => this.answer(event.data);
    this.worker.onerror = (event) => this.lose(new Error(`search thread failed: ${event.message}`));
    this.worker.postMessage({ open: location, priority } satisfies SearchWorkerCommand);
  }

  run(pending: Pending): void {
    this.running = pending;
    this.worker.postMessage({ run: pending.request });
  }

  terminate(): void {
    this.lose(new StoreUnavailable("the store is closing"));
  }

  private answer(message: SearchWorkerMessage): void {
    const pending = this.running;
    this.running = null;
    if (pending) {
      if ("error" in message) pending.reject(errorOf(message.error));
      else pending.resolve("rows" in message ? message.rows : message.totals);
    }
    this.onFree(this);
  }

  private lose(error: Error): void {
    this.worker.terminate();
    const pending = this.running;
    this.running = null;
    pending?.reject(error);
    this.onLost(this);
  }
}

/** The errors a search may end with, as the tool tells them apart (budget, unavailable, other). */
function errorOf(error: { name: string; message: string }): Error {
  if (error.name === "SearchBudgetExceeded") {
    return new SearchBudgetExceeded(error.message.replace(/^search budget exceeded: /, ""));
  }
  if (error.name === "StoreUnavailable" || error.name === "PgUnavailable")
    return new StoreUnavailable(error.message);
  return new Error(`search failed: ${error.message}`);
}

/** Searches in up to `threads` worker threads reading `location`, scheduled at `priority`. */
export function searchesInThreads(
  location: StoreLocation,
  threads: number,
  priority: LongWorkPriority = "low",
): OperationSearches {
  const idle: SearchThread[] = [];
  const all = new Set<SearchThread>();
  const queue: Pending[] = [];
  let closed = false;

  const onFree = (thread: SearchThread) => {
    const next = queue.shift();
    if (next) thread.run(next);
    else idle.push(thread);
  };
  const onLost = (thread: SearchThread) => {
    all.delete(thread);
    const i = idle.indexOf(thread);
    if (i >= 0) idle.splice(i, 1);
    // A thread lost with searches waiting: another takes them.
    if (!closed && queue.length > 0 && all.size < threads) start();
  };
  const start = () => {
    const thread = new SearchThread(location, priority, onFree, onLost);
    all.add(thread);
    return thread;
  };
  const submit = <T extends StatementOperation[] | OperationTotals>(request: SearchRequest) =>
    new Promise<T>((resolve, reject) => {
      if (closed) {
        reject(new StoreUnavailable("the store is closed"));
        return;
      }
      const pending: Pending = { request, resolve: resolve as Pending["resolve"], reject };
      const thread = idle.pop() ?? (all.size < threads ? start() : null);
      if (thread) thread.run(pending);
      else queue.push(pending);
    });

  return {
    search: (filter, limits) => submit<StatementOperation[]>({ kind: "search", filter, limits }),
    totals: (filter, limits) => submit<OperationTotals>({ kind: "totals", filter, limits }),
    get threads() {
      return all.size;
    },
    close: () => {
      closed = true;
      for (const pending of queue.splice(0)) pending.reject(new StoreUnavailable("the store is closed"));
      for (const thread of [...all]) thread.terminate();
      idle.length = 0;
    },
  };
}
