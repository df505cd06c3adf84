// The messages between PgSyncClient (the server's thread) and its worker (sync-worker.ts). Kept
// apart from the worker module, whose top level installs the thread's message handler.

export interface SyncWorkerStart {
  kind: "start";
  url: string;
  /** Per statement, enforced by the server too (statement_timeout). */
  statementTimeoutMs: number;
  connectTimeoutSeconds: number;
  control: SharedArrayBuffer;
  data: SharedArrayBuffer;
  /** Tables whose changes the worker counts (LISTEN on CHANGES_CHANNEL): control[CHANGES_FROM + i]. */
  watch: string[];
  /** default_transaction_read_only for the connection. */
  readOnly: boolean;
}

export interface SyncWorkerQuery {
  kind: "query";
  id: number;
  text: string;
  params: unknown[];
}

/** The previous answer did not fit: here is a buffer large enough. */
export interface SyncWorkerResend {
  kind: "resend";
  id: number;
  data: SharedArrayBuffer;
}

export type SyncWorkerMessage = SyncWorkerStart | SyncWorkerQuery | SyncWorkerResend;

/** What the server's thread reads back. */
export type SyncAnswer =
  | { rows: Record<string, unknown>[]; count: number }
  | { error: { message: string; code: string | null; connection: boolean } };

/** control: [0] the id of the answer written (the server's thread waits on it), [1] its length in
 *  bytes, negative when it needs a larger buffer; [2] 1 while the change listener is connected;
 *  [3 + i] how many changes of watched table i were announced (each listen start counts as one for
 *  every table: changes made while nobody listened are unknown). */
export const ANSWER_ID = 0;
export const ANSWER_LENGTH = 1;
export const LISTENING = 2;
export const CHANGES_FROM = 3;

/** The channel PostgreSQL announces changes of cached tables on (migrations-pg: svc_changed()). */
export const CHANGES_CHANNEL = "svc_changes";
