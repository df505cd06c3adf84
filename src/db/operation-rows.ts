// An operation as the operations table holds it, and as every reader maps it (the statements'
// repository and exports, the agent tools, the search on either store).
import type { BudgetFields, PartyColumns, StatementOperation } from "../formats/types";

export interface OperationDbRow extends PartyColumns<"payer">, PartyColumns<"payee"> {
  operation_id: string;
  direction: "credit" | "debit";
  doc_type: StatementOperation["doc_type"];
  doc_number: string;
  doc_date: string;
  amount: number;
  currency: string;
  purpose: string;
  uin: string | null;
  purpose_code: string | null;
  priority: string | null;
  budget_fields: string | null;
}

export const OPERATION_COLUMNS = `o.operation_id, o.direction, o.doc_type, o.doc_number, o.doc_date, o.amount, o.currency,
  o.purpose, o.payer_name, o.payer_inn, o.payer_kpp, o.payer_account, o.payer_bank_name, o.payer_bank_bik,
  o.payer_bank_corr_account, o.payee_name, o.payee_inn, o.payee_kpp, o.payee_account, o.payee_bank_name,
  o.payee_bank_bik, o.payee_bank_corr_account, o.uin, o.purpose_code, o.priority, o.budget_fields`;

export function operationFromRow(r: OperationDbRow): StatementOperation {
  return {
    operation_id: r.operation_id,
    direction: r.direction,
    doc_type: r.doc_type,
    doc_number: r.doc_number,
    doc_date: r.doc_date,
    amount: r.amount,
    currency: r.currency,
    purpose: r.purpose,
    payer: {
      name: r.payer_name,
      inn: r.payer_inn,
      kpp: r.payer_kpp,
      account: r.payer_account,
      bank_name: r.payer_bank_name,
      bank_bik: r.payer_bank_bik,
      bank_corr_account: r.payer_bank_corr_account,
    },
    payee: {
      name: r.payee_name,
      inn: r.payee_inn,
      kpp: r.payee_kpp,
      account: r.payee_account,
      bank_name: r.payee_bank_name,
      bank_bik: r.payee_bank_bik,
      bank_corr_account: r.payee_bank_corr_account,
    },
    uin: r.uin,
    purpose_code: r.purpose_code,
    priority: r.priority,
    ...(r.budget_fields === null ? {} : { budget: JSON.parse(r.budget_fields) as BudgetFields }),
  };
}

/** How many operations matched, and their credit and debit sums in kopecks. */
export interface OperationTotals {
  count: number;
  creditKopecks: number;
  debitKopecks: number;
}

/**
 * The totals of the operations `o` a statement selects, as one row `{count, credit, debit}` the
 * same on either store (PostgreSQL's sum of bigint is numeric: cast back to bigint).
 */
export const TOTALS_COLUMNS = `count(*) AS count,
  CAST(coalesce(sum(CASE WHEN o.direction = 'credit' THEN o.amount END), 0) AS bigint) AS credit,
  CAST(coalesce(sum(CASE WHEN o.direction = 'debit' THEN o.amount END), 0) AS bigint) AS debit`;

export interface TotalsDbRow {
  count: number;
  credit: number;
  debit: number;
}

export function totalsFromRow(r: TotalsDbRow): OperationTotals {
  return { count: r.count, creditKopecks: r.credit, debitKopecks: r.debit };
}
