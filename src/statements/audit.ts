// The audit entries of a token's statement actions (decisions §19): ordering (`statement.order`),
// importing a file (`statement.import`) and downloading (`statement.export`, with the format).
// An entry names the account by id and, where a number is said at all, masked.
import type { AuditEntryInput } from "../audit/audit-log";
import type { Principal } from "../auth/guard";
import { type ApiError, apiErrorOf } from "../core/errors";
import type { RequestState } from "../http/request-state";

export interface StatementAuditDeps {
  audit: { write(entry: AuditEntryInput): void };
  now: () => Date;
}

export type StatementAction = "statement.order" | "statement.import" | "statement.export";

/**
 * Runs a token's statement action and writes its entry: outcome `created`, `repeat` (an
 * idempotent repeat answered from what is stored), `ok`, or the refusal's error code. A refusal's
 * entry never hides the refusal: if it cannot be written, the refusal is still the answer.
 */
export async function auditedStatementAction<T>(
  deps: StatementAuditDeps,
  who: { principal: Principal; state: RequestState },
  action: StatementAction,
  args: Record<string, unknown>,
  work: () => T | Promise<T>,
  outcomeOf: (result: T) => { target: string | null; outcome: string; arguments?: Record<string, unknown> },
): Promise<T> {
  const entry = (
    target: string | null,
    outcome: string,
    extra?: Record<string, unknown>,
  ): AuditEntryInput => ({
    at: deps.now(),
    actor: "token",
    apiTokenId: who.principal.tokenId,
    action,
    target,
    arguments: { ...args, ...extra },
    outcome,
    durationMs: Math.round(performance.now() - who.state.startedAt),
    requestId: who.state.requestId,
    ip: who.state.clientIp,
  });
  let result: T;
  try {
    result = await work();
  } catch (e) {
    const refusal = apiErrorOf(e);
    try {
      deps.audit.write(entry(targetOf(refusal), refusal?.code ?? "internal_error"));
    } catch {
      // the refusal below is the answer either way
    }
    throw e;
  }
  const done = outcomeOf(result);
  deps.audit.write(entry(done.target, done.outcome, done.arguments));
  return result;
}

/** A refusal about a known statement (a conflict, not ready) names it as the entry's target. */
function targetOf(error: ApiError | null): string | null {
  const id = error?.details?.statement_id;
  return typeof id === "string" ? id : null;
}
