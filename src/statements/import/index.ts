// Imports of a bank's own 1C file, parsed and stored where they hold nobody up: a large file in a
// worker thread with its own database connection (threads.ts, worker.ts), a small one (or any, on
// an in-memory database) in the server's thread. Either way the operations are stored in chunks,
// each its own short transaction, so the server's own writes wait at most for one chunk; the
// statement row is written by the server's thread (service.ts) and becomes ready only after the
// last chunk, so a half-stored import is never a ready statement.
import { ApiError, type ErrorCode, type ErrorDetails } from "../../core/errors";
import { StoreUnavailable } from "../../db/sql-port";
import type { StatementOperation } from "../../formats/types";
import type { StatementRepository } from "../repository";
import { readStatementFile, type StatementFile } from "../statement-file";

/**
 * Operations per transaction: what the server's own writes wait for at most. Stored alone, 49,600
 * operations took 11.5 s in one transaction, 12.4 s in chunks of 2,000, 14.2 s in chunks of 500;
 * 1,000 holds the write lock some 0.25 s.
 */
export const IMPORT_CHUNK = 1000;

export interface ImportJob {
  bytes: Uint8Array;
  accountNumber: string;
  currency: string;
}

/** What the file says of its statement: everything but the operations themselves. */
export type ImportSummary = Omit<StatementFile, "operations"> & { operations_count: number };

export interface ParsedImport {
  readonly summary: ImportSummary;
  /**
   * Stores the operations as statement `statementId`'s, a chunk per transaction, each renewing the
   * statement's lease (see ImportLease). Resolves with the stored document kinds.
   */
  store(statementId: string, bankAccountId: string, lease: ImportLease): Promise<string[]>;
  /** Lets the parsed file go without storing it. */
  discard(): void;
}

export interface ImportRunner {
  /** Reads the file; rejects with the API's errors for a file that is refused. */
  parse(job: ImportJob): Promise<ParsedImport>;
}

export function summaryOf(file: StatementFile): ImportSummary {
  const { operations, ...rest } = file;
  return { ...rest, operations_count: operations.length };
}

/**
 * How a chunk renews the statement's lease: until `ms` after now, now being the service's clock at
 * `nowMs` plus the time since (a worker thread has no injected clock of its own).
 */
export interface ImportLease {
  nowMs: number;
  ms: number;
}

/** Stores `ops` chunk by chunk, each chunk with its lease renewal one transaction. */
export async function storeInChunks(
  repo: StatementRepository,
  statementId: string,
  bankAccountId: string,
  ops: StatementOperation[],
  lease: ImportLease,
  between: () => void | Promise<void>,
): Promise<string[]> {
  const kinds = new Set<string>();
  const started = performance.now();
  for (let first = 0; first < ops.length; first += IMPORT_CHUNK) {
    const chunk = ops.slice(first, first + IMPORT_CHUNK);
    const until = lease.nowMs + Math.round(performance.now() - started) + lease.ms;
    for (const kind of repo.storeImportChunk(statementId, bankAccountId, first + 1, chunk, until))
      kinds.add(kind);
    await between();
  }
  return [...kinds];
}

const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Parses and stores in the server's thread, yielding between chunks (small files, ":memory:"). */
export function inlineImports(repo: StatementRepository): ImportRunner {
  return {
    parse: async (job) => {
      const file = readStatementFile(job.bytes, job.accountNumber, job.currency);
      return {
        summary: summaryOf(file),
        store: (statementId, bankAccountId, lease) =>
          storeInChunks(repo, statementId, bankAccountId, file.operations, lease, yieldToEventLoop),
        discard: () => {},
      };
    },
  };
}

/** An error as it crosses from a worker thread: the API's errors keep their code and details. */
export type ImportFailure =
  | { api: { code: ErrorCode; message: string; details?: ErrorDetails; status: number } }
  | { unavailable: string }
  | { internal: string };

export function failureOf(e: unknown): ImportFailure {
  if (e instanceof ApiError) {
    return { api: { code: e.code, message: e.message, details: e.details, status: e.status } };
  }
  if (e instanceof StoreUnavailable) return { unavailable: e.message };
  return { internal: e instanceof Error ? `${e.name}: ${e.message}` : String(e) };
}

export function errorOf(f: ImportFailure): Error {
  if ("api" in f) return new ApiError(f.api.code, f.api.message, f.api.details, undefined, f.api.status);
  if ("unavailable" in f) return new StoreUnavailable(f.unavailable);
  return new Error(`statement import failed: ${f.internal}`);
}
