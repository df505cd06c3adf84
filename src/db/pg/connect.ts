// Connections to the PostgreSQL store (SVC_DATABASE_URL) through postgres.js.
import postgres, { type Sql } from "postgres";

/** How long a connection attempt may take before the caller hears that the server is unreachable. */
const CONNECT_TIMEOUT_SECONDS = 10;

/** The database's address for messages and logs: user, host, port and name; never the password
 *  nor the query string (which may carry one). */
export function describeDatabaseUrl(raw: string): string {
  const url = new URL(raw);
  const user = url.username === "" ? "" : `${decodeURIComponent(url.username)}@`;
  return `postgres://${user}${url.host}${url.pathname}`;
}

export function connectPostgres(url: string, options: { max?: number } = {}): Sql {
  return postgres(url, {
    max: options.max ?? 10,
    connect_timeout: CONNECT_TIMEOUT_SECONDS,
    // NOTICEs (e.g. "schema already exists, skipping") are not the operator's business.
    onnotice: () => {},
    connection: { application_name: "svc" },
  });
}

/** PostgreSQL could not be reached or refused svc: the message names the database, not its secret. */
export class DatabaseUnavailable extends Error {
  override name = "DatabaseUnavailable";
  constructor(url: string, cause: unknown) {
    super(`PostgreSQL ${describeDatabaseUrl(url)}: ${reasonOf(cause)}`);
  }
}

function reasonOf(cause: unknown): string {
  if (!(cause instanceof Error)) return String(cause);
  const code = (cause as { code?: string }).code;
  if (code === "CONNECT_TIMEOUT") return `no answer within ${CONNECT_TIMEOUT_SECONDS} s`;
  if (code === "ECONNREFUSED") return "connection refused (is the server running, and on this port?)";
  return cause.message;
}

/** True for the failures of reaching the server (as opposed to an SQL error it answered with). */
export function isConnectionFailure(e: unknown): boolean {
  const code = (e as { code?: string } | null)?.code ?? "";
  return (
    code === "CONNECT_TIMEOUT" ||
    code === "CONNECTION_CLOSED" ||
    code === "CONNECTION_ENDED" ||
    code === "CONNECTION_DESTROYED" ||
    /^E[A-Z]+$/.test(code) || // the system's: ECONNREFUSED, ENOTFOUND, EHOSTUNREACH, ECONNRESET…
    code === "28P01" || // password authentication failed
    code === "28000" || // no pg_hba.conf entry / role not allowed
    code === "3D000" // database does not exist
  );
}
