import { kopecksToJsonNumber } from "./money";
import type { StatementOperation } from "./types";

/** An operation as the json export shows it: amounts as numbers, account numbers in clear. The SQLite
 *  export builds the same objects in SQL (db/sqlite/export-reads.ts); this is their definition in code,
 *  and a test holds the two equal. */
export function operationJson(op: StatementOperation) {
  return {
    operation_id: op.operation_id,
    direction: op.direction,
    doc_type: op.doc_type,
    doc_number: op.doc_number,
    doc_date: op.doc_date,
    amount: kopecksToJsonNumber(op.amount),
    currency: op.currency,
    purpose: op.purpose,
    payer: { ...op.payer },
    payee: { ...op.payee },
    // Only tax and customs payments carry it: other operations have no "budget" key.
    ...(op.budget ? { budget: { ...op.budget } } : {}),
  };
}
