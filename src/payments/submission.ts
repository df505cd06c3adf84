// Submitting payment items to the bank, idempotent and safe across crashes and replicas.
//
// Crash safety of submit. (1) One BEGIN IMMEDIATE transaction stores the idempotency record
// (api_token_id, external_id, payload_hash) as in_progress and moves the claimed items from draft
// to submitting, each with a bank idempotency key (the item id, so it never changes); it commits
// before any bank call. (2) Each item is sent with its key and its answer is stored at once.
// (3) A last transaction stores the answer (the response body) and the audit entry, and marks the
// record completed. A repeat of a completed key replays the stored answer without a bank call.
// A repeat of a key whose record is still in_progress either joins the call running in this
// process or, when none runs (the process stopped mid-submit, or the bank could not be reached),
// re-sends the items still submitting with the SAME bank idempotency key, so the bank dedupes
// them; `resumeInterrupted()` does the same for every such record, without a client's repeat.
// Several replicas: whoever sends a submission's items holds its lease (payment_submissions.
// lease_until_ms, renewed before each item); a repeat arriving at another replica meanwhile waits
// for the stored answer instead of calling the bank, or takes over once the lease has passed (the
// holder stopped). Every item is sent by one process at a time.
import { createHash } from "node:crypto";
import type { AuditEntryInput } from "../audit/audit-log";
import type { Principal } from "../auth/guard";
import type { PaymentOrder } from "../banks/adapter";
import type { BankGateway } from "../banks/gateway";
import { type Clock, newId } from "../core/clock";
import { ApiError } from "../core/errors";
import type { BankAccountRecord } from "../db/repos/accounts";
import type { ItemRow, PaymentRepository, SubmissionKind, SubmissionRow } from "./repository";
import { importView, itemView } from "./views";

/** Who asked, for the audit entries. */
export interface RequestContext {
  requestId?: string | null;
  ip?: string | null;
}

export interface SubmissionDeps {
  clock: Clock;
  repo: PaymentRepository;
  gateway: BankGateway;
  accountOf: (id: string) => BankAccountRecord | null;
  /** How long a submission's lease lasts past each item's bank call (SVC_POLL_LEASE_SECONDS). */
  leaseMs: number;
}

/** What a submission is: of a whole import's drafts or of one item, under the client's key. */
export interface SubmissionInput {
  kind: SubmissionKind;
  importId: string;
  itemId: string | null;
  externalId: string;
  targets: ItemRow[];
}

/** The audit entry of a token's request to the payments API. */
export function tokenAuditEntry(
  clock: Clock,
  principal: Principal,
  ctx: RequestContext,
  e: Pick<AuditEntryInput, "action" | "target" | "arguments" | "outcome">,
): AuditEntryInput {
  return {
    at: clock.now(),
    actor: "token",
    apiTokenId: principal.tokenId,
    requestId: ctx.requestId ?? null,
    ip: ctx.ip ?? null,
    ...e,
  };
}

/** How often a repeat waiting for another replica's submission looks at it again. */
const LEASE_WAIT_MS = 50;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Hash over what a submit sends: the route kind, the import, and the items' ids and contents. */
export function payloadHash(kind: SubmissionKind, importId: string, items: ItemRow[]): string {
  const payload = {
    kind,
    import_id: importId,
    items: items.map((i) => [
      i.id,
      i.doc_number,
      i.doc_date,
      i.amount,
      i.currency,
      i.purpose,
      i.payee_name,
      i.payee_inn,
      i.payee_kpp,
      i.payee_account,
      i.payee_bank_bik,
    ]),
  };
  return createHash("sha256").update(JSON.stringify(payload)).digest("hex");
}

function paymentOrder(item: ItemRow): PaymentOrder {
  return {
    doc_number: item.doc_number,
    doc_date: item.doc_date,
    amount: item.amount,
    currency: item.currency,
    purpose: item.purpose,
    payee: {
      name: item.payee_name,
      inn: item.payee_inn,
      kpp: item.payee_kpp,
      account: item.payee_account,
      bank_bik: item.payee_bank_bik,
    },
  };
}

class BankUnreachable extends Error {}

export class PaymentSubmissions {
  /** Submissions whose bank calls run in this process, by submission id. */
  private readonly inFlight = new Map<string, Promise<string>>();

  constructor(private readonly deps: SubmissionDeps) {}

  private now(): string {
    return this.deps.clock.now().toISOString();
  }

  /** Claims the submission under the client's key and sends it; returns the stored answer. */
  async submit(
    principal: Principal,
    ctx: RequestContext,
    account: BankAccountRecord,
    s: SubmissionInput,
  ): Promise<string> {
    const hash = payloadHash(s.kind, s.importId, s.targets);
    const outcome = this.deps.repo.claim(
      {
        id: newId(),
        api_token_id: principal.tokenId,
        external_id: s.externalId,
        payload_hash: hash,
        kind: s.kind,
        import_id: s.importId,
        item_id: s.itemId,
        created_at: this.now(),
      },
      s.targets.filter((i) => i.status === "draft").map((i) => i.id),
      (itemId) => itemId,
    );
    const action = s.kind === "import" ? "payments.import.submit" : "payments.item.submit";
    const target = s.itemId ?? s.importId;
    if (outcome.kind === "existing") {
      const existing = outcome.submission;
      if (existing.payload_hash !== hash) {
        this.deps.repo.writeAudit(
          tokenAuditEntry(this.deps.clock, principal, ctx, {
            action,
            target,
            arguments: { external_id: s.externalId },
            outcome: "conflict",
          }),
        );
        throw new ApiError("conflict", undefined, { external_id: s.externalId });
      }
      if (existing.status === "completed" && existing.result_json !== null) {
        this.deps.repo.writeAudit(
          tokenAuditEntry(this.deps.clock, principal, ctx, {
            action,
            target,
            arguments: { external_id: s.externalId },
            outcome: "replayed",
          }),
        );
        return existing.result_json;
      }
      return this.drive(
        existing,
        account,
        tokenAuditEntry(this.deps.clock, principal, ctx, { action, target, outcome: "" }),
      );
    }
    return this.drive(
      outcome.submission,
      account,
      tokenAuditEntry(this.deps.clock, principal, ctx, { action, target, outcome: "" }),
    );
  }

  /** Runs (or joins) the bank calls of a submission and completes it; returns the stored answer. */
  private drive(
    submission: SubmissionRow,
    account: BankAccountRecord,
    audit: AuditEntryInput,
  ): Promise<string> {
    const running = this.inFlight.get(submission.id);
    if (running) return running;
    const run = this.sendUnderLease(submission, account, audit).finally(() =>
      this.inFlight.delete(submission.id),
    );
    this.inFlight.set(submission.id, run);
    return run;
  }

  /** Sends once this process holds the lease; the stored answer if another process completes it first. */
  private async sendUnderLease(
    submission: SubmissionRow,
    account: BankAccountRecord,
    audit: AuditEntryInput,
  ): Promise<string> {
    const { repo, clock } = this.deps;
    for (;;) {
      const now = clock.now().getTime();
      if (repo.takeLease(submission.id, now + this.deps.leaseMs, now)) break;
      const current = repo.submission(submission.id);
      if (current?.status === "completed" && current.result_json !== null) return current.result_json;
      await sleep(LEASE_WAIT_MS);
    }
    try {
      return await this.send(submission, account, audit);
    } finally {
      repo.releaseLease(submission.id);
    }
  }

  private async send(
    submission: SubmissionRow,
    account: BankAccountRecord,
    audit: AuditEntryInput,
  ): Promise<string> {
    const adapter = this.deps.gateway.adapterFor(account);
    const ref = this.deps.gateway.refFor(account);
    const counts = { submitted: 0, rejected: 0 };
    let unreachable: { code: string; message: string } | null = null;
    for (const item of this.deps.repo.claimedItems(submission.id)) {
      if (item.status !== "submitting") continue;
      this.deps.repo.renewLease(submission.id, this.deps.clock.now().getTime() + this.deps.leaseMs);
      try {
        const answer = await adapter
          .submitPayment(ref, paymentOrder(item), item.bank_idempotency_key ?? item.id)
          .catch((e: unknown) => {
            throw new BankUnreachable(e instanceof Error ? e.message : String(e), { cause: e });
          });
        if (answer.status === "accepted") {
          this.deps.repo.finishItem(item.id, {
            status: "submitted",
            bank_reference: answer.bank_reference,
            sign_url: answer.sign_url,
            at: this.now(),
            next_status_check_at_ms: adapter.paymentStatus ? this.deps.clock.now().getTime() : null,
          });
          counts.submitted += 1;
        } else {
          this.deps.repo.finishItem(item.id, {
            status: "rejected",
            error_code: answer.error.code,
            error_message: answer.error.message,
            at: this.now(),
          });
          counts.rejected += 1;
        }
      } catch (e) {
        if (!(e instanceof BankUnreachable)) throw e;
        // Outcome unknown: the item stays submitting under its key; a repeat re-sends it.
        const cause = e.cause as { code?: unknown } | undefined;
        unreachable = {
          code: typeof cause?.code === "string" ? cause.code : "bank_unreachable",
          message: e.message,
        };
        break;
      }
    }
    if (unreachable) {
      this.deps.repo.writeAudit({
        ...audit,
        at: this.deps.clock.now(),
        arguments: { external_id: submission.external_id, ...counts },
        outcome: "bank_error",
      });
      throw new ApiError("bank_error", "Банк недоступен; повторите запрос с тем же external_id", {
        bank_code: unreachable.code,
        import_id: submission.import_id,
        retry_with_same_external_id: true,
      });
    }
    const view =
      submission.kind === "import"
        ? importView(this.deps.repo, submission.import_id, account)
        : itemView(this.deps.repo.findItem(submission.item_id!)!);
    return this.deps.repo.completeSubmission(submission.id, JSON.stringify(view), this.now(), {
      ...audit,
      at: this.deps.clock.now(),
      arguments: { external_id: submission.external_id, ...counts },
      outcome: "completed",
    });
  }

  /**
   * Finishes every submission left in_progress (e.g. by a stopped process): items still
   * submitting are re-sent with their original bank idempotency keys. Returns how many ran.
   */
  async resumeInterrupted(): Promise<{ resumed: number; failed: number }> {
    let resumed = 0;
    let failed = 0;
    for (const submission of this.deps.repo.interruptedSubmissions(this.deps.clock.now().getTime())) {
      const row = this.deps.repo.findImport(submission.import_id);
      const account = row ? this.deps.accountOf(row.bank_account_id) : null;
      if (!row || !account) continue;
      const audit: AuditEntryInput = {
        at: this.deps.clock.now(),
        actor: "system",
        apiTokenId: submission.api_token_id,
        action: submission.kind === "import" ? "payments.import.submit" : "payments.item.submit",
        target: submission.item_id ?? submission.import_id,
        outcome: "",
      };
      try {
        await this.drive(submission, account, audit);
        resumed += 1;
      } catch {
        failed += 1;
      }
    }
    return { resumed, failed };
  }
}
