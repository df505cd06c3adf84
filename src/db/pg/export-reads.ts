// What the statement exports read (ExportReads), on PostgreSQL through a port, in
// portable SQL. The pages come out as ExportQueries gives them on SQLite, so the files are the same
// bytes: json objects are `operationJson` of each row (SQLite builds the same text in SQL), and 1C
// documents are all left to the field writer (`document` null), which is what SQLite's laid-out
// documents are held equal to.

import { CSV_COLUMNS, CSV_OPERATION_ID_COLUMN, type StoredCsvValues } from "../../formats/csv";

/** The csv values as stored: the export's columns, then the operation's id (written on request). */
const STORED_CSV_COLUMNS = [...CSV_COLUMNS, CSV_OPERATION_ID_COLUMN];

import { operationJson } from "../../formats/operation-json";
import { inDocTypeOrder, type OneCVersion, type StatementOperation } from "../../formats/types";
import type { ExportedStatementKinds, ExportReads, ExportedStatement as Statement } from "../export-reads";
import { OPERATION_COLUMNS, type OperationDbRow, operationFromRow } from "../operation-rows";
import type { SqlPort, SqlStatement } from "../sql-port";

type PageParams = [string, string, number, number];

const FROM_STATEMENT = `FROM statement_operations so
  JOIN operations o ON o.bank_account_id = ? AND o.operation_id = so.operation_id`;

export class PostgresExportQueries implements ExportReads {
  private readonly opsPage: SqlStatement<OperationDbRow & { seq: number }, PageParams>;
  private readonly opsCsvPage: SqlStatement<Record<string, string | number>, PageParams>;
  private readonly oneCPage: SqlStatement<{ seq: number; document: null }, PageParams>;
  private readonly kinds: SqlStatement<{ doc_type: string }, [string]>;
  private readonly opsAt: SqlStatement<OperationDbRow & { seq: number }, [string, string, number[]]>;

  constructor(port: SqlPort) {
    const page = (columns: string) =>
      `SELECT so.seq, ${columns} ${FROM_STATEMENT}
        WHERE so.statement_id = ? AND so.seq > ? AND so.seq <= ?
        ORDER BY so.seq`;
    this.opsPage = port.prepare(page(OPERATION_COLUMNS));
    // The positions as one array: any number of them in one statement.
    this.opsAt = port.prepare(
      `SELECT so.seq, ${OPERATION_COLUMNS} ${FROM_STATEMENT}
        WHERE so.statement_id = ? AND so.seq = ANY(?::int[])
        ORDER BY so.seq`,
    );
    // The csv header's names are the operations table's column names.
    this.opsCsvPage = port.prepare(page(STORED_CSV_COLUMNS.map((c) => `o.${c}`).join(", ")));
    // No document laid out here: the renderer reads these rows again (operationsAt) for the field
    // writer, whose bytes SQLite's laid-out documents are held equal to.
    this.oneCPage = port.prepare(page("NULL AS document"));
    this.kinds = port.prepare(
      `SELECT DISTINCT o.doc_type FROM statement_operations so
         JOIN statements s ON s.id = so.statement_id
         JOIN operations o ON o.bank_account_id = s.bank_account_id AND o.operation_id = so.operation_id
        WHERE so.statement_id = ?`,
    );
  }

  operationsAt(statement: Statement, seqs: number[]): { seq: number; op: StatementOperation }[] {
    return this.opsAt
      .all(statement.bank_account_id, statement.id, seqs)
      .map((r) => ({ seq: r.seq, op: operationFromRow(r) }));
  }

  operationsCsvPage(
    statement: Statement,
    afterSeq: number,
    lastSeq: number,
  ): { seq: number; values: StoredCsvValues }[] {
    return this.opsCsvPage
      .all(statement.bank_account_id, statement.id, afterSeq, lastSeq)
      .map((r) => ({ seq: r.seq as number, values: STORED_CSV_COLUMNS.map((c) => r[c]!) }));
  }

  operationsOneCPage(
    statement: Statement,
    _version: OneCVersion,
    afterSeq: number,
    lastSeq: number,
  ): { seq: number; document: string | null }[] {
    return this.oneCPage.all(statement.bank_account_id, statement.id, afterSeq, lastSeq);
  }

  operationsJsonPage(
    statement: Statement,
    afterSeq: number,
    lastSeq: number,
  ): { seq: number; json: string }[] {
    return this.opsPage
      .all(statement.bank_account_id, statement.id, afterSeq, lastSeq)
      .map((r) => ({ seq: r.seq, json: JSON.stringify(operationJson(operationFromRow(r))) }));
  }

  docTypes(statement: ExportedStatementKinds): string[] {
    if (statement.doc_types !== null) return JSON.parse(statement.doc_types) as string[];
    return inDocTypeOrder(this.kinds.all(statement.id).map((r) => r.doc_type));
  }
}
