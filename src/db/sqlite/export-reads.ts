// What the statement exports read on SQLite: a ready statement's operations page by page, as csv
// values, json text or 1C documents laid out by SQLite, and its document kinds. Used by the
// server's thread and by the export workers, each over its own connection; nothing here writes.
import type { Database, Statement } from "bun:sqlite";
import type { StoredCsvValues } from "../../formats/csv";
import { inDocTypeOrder, type OneCVersion, type StatementOperation } from "../../formats/types";
import type { ExportedStatement, ExportedStatementKinds, ExportReads } from "../export-reads";
import { OPERATION_COLUMNS, type OperationDbRow, operationFromRow } from "../operation-rows";
import { oneCDocumentSql } from "./onec-sql";

function hasConcat(sqlite: Database): boolean {
  try {
    sqlite.query("SELECT concat('a', 'b')").get();
    return true;
  } catch {
    return false;
  }
}

export class ExportQueries implements ExportReads {
  private readonly opsAt;
  private readonly opsCsvPage;
  private readonly opsJsonPage;
  private readonly opsOneCPage = new Map<
    OneCVersion,
    Statement<Record<string, unknown>, [string, string, number, number]>
  >();

  // Whether SQLite lays out the 1C documents (concat() came with SQLite 3.44: Bun carries a newer
  // one, but on some systems it loads the system library). Without it every document is left to
  // the field writer, as `document` null says.
  private readonly layOutOneC: boolean;

  constructor(
    private readonly sqlite: Database,
    options: { layOutOneC?: boolean } = {},
  ) {
    this.layOutOneC = options.layOutOneC ?? hasConcat(sqlite);
    this.opsAt = sqlite.query<OperationDbRow & { seq: number }, [string, string, string]>(
      `SELECT so.seq, ${OPERATION_COLUMNS}
         FROM statement_operations so
         JOIN operations o ON o.bank_account_id = ? AND o.operation_id = so.operation_id
        WHERE so.statement_id = ? AND so.seq IN (SELECT value FROM json_each(?))
        ORDER BY so.seq`,
    );
    // The csv export's values, in CSV_COLUMNS order after seq (amount still in kopecks), then the
    // operation's id, read as arrays: no object per row.
    this.opsCsvPage = sqlite.query<Record<string, unknown>, [string, string, number, number]>(
      `SELECT so.seq, o.doc_date, o.doc_number, o.amount, o.currency, o.direction, o.payer_inn, o.payer_name,
              o.payer_account, o.payee_inn, o.payee_name, o.payee_account, o.purpose, o.operation_id
         FROM statement_operations so
         JOIN operations o ON o.bank_account_id = ? AND o.operation_id = so.operation_id
        WHERE so.statement_id = ? AND so.seq > ? AND so.seq <= ?
        ORDER BY so.seq`,
    );
    // The json export's operation objects, built by SQLite itself: the same keys and values as
    // `operationJson` (amounts in rubles with at most two decimals), without a JS object per row.
    const party = (p: string) =>
      `json_object('name', o.${p}_name, 'inn', o.${p}_inn, 'kpp', o.${p}_kpp, 'account', o.${p}_account,
         'bank_name', o.${p}_bank_name, 'bank_bik', o.${p}_bank_bik, 'bank_corr_account', o.${p}_bank_corr_account)`;
    const fields = `'operation_id', o.operation_id, 'direction', o.direction, 'doc_type', o.doc_type,
              'doc_number', o.doc_number, 'doc_date', o.doc_date,
              'amount', CASE WHEN o.amount % 100 = 0 THEN o.amount / 100 ELSE o.amount / 100.0 END,
              'currency', o.currency, 'purpose', o.purpose, 'payer', ${party("payer")}, 'payee', ${party("payee")}`;
    this.opsJsonPage = sqlite.query<{ seq: number; json: string }, [string, string, number, number]>(
      `SELECT so.seq, CASE WHEN o.budget_fields IS NULL THEN json_object(${fields})
              ELSE json_object(${fields}, 'budget', json(o.budget_fields)) END AS json
         FROM statement_operations so
         JOIN operations o ON o.bank_account_id = ? AND o.operation_id = so.operation_id
        WHERE so.statement_id = ? AND so.seq > ? AND so.seq <= ?
        ORDER BY so.seq`,
    );
  }

  /** The operations at these positions of a statement, in seq order. */
  operationsAt(statement: ExportedStatement, seqs: number[]): { seq: number; op: StatementOperation }[] {
    return this.opsAt
      .all(statement.bank_account_id, statement.id, JSON.stringify(seqs))
      .map((r) => ({ seq: r.seq, op: operationFromRow(r) }));
  }

  /** A statement's operations after `afterSeq` through `lastSeq` as stored csv values
   *  (CSV_COLUMNS order, amount in kopecks, then operation_id). */
  operationsCsvPage(
    statement: ExportedStatement,
    afterSeq: number,
    lastSeq: number,
  ): { seq: number; values: StoredCsvValues }[] {
    return this.opsCsvPage
      .values(statement.bank_account_id, statement.id, afterSeq, lastSeq)
      .map((v) => ({ seq: v[0] as number, values: v.slice(1) as StoredCsvValues }));
  }

  /** A statement's operations after `afterSeq` through `lastSeq` as 1C documents laid out by
   *  SQLite (`oneCDocumentSql`); `document` is null for a row the field writer must write. */
  operationsOneCPage(
    statement: ExportedStatement,
    version: OneCVersion,
    afterSeq: number,
    lastSeq: number,
  ): { seq: number; document: string | null }[] {
    let query = this.opsOneCPage.get(version);
    if (!query) {
      query = this.sqlite.query<Record<string, unknown>, [string, string, number, number]>(
        `SELECT so.seq, ${this.layOutOneC ? oneCDocumentSql(version).expression : "NULL"}
           FROM statement_operations so
           JOIN operations o ON o.bank_account_id = ? AND o.operation_id = so.operation_id
          WHERE so.statement_id = ? AND so.seq > ? AND so.seq <= ?
          ORDER BY so.seq`,
      );
      this.opsOneCPage.set(version, query);
    }
    return query
      .values(statement.bank_account_id, statement.id, afterSeq, lastSeq)
      .map((v) => ({ seq: v[0] as number, document: v[1] as string | null }));
  }

  /** A statement's operations after `afterSeq` through `lastSeq` as json export objects (JSON text). */
  operationsJsonPage(
    statement: ExportedStatement,
    afterSeq: number,
    lastSeq: number,
  ): { seq: number; json: string }[] {
    return this.opsJsonPage.all(statement.bank_account_id, statement.id, afterSeq, lastSeq);
  }

  /** The document kinds among a ready statement's operations, in DOC_TYPES order: as kept when
   *  it became ready, else read from its operations (every one of them). */
  docTypes(statement: ExportedStatementKinds): string[] {
    if (statement.doc_types !== null) return JSON.parse(statement.doc_types) as string[];
    const found = this.sqlite
      .query<{ doc_type: string }, [string]>(
        `SELECT DISTINCT o.doc_type FROM statement_operations so
           JOIN statements s ON s.id = so.statement_id
           JOIN operations o ON o.bank_account_id = s.bank_account_id AND o.operation_id = so.operation_id
          WHERE so.statement_id = ?`,
      )
      .all(statement.id)
      .map((r) => r.doc_type);
    return inDocTypeOrder(found);
  }
}
