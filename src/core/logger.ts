// Structured JSON logs, one object per line. Callers pass fields, never raw tokens, bodies or

export type LogLevel = "debug" | "info" | "warn" | "error";
// credentials; `redact` is a last line of defence for token-shaped strings in messages.

const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };
const TOKEN_SHAPE = /svc_(live|test)_[0-9A-Za-z]{10,}/g;

export type LogSink = (line: string) => void;

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

function redact(text: string): string {
  return text.replace(TOKEN_SHAPE, (m) => `${m.slice(0, 13)}…`);
}

/**
 * Standard output, written once per event-loop turn rather than once per line: a synchronous
 * write per request was a visible share of the request cost. `flushStdout` writes what is pending
 * at once (before the process exits).
 */
let pending: string[] = [];
let scheduled = false;

export function flushStdout(): void {
  scheduled = false;
  if (pending.length === 0) return;
  const text = `${pending.join("\n")}\n`;
  pending = [];
  process.stdout.write(text);
}

const stdoutSink: LogSink = (line) => {
  pending.push(line);
  if (!scheduled) {
    scheduled = true;
    setImmediate(flushStdout);
  }
};

/** How a thrown value is written in a log line: its class and message, never a body or a secret. */
export function errorText(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

export function createLogger(level: LogLevel, sink: LogSink = stdoutSink): Logger {
  const emit = (lvl: LogLevel, msg: string, fields?: Record<string, unknown>) => {
    if (ORDER[lvl] < ORDER[level]) return;
    sink(redact(JSON.stringify({ ts: new Date().toISOString(), level: lvl, msg, ...fields })));
  };
  return {
    debug: (m, f) => emit("debug", m, f),
    info: (m, f) => emit("info", m, f),
    warn: (m, f) => emit("warn", m, f),
    error: (m, f) => emit("error", m, f),
  };
}

export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };
