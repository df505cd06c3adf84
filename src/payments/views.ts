// What a payment import and its items look like to the client that uploaded them (money as JSON
// numbers, the payee's account masked) and to the operator (with the bank's reference and where to
// sign), and the import's status as its items' statuses sum up to.

import { ApiError } from "../core/errors";
import type { BankAccountRecord } from "../db/repos/accounts";
import { maskAccountNumber } from "../formats/mask";
import { kopecksToJsonNumber } from "../formats/money";
import type { ImportStatus, PaymentImportView, PaymentItemView } from "./model";
import type { ItemRow, PaymentRepository } from "./repository";

/** A payment document with what only the operator may see. */
export type OperatorPaymentView = PaymentItemView & {
  bank_account_id: string;
  payee_name: string;
  bank_reference: string | null;
  /** Where to sign it in the bank, while it waits for a signature. */
  sign_url: string | null;
};

export function itemView(row: ItemRow): PaymentItemView {
  const view: PaymentItemView = {
    item_id: row.id,
    import_id: row.import_id,
    status: row.status,
    doc_number: row.doc_number,
    doc_date: row.doc_date,
    amount: kopecksToJsonNumber(row.amount),
    currency: row.currency,
    purpose: row.purpose,
    payee: {
      name: row.payee_name,
      inn: row.payee_inn,
      kpp: row.payee_kpp,
      account_masked: maskAccountNumber(row.payee_account),
      bank_bik: row.payee_bank_bik,
    },
  };
  if (row.submitted_at !== null && row.status !== "draft") view.submitted_at = row.submitted_at;
  if (row.status === "rejected") {
    view.error = { code: row.error_code ?? "bank_error", message: row.error_message ?? "Ошибка банка" };
  }
  return view;
}

function importStatus(items: Pick<ItemRow, "status">[]): ImportStatus {
  if (items.some((i) => i.status === "submitting")) return "submitting";
  const drafts = items.filter((i) => i.status === "draft").length;
  if (drafts === items.length) return "uploaded";
  return drafts === 0 ? "submitted" : "partially_submitted";
}

/** An import as its client sees it; `account` is the one it sends from. */
export function importView(
  repo: PaymentRepository,
  importId: string,
  account: BankAccountRecord,
): PaymentImportView {
  const row = repo.findImport(importId);
  if (!row) throw new ApiError("not_found", "Импорт не найден");
  const items = repo.items(importId);
  return {
    import_id: row.id,
    bank_account_id: row.bank_account_id,
    account_number_masked: maskAccountNumber(account.accountNumber),
    created_at: row.created_at,
    status: importStatus(items),
    items: items.map(itemView),
  };
}
