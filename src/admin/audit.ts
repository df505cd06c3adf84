// The admin side of the audit log: every admin change writes its entry (in the change's own
// transaction where there is one), and the log is read back newest first.
import type { AuditEntry, AuditLog } from "../audit/audit-log";
import { auditLogPage } from "../audit/audit-page";
import type { Clock } from "../core/clock";
import type { AuditLogQueryInput } from "./model";

/** Who made an admin change: the request (or "cli") and the client's address. */
export interface AdminActor {
  requestId?: string | null;
  ip?: string | null;
}

/** What every admin area works with: the clock, the audit of its changes, and one transaction for
 *  a change and its audit entry together. */
export interface AdminAreaDeps {
  clock: Clock;
  audit: AdminAudit;
  atomically: <T>(fn: () => T) => T;
}

export interface AdminAuditDeps {
  clock: Clock;
  audit: AuditLog;
  /** Runs `fn` in one write transaction: a change and its audit entry land together or not at all. */
  atomically: <T>(fn: () => T) => T;
}

export class AdminAudit {
  constructor(private readonly deps: AdminAuditDeps) {}

  /** The audit log, newest first, in pages. */
  page(q: AuditLogQueryInput): { entries: AuditEntry[]; next_cursor: string | null } {
    return auditLogPage(this.deps.audit, q);
  }

  /** Runs a change made by another service (e.g. a statement ordered via the UI) together with its
   *  audit entry, in one transaction. */
  audited<T>(
    action: string,
    actor: AdminActor,
    args: unknown,
    change: () => T,
    targetOf: (result: T) => string,
  ): T {
    return this.deps.atomically(() => {
      const result = change();
      this.record(action, targetOf(result), actor, args);
      return result;
    });
  }

  /** An audit entry for an admin action (a change, or something done outside the services such as
   *  a sign-in); `outcome` an error code when refused. */
  record(action: string, target: string, actor: AdminActor, args?: unknown, outcome = "ok"): void {
    this.deps.audit.write({
      at: this.deps.clock.now(),
      actor: "admin",
      action,
      target,
      arguments: args,
      outcome,
      requestId: actor.requestId ?? null,
      ip: actor.ip ?? null,
    });
  }
}
