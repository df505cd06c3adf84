// Payment imports: upload a 1C payment file as an import of draft items, read it back, submit
// all drafts or one item to the bank (submission.ts: idempotent, safe across crashes and
// replicas). Knows nothing of HTTP: takes a principal and plain input, returns views or throws
// ApiError.
import type { AccessPolicy } from "../auth/access-policy";
import type { Principal } from "../auth/guard";
import { newId } from "../core/clock";
import { ApiError } from "../core/errors";
import { checkedExternalId } from "../core/text";
import { maskAccountNumber } from "../formats/mask";
import type { PaymentImportView, PaymentItemView } from "./model";
import { readPaymentFile } from "./onec-import";
import { PaymentSubmissions, type RequestContext, type SubmissionDeps, tokenAuditEntry } from "./submission";
import { importView, itemView, type OperatorPaymentView } from "./views";

export interface PaymentServiceDeps extends SubmissionDeps {
  access: AccessPolicy;
}

export class PaymentService {
  private readonly submissions: PaymentSubmissions;

  constructor(private readonly deps: PaymentServiceDeps) {
    this.submissions = new PaymentSubmissions(deps);
  }

  private now(): string {
    return this.deps.clock.now().toISOString();
  }

  /** POST /imports: validates the file, then stores the import with its draft items. */
  upload(
    principal: Principal,
    input: { bank_account_id: string; file: Uint8Array; filename?: string },
    ctx: RequestContext = {},
  ): PaymentImportView {
    const account = this.deps.access.account(principal, input.bank_account_id, "send_payments");
    const file = readPaymentFile(input.file);

    const mismatch =
      file.account.value !== account.accountNumber
        ? { line: file.account.line, field: "РасчСчет" }
        : file.payments
            .filter((p) => p.payer_account !== account.accountNumber)
            .map((p) => ({ line: p.payer_account_line, field: "ПлательщикСчет" }))[0];
    if (mismatch) {
      this.deps.repo.writeAudit(
        tokenAuditEntry(this.deps.clock, principal, ctx, {
          action: "payments.import.upload",
          target: account.id,
          arguments: { bank_account_id: account.id, file_bytes: input.file.byteLength },
          outcome: "account_mismatch",
        }),
      );
      throw new ApiError("account_mismatch", undefined, {
        ...mismatch,
        bank_account_id: account.id,
        account_masked: maskAccountNumber(account.accountNumber),
      });
    }

    const importId = newId();
    const createdAt = this.now();
    const items = file.payments.map((p, i) => ({
      id: newId(),
      import_id: importId,
      seq: i + 1,
      line: p.line,
      doc_number: p.doc_number,
      doc_date: p.doc_date,
      amount: p.amount,
      currency: account.currency,
      purpose: p.purpose,
      priority: p.priority,
      payee_name: p.payee.name,
      payee_inn: p.payee.inn,
      payee_kpp: p.payee.kpp,
      payee_account: p.payee.account,
      payee_bank_name: p.payee.bank_name,
      payee_bank_bik: p.payee.bank_bik,
      payee_bank_corr_account: p.payee.bank_corr_account,
    }));
    this.deps.repo.createImport(
      {
        id: importId,
        api_token_id: principal.tokenId,
        bank_account_id: account.id,
        file_bytes: input.file.byteLength,
        created_at: createdAt,
      },
      items,
      tokenAuditEntry(this.deps.clock, principal, ctx, {
        action: "payments.import.upload",
        target: importId,
        arguments: {
          bank_account_id: account.id,
          file_bytes: input.file.byteLength,
          filename: input.filename,
          items: items.length,
        },
        outcome: "created",
      }),
    );
    return importView(this.deps.repo, importId, account);
  }

  /** An import owned by the principal's token, with the account it may still send from. */
  private owned(principal: Principal, importId: string) {
    const row = this.deps.repo.findImport(importId);
    if (!row || row.api_token_id !== principal.tokenId) throw new ApiError("not_found", "Импорт не найден");
    const account = this.deps.access.account(principal, row.bank_account_id, "send_payments");
    return { row, account };
  }

  get(principal: Principal, importId: string): PaymentImportView {
    const { account } = this.owned(principal, importId);
    return importView(this.deps.repo, importId, account);
  }

  /** POST /imports/{id}/submit: every draft item of the import. */
  async submitImport(
    principal: Principal,
    importId: string,
    input: { external_id?: unknown },
    ctx: RequestContext = {},
  ): Promise<PaymentImportView> {
    const externalId = checkedExternalId(input.external_id);
    const { account } = this.owned(principal, importId);
    const items = this.deps.repo.items(importId);
    const result = await this.submissions.submit(principal, ctx, account, {
      kind: "import",
      importId,
      itemId: null,
      externalId,
      targets: items,
    });
    return JSON.parse(result) as PaymentImportView;
  }

  /** POST /imports/{id}/items/{item_id}/submit: one item (when it is still a draft). */
  async submitItem(
    principal: Principal,
    importId: string,
    itemId: string,
    input: { external_id?: unknown },
    ctx: RequestContext = {},
  ): Promise<PaymentItemView> {
    const externalId = checkedExternalId(input.external_id);
    const { account } = this.owned(principal, importId);
    const item = this.deps.repo.findItem(itemId);
    if (!item || item.import_id !== importId) throw new ApiError("not_found", "Платёж не найден");
    const result = await this.submissions.submit(principal, ctx, account, {
      kind: "item",
      importId,
      itemId,
      externalId,
      targets: [item],
    });
    return JSON.parse(result) as PaymentItemView;
  }

  /**
   * The newest payment documents as the operator sees them in the admin pages: with the bank's
   * reference and the link where the document is signed (which no client API ever returns).
   */
  forOperator(limit = 200): OperatorPaymentView[] {
    return this.deps.repo.recentItems(limit).map((row) => ({
      ...itemView(row),
      bank_account_id: row.bank_account_id,
      payee_name: row.payee_name,
      bank_reference: row.bank_reference,
      sign_url: row.status === "submitted" ? row.sign_url : null,
    }));
  }

  /**
   * Finishes every submission left in_progress (e.g. by a stopped process): items still
   * submitting are re-sent with their original bank idempotency keys. Returns how many ran.
   */
  resumeInterrupted(): Promise<{ resumed: number; failed: number }> {
    return this.submissions.resumeInterrupted();
  }
}
