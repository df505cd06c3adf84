// A statement's operations stored on PostgreSQL: the chunk in three statements, its columns as
// arrays, instead of two round trips per operation (each one is a round trip to the server there).
// The same rows as SQLite's writer.
import { OPERATION_WRITE_COLUMNS, type OperationWriter, operationValues } from "../operation-values";
import type { SqlPort } from "../sql-port";
import { searchVectorText } from "./search-vector";

const COLUMNS = OPERATION_WRITE_COLUMNS.join(", ");

export function postgresOperationWriter(port: SqlPort): OperationWriter {
  return (statementId, bankAccountId, firstSeq, ops) => {
    const rows = ops.map(operationValues);
    const columns = OPERATION_WRITE_COLUMNS.map((_, i) => rows.map((r) => r[i]!));
    // The search index's words, computed here (the database would spend a third of the insert on them).
    const search = ops.map((op) => searchVectorText(op.purpose, op.payer.name, op.payee.name, op.doc_number));
    const ids = ops.map((op) => op.operation_id);
    return port.transaction(() => {
      port
        .prepare(
          `INSERT INTO operations (bank_account_id, ${COLUMNS}, search)
           SELECT ?, ${COLUMNS}, t.search::tsvector
             FROM unnest(${OPERATION_WRITE_COLUMNS.map((c) => (c === "amount" ? "?::bigint[]" : "?::text[]")).join(", ")}, ?::text[])
                  AS t(${COLUMNS}, search)
           ON CONFLICT DO NOTHING`,
        )
        .run(bankAccountId, ...columns, search);
      port
        .prepare(
          `INSERT INTO statement_operations (statement_id, seq, operation_id)
           SELECT ?, ?::int + t.n::int - 1, t.operation_id FROM unnest(?::text[]) WITH ORDINALITY AS t(operation_id, n)
           ON CONFLICT (statement_id, seq) DO UPDATE SET operation_id = excluded.operation_id`,
        )
        .run(statementId, firstSeq, ids);
      // An operation stored before keeps its row: the kinds are the stored rows' kinds.
      const kinds = port
        .prepare<{ doc_type: string }>(
          "SELECT DISTINCT doc_type FROM operations WHERE bank_account_id = ? AND operation_id = ANY(?::text[])",
        )
        .all(bankAccountId, ids);
      return new Set(kinds.map((k) => k.doc_type));
    });
  };
}
