// Payment imports, their items and the idempotency records of submit calls. Writes that belong
// together (an import with all its items; a submission record with the items it claims) run in
// one synchronous transaction (SQLite: BEGIN IMMEDIATE; PostgreSQL: serializable, run again after a
// conflict), with the audit entry that records them. Portable SQL on the stores' port.

import type { AuditEntryInput, AuditLog } from "../audit/audit-log";
import type { SqlPort, SqlValue } from "../db/sql-port";
import type { PartyColumns } from "../formats/types";

export type ItemStatus = "draft" | "submitting" | "submitted" | "rejected" | "signed_and_paid" | "canceled";
export type SubmissionKind = "import" | "item";

export interface ImportRow {
  id: string;
  api_token_id: string;
  bank_account_id: string;
  file_bytes: number;
  created_at: string;
}

export interface ItemRow extends PartyColumns<"payee"> {
  id: string;
  import_id: string;
  seq: number;
  line: number;
  status: ItemStatus;
  doc_number: string;
  doc_date: string;
  amount: number;
  currency: string;
  purpose: string;
  priority: string | null;
  submission_id: string | null;
  bank_idempotency_key: string | null;
  bank_reference: string | null;
  sign_url: string | null;
  error_code: string | null;
  error_message: string | null;
  next_status_check_at_ms: number | null;
  submitted_at: string | null;
}

export type NewItem = Omit<
  ItemRow,
  | "status"
  | "submission_id"
  | "bank_idempotency_key"
  | "bank_reference"
  | "sign_url"
  | "error_code"
  | "error_message"
  | "next_status_check_at_ms"
  | "submitted_at"
>;

export interface SubmissionRow {
  id: string;
  api_token_id: string;
  external_id: string;
  payload_hash: string;
  kind: SubmissionKind;
  import_id: string;
  item_id: string | null;
  status: "in_progress" | "completed";
  result_json: string | null;
  created_at: string;
  completed_at: string | null;
  lease_until_ms: number;
}

export type BankOutcome =
  | {
      status: "submitted";
      bank_reference: string;
      sign_url: string;
      at: string;
      /** When to ask the bank what became of it; null for banks that do not say. */
      next_status_check_at_ms: number | null;
    }
  | { status: "rejected"; error_code: string; error_message: string; at: string };

/** A submitted item whose fate the bank is asked about. */
export interface StatusCheck {
  id: string;
  import_id: string;
  bank_reference: string | null;
  doc_number: string;
  bank_account_id: string;
}

export type ClaimOutcome =
  | { kind: "existing"; submission: SubmissionRow }
  | { kind: "claimed"; submission: SubmissionRow; items: ItemRow[] };

export class PaymentRepository {
  private readonly importById;
  private readonly itemsOfImport;
  private readonly itemById;
  private readonly insertImportStmt;
  private readonly insertItemStmt;
  private readonly submissionByKey;
  private readonly submissionById;
  private readonly insertSubmissionStmt;
  private readonly claimItemStmt;
  private readonly itemsOfSubmission;
  private readonly finishItemStmt;
  private readonly completeSubmissionStmt;
  private readonly takeLeaseStmt;
  private readonly setLeaseStmt;
  private readonly dueChecksStmt;
  private readonly recentItemsStmt;
  private readonly settleStmt;
  private readonly rescheduleCheckStmt;
  private readonly claimCheckStmt;

  constructor(
    private readonly port: SqlPort,
    private readonly audit: AuditLog,
  ) {
    this.importById = port.prepare<ImportRow, [string]>("SELECT * FROM payment_imports WHERE id = ?");
    this.itemsOfImport = port.prepare<ItemRow, [string]>(
      "SELECT * FROM payment_items WHERE import_id = ? ORDER BY seq",
    );
    this.itemById = port.prepare<ItemRow, [string]>("SELECT * FROM payment_items WHERE id = ?");
    this.insertImportStmt = port.prepareNamed<unknown, Record<string, SqlValue>>(
      `INSERT INTO payment_imports (id, api_token_id, bank_account_id, file_bytes, created_at)
       VALUES ($id, $api_token_id, $bank_account_id, $file_bytes, $created_at)`,
    );
    this.insertItemStmt = port.prepareNamed<unknown, Record<string, SqlValue>>(
      `INSERT INTO payment_items (id, import_id, seq, line, status, doc_number, doc_date, amount, currency, purpose,
         priority, payee_name, payee_inn, payee_kpp, payee_account, payee_bank_name, payee_bank_bik,
         payee_bank_corr_account)
       VALUES ($id, $import_id, $seq, $line, 'draft', $doc_number, $doc_date, $amount, $currency, $purpose,
         $priority, $payee_name, $payee_inn, $payee_kpp, $payee_account, $payee_bank_name, $payee_bank_bik,
         $payee_bank_corr_account)`,
    );
    this.submissionByKey = port.prepare<SubmissionRow, [string, string]>(
      "SELECT * FROM payment_submissions WHERE api_token_id = ? AND external_id = ?",
    );
    this.submissionById = port.prepare<SubmissionRow, [string]>(
      "SELECT * FROM payment_submissions WHERE id = ?",
    );
    this.insertSubmissionStmt = port.prepareNamed<unknown, Record<string, SqlValue>>(
      `INSERT INTO payment_submissions (id, api_token_id, external_id, payload_hash, kind, import_id, item_id, status,
         created_at)
       VALUES ($id, $api_token_id, $external_id, $payload_hash, $kind, $import_id, $item_id, 'in_progress',
         $created_at)`,
    );
    this.claimItemStmt = port.prepare<unknown, [string, string, string]>(
      `UPDATE payment_items SET status = 'submitting', submission_id = ?, bank_idempotency_key = ?
        WHERE id = ? AND status = 'draft'`,
    );
    this.itemsOfSubmission = port.prepare<ItemRow, [string]>(
      "SELECT * FROM payment_items WHERE submission_id = ? ORDER BY import_id, seq",
    );
    this.finishItemStmt = port.prepareNamed<unknown, Record<string, SqlValue>>(
      `UPDATE payment_items SET status = $status, bank_reference = $bank_reference, sign_url = $sign_url,
         error_code = $error_code, error_message = $error_message, submitted_at = $at,
         next_status_check_at_ms = $next_status_check_at_ms
        WHERE id = $id AND status = 'submitting'`,
    );
    this.dueChecksStmt = port.prepare<StatusCheck, [number, number]>(
      `SELECT i.id, i.import_id, i.bank_reference, i.doc_number, p.bank_account_id
         FROM payment_items i JOIN payment_imports p ON p.id = i.import_id
        WHERE i.status = 'submitted' AND i.next_status_check_at_ms <= ?
        ORDER BY i.next_status_check_at_ms LIMIT ?`,
    );
    this.recentItemsStmt = port.prepare<ItemRow & { bank_account_id: string }, [number]>(
      `SELECT i.*, p.bank_account_id FROM payment_items i JOIN payment_imports p ON p.id = i.import_id
        ORDER BY p.created_at DESC, i.import_id, i.seq LIMIT ?`,
    );
    this.settleStmt = port.prepareNamed<unknown, Record<string, SqlValue>>(
      `UPDATE payment_items SET status = $status, error_code = $error_code, error_message = $error_message,
         next_status_check_at_ms = NULL
        WHERE id = $id AND status = 'submitted'`,
    );
    this.rescheduleCheckStmt = port.prepare<unknown, [number, string]>(
      "UPDATE payment_items SET next_status_check_at_ms = ? WHERE id = ? AND status = 'submitted'",
    );
    this.claimCheckStmt = port.prepare<unknown, [number, string, number]>(
      `UPDATE payment_items SET next_status_check_at_ms = ?
        WHERE id = ? AND status = 'submitted' AND next_status_check_at_ms <= ?`,
    );
    this.takeLeaseStmt = port.prepare<unknown, [number, string, number]>(
      `UPDATE payment_submissions SET lease_until_ms = ?
        WHERE id = ? AND status = 'in_progress' AND lease_until_ms <= ?`,
    );
    this.setLeaseStmt = port.prepare<unknown, [number, string]>(
      "UPDATE payment_submissions SET lease_until_ms = ? WHERE id = ?",
    );
    this.completeSubmissionStmt = port.prepare<unknown, [string, string, string]>(
      `UPDATE payment_submissions SET status = 'completed', result_json = ?, completed_at = ?
        WHERE id = ? AND status = 'in_progress'`,
    );
  }

  findImport(id: string): ImportRow | null {
    return this.importById.get(id) ?? null;
  }

  items(importId: string): ItemRow[] {
    return this.itemsOfImport.all(importId);
  }

  findItem(id: string): ItemRow | null {
    return this.itemById.get(id) ?? null;
  }

  /** Stores an import with all its items, and its audit entry, in one transaction. */
  createImport(row: ImportRow, items: NewItem[], audit: AuditEntryInput): void {
    this.port.transaction(() => {
      this.insertImportStmt.run({ ...row });
      for (const item of items) this.insertItemStmt.run({ ...item });
      this.audit.write(audit);
    });
  }

  /** An audit entry that records no change of ours (a refused upload, a replayed or refused submit). */
  writeAudit(entry: AuditEntryInput): void {
    this.audit.write(entry);
  }

  findSubmission(apiTokenId: string, externalId: string): SubmissionRow | null {
    return this.submissionByKey.get(apiTokenId, externalId) ?? null;
  }

  /**
   * Atomically: returns the existing record for (token, external_id), or creates one and moves
   * the given items from draft to submitting under it (each with its bank idempotency key).
   * Items no longer draft are skipped. Committed before any bank call.
   */
  claim(
    s: Omit<SubmissionRow, "status" | "result_json" | "completed_at" | "lease_until_ms">,
    itemIds: string[],
    bankKey: (itemId: string) => string,
  ): ClaimOutcome {
    return this.port.transaction((): ClaimOutcome => {
      const existing = this.submissionByKey.get(s.api_token_id, s.external_id);
      if (existing) return { kind: "existing", submission: existing };
      this.insertSubmissionStmt.run({ ...s });
      for (const id of itemIds) this.claimItemStmt.run(s.id, bankKey(id), id);
      return {
        kind: "claimed",
        submission: this.submissionById.get(s.id)!,
        items: this.itemsOfSubmission.all(s.id),
      };
    });
  }

  /** Items claimed by a submission (any state). */
  claimedItems(submissionId: string): ItemRow[] {
    return this.itemsOfSubmission.all(submissionId);
  }

  /** Records the bank's answer for one item; only an item still submitting changes. */
  finishItem(itemId: string, outcome: BankOutcome): void {
    this.finishItemStmt.run({
      id: itemId,
      status: outcome.status,
      bank_reference: outcome.status === "submitted" ? outcome.bank_reference : null,
      sign_url: outcome.status === "submitted" ? outcome.sign_url : null,
      error_code: outcome.status === "rejected" ? outcome.error_code : null,
      error_message: outcome.status === "rejected" ? outcome.error_message : null,
      next_status_check_at_ms: outcome.status === "submitted" ? outcome.next_status_check_at_ms : null,
      at: outcome.at,
    });
  }

  /** The newest items of every import, with their accounts (for the operator's pages). */
  recentItems(limit: number): (ItemRow & { bank_account_id: string })[] {
    return this.recentItemsStmt.all(limit);
  }

  /** Submitted items whose bank status is due to be asked. */
  dueStatusChecks(nowMs: number, limit: number): StatusCheck[] {
    return this.dueChecksStmt.all(nowMs, limit);
  }

  /** The bank's final word on a submitted item, with its audit entry; false if it had moved on. */
  settleItem(
    itemId: string,
    outcome: {
      status: "signed_and_paid" | "canceled" | "rejected";
      error_code?: string;
      error_message?: string;
    },
    audit: AuditEntryInput,
  ): boolean {
    return this.port.transaction((): boolean => {
      const changed =
        this.settleStmt.run({
          id: itemId,
          status: outcome.status,
          error_code: outcome.error_code ?? null,
          error_message: outcome.error_message ?? null,
        }).changes > 0;
      if (changed) this.audit.write(audit);
      return changed;
    });
  }

  /**
   * Takes the due status check of an item for one poller: moves its next check to `untilMs` if it
   * is still submitted and due at `nowMs` (one statement: of several replicas one gets it). The
   * poller then sets the real next check; if it dies, the check is due again at `untilMs`.
   */
  claimStatusCheck(itemId: string, nowMs: number, untilMs: number): boolean {
    return this.claimCheckStmt.run(untilMs, itemId, nowMs).changes === 1;
  }

  rescheduleStatusCheck(itemId: string, atMs: number): void {
    this.rescheduleCheckStmt.run(atMs, itemId);
  }

  /**
   * Stores the first answer of a submission and its audit entry. Returns the stored answer: the
   * one given, or another request's when that one completed first.
   */
  completeSubmission(id: string, resultJson: string, at: string, audit: AuditEntryInput): string {
    return this.port.transaction((): string => {
      const changed = this.completeSubmissionStmt.run(resultJson, at, id).changes;
      if (changed > 0) this.audit.write(audit);
      return this.submissionById.get(id)?.result_json ?? resultJson;
    });
  }

  /** Submissions whose bank calls were interrupted (a process stopped between claim and
   *  completion, or the bank could not be reached), which no process is sending now. */
  interruptedSubmissions(nowMs: number): SubmissionRow[] {
    return this.port
      .prepare<SubmissionRow, [number]>(
        `SELECT * FROM payment_submissions WHERE status = 'in_progress' AND lease_until_ms <= ?
          ORDER BY created_at`,
      )
      .all(nowMs);
  }

  submission(id: string): SubmissionRow | null {
    return this.submissionById.get(id) ?? null;
  }

  /**
   * Takes the right to send a submission's items until `untilMs`: false while another process (a
   * replica) holds it, or once the submission is completed. A holder that stopped lets it go when
   * the time passes.
   */
  takeLease(id: string, untilMs: number, nowMs: number): boolean {
    return this.takeLeaseStmt.run(untilMs, id, nowMs).changes === 1;
  }

  /** Moves the end of a held lease (before each item's bank call). */
  renewLease(id: string, untilMs: number): void {
    this.setLeaseStmt.run(untilMs, id);
  }

  releaseLease(id: string): void {
    this.renewLease(id, 0);
  }

  /** Lets every lease go (only for the one server of a SQLite file, at its start); how many were held. */
  releaseAllLeases(): number {
    return this.port
      .prepare<unknown, []>("UPDATE payment_submissions SET lease_until_ms = 0 WHERE lease_until_ms > 0")
      .run().changes;
  }
}
