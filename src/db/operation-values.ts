// An operation as the writers store it (db/sqlite/operation-writer.ts, db/pg/operation-writer.ts):
// its columns in one order and its values in the same order.
import type { StatementOperation } from "../formats/types";

/** The columns of an operation as the writers fill them, after bank_account_id. */
export const OPERATION_WRITE_COLUMNS = [
  "operation_id",
  "doc_date",
  "direction",
  "doc_type",
  "doc_number",
  "amount",
  "currency",
  "purpose",
  "counterparty_inn",
  "payer_name",
  "payer_inn",
  "payer_kpp",
  "payer_account",
  "payer_bank_name",
  "payer_bank_bik",
  "payer_bank_corr_account",
  "payee_name",
  "payee_inn",
  "payee_kpp",
  "payee_account",
  "payee_bank_name",
  "payee_bank_bik",
  "payee_bank_corr_account",
  "uin",
  "purpose_code",
  "priority",
  "budget_fields",
] as const;

/** An operation's values in OPERATION_WRITE_COLUMNS order. */
export function operationValues(op: StatementOperation): (string | number | null)[] {
  const counterparty = op.direction === "credit" ? op.payer.inn : op.payee.inn;
  return [
    op.operation_id,
    op.doc_date,
    op.direction,
    op.doc_type,
    op.doc_number,
    op.amount,
    op.currency,
    op.purpose,
    counterparty,
    op.payer.name,
    op.payer.inn,
    op.payer.kpp,
    op.payer.account,
    op.payer.bank_name,
    op.payer.bank_bik,
    op.payer.bank_corr_account,
    op.payee.name,
    op.payee.inn,
    op.payee.kpp,
    op.payee.account,
    op.payee.bank_name,
    op.payee.bank_bik,
    op.payee.bank_corr_account,
    op.uin ?? null,
    op.purpose_code ?? null,
    op.priority ?? null,
    op.budget ? JSON.stringify(op.budget) : null,
  ];
}

/**
 * Stores one chunk of a statement's operations (idempotent: a re-run after a crash is harmless).
 * Returns the document kinds of the stored rows: an operation stored before (by an overlapping
 * statement) keeps its stored row, whose kind is the one the exports show.
 */
export type OperationWriter = (
  statementId: string,
  bankAccountId: string,
  firstSeq: number,
  ops: StatementOperation[],
) => Set<string>;
