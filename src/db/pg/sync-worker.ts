// The thread behind PgSyncClient (sync-client.ts): one postgres.js connection; each request from
// the server's thread arrives as a message, its answer goes back through shared memory (the
// server's thread waits on it with Atomics.wait and cannot take messages meanwhile).
import { serialize } from "bun:jsc";
import postgres from "postgres";
import {
  ANSWER_ID,
  ANSWER_LENGTH,
  CHANGES_CHANNEL,
  CHANGES_FROM,
  LISTENING,
  type SyncAnswer,
  type SyncWorkerMessage,
  type SyncWorkerStart,
} from "./sync-protocol";

declare const self: Worker;

let sql: postgres.Sql | null = null;
let control: Int32Array;
let data: Uint8Array;
let pending: { id: number; bytes: Uint8Array } | null = null;

// 64-bit integers arrive as numbers, as bun:sqlite gives them, and only while exact; booleans as
// 1 and 0, as SQLite stores them: the stores read rows of one shape from either database.
const exactNumber = (text: string) => {
  const n = Number(text);
  if (!Number.isSafeInteger(n)) throw new Error(`integer ${text} is beyond 2^53: not exact as a number`);
  return n;
};

function connect(start: SyncWorkerStart): postgres.Sql {
  return postgres(start.url, {
    max: 1, // one connection: the server's thread sends one statement at a time, BEGIN and COMMIT included
    connect_timeout: start.connectTimeoutSeconds,
    idle_timeout: 0,
    onnotice: () => {},
    connection: {
      application_name: "svc",
      statement_timeout: start.statementTimeoutMs,
      ...(start.readOnly ? { default_transaction_read_only: true } : {}),
    },
    types: {
      int8: { to: 20, from: [20], serialize: (v: number) => String(v), parse: exactNumber },
      bool: {
        to: 16,
        from: [16],
        serialize: (v: unknown) => (v ? "t" : "f"),
        parse: (v: string) => (v === "t" ? 1 : 0),
      },
    },
  });
}

function answer(id: number, value: SyncAnswer): void {
  const bytes = new Uint8Array(serialize(value));
  if (bytes.length > data.length) {
    pending = { id, bytes };
    Atomics.store(control, ANSWER_LENGTH, -bytes.length);
  } else {
    data.set(bytes, 0);
    Atomics.store(control, ANSWER_LENGTH, bytes.length);
  }
  Atomics.store(control, ANSWER_ID, id);
  Atomics.notify(control, ANSWER_ID);
}

const CONNECTION_CODES = new Set([
  "CONNECT_TIMEOUT",
  "CONNECTION_CLOSED",
  "CONNECTION_ENDED",
  "CONNECTION_DESTROYED",
]);

/** How long to wait before listening again after the listener could not connect. */
const LISTEN_RETRY_MS = 1000;

/**
 * Counts the changes PostgreSQL announces for the watched tables, on a connection of its own.
 * postgres.js listens again by itself after a dropped connection; while none is up, LISTENING
 * is 0 and the server's thread keeps no rows.
 */
function watchChanges(start: SyncWorkerStart): void {
  const everyTable = () => {
    for (let i = 0; i < start.watch.length; i++) Atomics.add(control, CHANGES_FROM + i, 1);
  };
  const listener = postgres(start.url, {
    max: 1,
    connect_timeout: start.connectTimeoutSeconds,
    onnotice: () => {},
    connection: { application_name: "svc-changes" },
    onclose: () => Atomics.store(control, LISTENING, 0),
  });
  const listen = () =>
    listener
      .listen(
        CHANGES_CHANNEL,
        (table) => {
          const i = start.watch.indexOf(table);
          if (i >= 0) Atomics.add(control, CHANGES_FROM + i, 1);
        },
        () => {
          everyTable();
          Atomics.store(control, LISTENING, 1);
        },
      )
      .catch(() => setTimeout(listen, LISTEN_RETRY_MS));
  listen();
}

self.onmessage = async (event: MessageEvent<SyncWorkerMessage>) => {
  const m = event.data;
  if (m.kind === "start") {
    control = new Int32Array(m.control);
    data = new Uint8Array(m.data);
    sql = connect(m);
    if (m.watch.length > 0) watchChanges(m);
    return;
  }
  if (m.kind === "resend") {
    data = new Uint8Array(m.data);
    const bytes = pending?.id === m.id ? pending.bytes : new Uint8Array(0);
    pending = null;
    data.set(bytes, 0);
    Atomics.store(control, ANSWER_LENGTH, bytes.length);
    Atomics.store(control, ANSWER_ID, m.id);
    Atomics.notify(control, ANSWER_ID);
    return;
  }
  try {
    const result = await sql!.unsafe(m.text, m.params as postgres.ParameterOrJSON<never>[], {
      prepare: true,
    });
    answer(m.id, { rows: [...result] as Record<string, unknown>[], count: result.count ?? 0 });
  } catch (e) {
    const code = (e as { code?: string }).code ?? null;
    answer(m.id, {
      error: {
        message: e instanceof Error ? e.message : String(e),
        code,
        connection: code !== null && (CONNECTION_CODES.has(code) || /^E[A-Z]+$/.test(code)),
      },
    });
  }
};
