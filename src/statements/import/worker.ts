// Runs in its own thread (see threads.ts): reads one bank file, answers with what it says of its
// statement (or why it is refused), then, when told the statement's id, stores the operations
// through a connection of its own, a chunk per transaction that also renews the statement's lease,
// and before each next chunk waits until the server's thread has answered (so the server's own
// writes get the lock between chunks, never waiting for the whole file).
// Other connections' commits empty the server's row caches, the lease's included.
import { openWorkerConnection, type StoreLocation, type WorkerConnection } from "../../db/worker-connection";
import type { StatementOperation } from "../../formats/types";
import { StatementRepository } from "../repository";
import { readStatementFile } from "../statement-file";
import {
  failureOf,
  type ImportFailure,
  type ImportJob,
  type ImportLease,
  type ImportSummary,
  storeInChunks,
  summaryOf,
} from ".";

declare const self: Worker;

const WORKER_BUSY_TIMEOUT_MS = 120_000;

export type ImportWorkerCommand =
  | { parse: { store: StoreLocation; job: ImportJob } }
  | { store: { statementId: string; bankAccountId: string; lease: ImportLease } }
  | "next"
  | "stop";

export type ImportWorkerMessage =
  | { parsed: ImportSummary }
  | { chunk: number }
  | { stored: string[] }
  | { failed: ImportFailure }
  | "stopped";

let target: StoreLocation | null = null;
let operations: StatementOperation[] | null = null;
let connection: WorkerConnection | null = null;
let next: (() => void) | null = null;

function post(message: ImportWorkerMessage): void {
  self.postMessage(message);
}

function close(): void {
  operations = null;
  connection?.close();
  connection = null;
}

async function store(statementId: string, bankAccountId: string, lease: ImportLease): Promise<void> {
  const ops = operations;
  if (target === null || ops === null) throw new Error("nothing parsed to store");
  // On SQLite another import's chunks may come first: this one waits for the lock rather than fail.
  connection = openWorkerConnection(target, { mode: "write", busyTimeoutMs: WORKER_BUSY_TIMEOUT_MS });
  const repo = new StatementRepository(connection.port);
  let chunks = 0;
  // After each chunk the server's thread is asked before the next one: it answers once it is free,
  // so a write of its own that waited for the lock goes first instead of waiting for the whole file.
  const kinds = await storeInChunks(repo, statementId, bankAccountId, ops, lease, () => {
    chunks += 1;
    post({ chunk: chunks });
    return new Promise<void>((resolve) => {
      next = resolve;
    });
  });
  close();
  post({ stored: kinds });
}

self.onmessage = (event: MessageEvent<ImportWorkerCommand>) => {
  const command = event.data;
  if (command === "next") {
    const go = next;
    next = null;
    go?.();
    return;
  }
  if (command === "stop") {
    close();
    post("stopped");
    return;
  }
  if ("parse" in command) {
    try {
      target = command.parse.store;
      const { job } = command.parse;
      const file = readStatementFile(job.bytes, job.accountNumber, job.currency);
      operations = file.operations;
      post({ parsed: summaryOf(file) });
    } catch (e) {
      close();
      post({ failed: failureOf(e) });
    }
    return;
  }
  const { statementId, bankAccountId, lease } = command.store;
  store(statementId, bankAccountId, lease).catch((e) => {
    close();
    post({ failed: failureOf(e) });
  });
};
