// The audit entry of one agent request, for both transports. Audit cannot be skipped: a failed
// write is logged and surfaces as AgentAuditFailed, and the caller answers with an error, not data.
import type { AuditSink } from "../audit/audit-batcher";
import type { Principal } from "../auth/guard";
import { errorText, type Logger } from "../core/logger";
import type { Metrics } from "../core/metrics";
import type { RequestState } from "../http/request-state";

export interface AgentAuditFields {
  action: string;
  tool?: string | null;
  arguments?: unknown;
  outcome: string;
  sessionId: string | null;
  /** The protocol revision the request was made in; session-based requests are 2025-11-25's family. */
  revision?: string;
}

export class AgentAuditFailed extends Error {}

export interface AgentAuditDeps {
  audit: AuditSink;
  logger: Logger;
  now: () => Date;
  metrics?: Metrics;
}

/** The metric's `tool` label: the tool or method, bounded (notification names are the client's). */
function metricTool(action: string): string {
  return action.startsWith("mcp.notification.") ? "notification" : action.slice(4);
}

export async function writeAgentAudit(
  deps: AgentAuditDeps,
  transport: "http" | "stdio",
  state: RequestState,
  principal: Principal,
  f: AgentAuditFields,
): Promise<void> {
  try {
    await deps.audit.write({
      at: deps.now(),
      actor: "token",
      apiTokenId: principal.tokenId,
      mcpSessionId: f.sessionId,
      action: f.action,
      tool: f.tool ?? null,
      arguments: f.arguments,
      outcome: f.outcome,
      durationMs: Math.round(performance.now() - state.startedAt),
      requestId: state.requestId,
      ip: state.clientIp,
      transport,
      protocolRevision: f.revision ?? "2025-11-25",
    });
    deps.metrics?.agentCall(metricTool(f.action), f.outcome, f.revision ?? "2025-11-25");
  } catch (e) {
    deps.logger.error("audit write failed", {
      request_id: state.requestId,
      action: f.action,
      error: errorText(e),
    });
    deps.metrics?.agentCall(metricTool(f.action), "audit_failed", f.revision ?? "2025-11-25");
    throw new AgentAuditFailed();
  }
}
