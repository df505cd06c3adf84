// A statement's operations stored on SQLite: a chunk row by row, in one transaction of prepared
// statements (no round trips to pay for there).
import { OPERATION_WRITE_COLUMNS, type OperationWriter, operationValues } from "../operation-values";
import type { SqlPort } from "../sql-port";

export function sqliteOperationWriter(port: SqlPort): OperationWriter {
  // An operation stored before (an overlapping statement) keeps its row.
  const insertOp = port.prepare<unknown, (string | number | null)[]>(
    `INSERT INTO operations (bank_account_id, ${OPERATION_WRITE_COLUMNS.join(", ")})
     VALUES (${Array(OPERATION_WRITE_COLUMNS.length + 1)
       .fill("?")
       .join(", ")})
     ON CONFLICT DO NOTHING`,
  );
  const storedDocType = port.prepare<{ doc_type: string }, [string, string]>(
    "SELECT doc_type FROM operations WHERE bank_account_id = ? AND operation_id = ?",
  );
  const linkOp = port.prepare<unknown, [string, number, string]>(
    `INSERT INTO statement_operations (statement_id, seq, operation_id) VALUES (?, ?, ?)
     ON CONFLICT (statement_id, seq) DO UPDATE SET operation_id = excluded.operation_id`,
  );
  return (statementId, bankAccountId, firstSeq, ops) => {
    const docTypes = new Set<string>();
    port.transaction(() => {
      let seq = firstSeq;
      for (const op of ops) {
        const inserted = insertOp.run(bankAccountId, ...operationValues(op)).changes;
        if (inserted === 1) docTypes.add(op.doc_type);
        else {
          const stored = storedDocType.get(bankAccountId, op.operation_id);
          if (stored) docTypes.add(stored.doc_type);
        }
        linkOp.run(statementId, seq, op.operation_id);
        seq += 1;
      }
    });
    return docTypes;
  };
}
