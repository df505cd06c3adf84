// The audit entry of one agent request, for both transports. Audit cannot be skipped: a failed
// write is logged and surfaces as AgentAuditFailed, and the caller answers with an error, not data.
import type { AuditSink } from "../audit/audit-batcher";
import type { Principal } from "../auth/guard";
import type { Logger } from "../core/logger";
import { requestState } from "../http/spine";

export interface AgentAuditFields {
  action: string;
  tool?: string | null;
  arguments?: unknown;
  outcome: string;
  sessionId: string | null;
}

export class AgentAuditFailed extends Error {}

export interface AgentAuditDeps {
  audit: AuditSink;
  logger: Logger;
  now: () => Date;
}

export async function writeAgentAudit(
  deps: AgentAuditDeps,
  transport: "http" | "stdio",
  request: Request,
  principal: Principal,
  f: AgentAuditFields,
): Promise<void> {
  const state = requestState(request);
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
    });
  } catch (e) {
    deps.logger.error("audit write failed", {
      request_id: state.requestId,
      action: f.action,
      error: e instanceof Error ? `${e.name}: ${e.message}` : String(e),
    });
    throw new AgentAuditFailed();
  }
}
