// Runs in its own thread (see search-threads.ts): opens a read-only connection to the server's
// database when told where it is, then runs one search or totals at a time and posts the answer.
import { type LongWorkPriority, setThisThreadPriority } from "../core/thread-priority";
import type { StatementOperation } from "../formats/types";
import type { OperationFilter, TotalsFilter } from "./operation-filter";
import type { OperationTotals } from "./operation-rows";
import { operationTotals, searchOperations } from "./operation-search";
import type { SearchLimits } from "./search-limits";
import { openWorkerConnection, type StoreLocation, type WorkerConnection } from "./worker-connection";

declare const self: Worker;

export type SearchRequest =
  | { kind: "search"; filter: OperationFilter; limits: SearchLimits }
  | { kind: "totals"; filter: TotalsFilter; limits: SearchLimits };

export type SearchWorkerCommand =
  | { open: StoreLocation; priority: LongWorkPriority }
  | { run: SearchRequest };

export type SearchWorkerMessage =
  | { rows: StatementOperation[] }
  | { totals: OperationTotals }
  | { error: { name: string; message: string } };

let location: StoreLocation | null = null;
let connection: WorkerConnection | null = null;

function run(request: SearchRequest): SearchWorkerMessage {
  if (location === null) throw new Error("no database to search");
  connection ??= openWorkerConnection(location, { mode: "read" });
  return request.kind === "search"
    ? { rows: searchOperations(connection.port, request.filter, request.limits) }
    : { totals: operationTotals(connection.port, request.filter, request.limits) };
}

self.onmessage = (event: MessageEvent<SearchWorkerCommand>) => {
  const command = event.data;
  if ("open" in command) {
    location = command.open;
    // Before the connection: its own thread (PostgreSQL's) inherits the priority.
    setThisThreadPriority(command.priority);
    return;
  }
  let answer: SearchWorkerMessage;
  try {
    answer = run(command.run);
  } catch (e) {
    const error = e instanceof Error ? e : new Error(String(e));
    answer = { error: { name: error.name, message: error.message } };
  }
  self.postMessage(answer);
};
