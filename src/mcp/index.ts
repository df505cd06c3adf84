// Wiring of the agent interface: the read-only port, sessions, the sweeper, the tool registry.

import { createHmac, randomBytes } from "node:crypto";
import type { AccessPolicy } from "../auth/access-policy";
import type { Config } from "../config";
import type { Clock } from "../core/clock";
import type { Logger } from "../core/logger";
import type { FleetSchedule } from "../db/fleet-schedule";
import type { CacheChanges, RowCache } from "../db/row-cache";
import type { SearchLimits } from "../db/search-limits";
import type { OperationSearches } from "../db/search-threads";
import type { SqlPort } from "../db/sql-port";
import type { BalanceRow } from "../statements/queries";
import { McpReadModel } from "./read-model";
import { SessionManager, type SessionStore, SessionSweeper, SqlSessionStore } from "./sessions";
import { createToolRegistry } from "./tools";
import type { ToolRegistry } from "./tools/registry";
import { CursorSigner } from "./views";

/**
 * The paging cursors' key: derived from SVC_SECRET_KEY (or the key file beside the database), so
 * every process on the database reads every cursor; without one, a key of this process only.
 */
function cursorKey(secretKey: Uint8Array | null): Uint8Array {
  if (secretKey === null) return randomBytes(32);
  return createHmac("sha256", secretKey).update("svc agent paging cursors").digest();
}

export { agentDispatcher } from "./dispatch";
export { relayRoutes } from "./relay-routes";
export { mcpRoutes } from "./routes";
export type { McpSession, SessionStore } from "./sessions";

export interface McpServices {
  sessionStore: SessionStore;
  sessions: SessionManager;
  sweeper: SessionSweeper;
  tools: ToolRegistry;
  /** What the tools read; the admin pages' operations and coverage read the same. */
  read: McpReadModel;
}

export function createMcpServices(deps: {
  config: Pick<
    Config,
    | "dbPath"
    | "sessionTtlSeconds"
    | "sessionSweepIntervalMs"
    | "balanceStaleSeconds"
    | "secretKey"
    | "timezone"
  >;
  /** The stores' database. */
  port: SqlPort;
  /** The same database as the tools read it: the database refuses writes through it. */
  readPort: SqlPort;
  /** One session sweep per interval for all replicas. */
  fleetSchedule: FleetSchedule;
  /** Other connections' commits, for the sessions and balances kept in memory. */
  changes: CacheChanges;
  balances: RowCache<BalanceRow>;
  access: AccessPolicy;
  clock: Clock;
  logger: Logger;
  sessionStore?: SessionStore;
  /** What one search_operations may cost; SEARCH_LIMITS without it. */
  searchLimits?: SearchLimits;
  /** Where searches run (the store's search threads). */
  searches: OperationSearches;
}): McpServices {
  const { config, clock, logger } = deps;
  const sessionStore = deps.sessionStore ?? new SqlSessionStore(deps.port, deps.changes);
  const sessions = new SessionManager(sessionStore, clock, config.sessionTtlSeconds, logger);
  const read = new McpReadModel(
    deps.readPort,
    deps.balances,
    deps.searchLimits,
    config.timezone,
    deps.searches,
  );
  const tools = createToolRegistry({
    read,
    access: deps.access,
    clock,
    balanceStaleSeconds: config.balanceStaleSeconds,
    timezone: config.timezone,
    cursors: new CursorSigner(cursorKey(config.secretKey)),
  });
  return {
    sessionStore,
    sessions,
    sweeper: new SessionSweeper(sessions, config.sessionSweepIntervalMs, logger, deps.fleetSchedule),
    tools,
    read,
  };
}
