// A statement's operations as they are stored: one row per operation of an account (an operation
// stored before, by an overlapping statement, keeps its row) and its place in the statement, chunk
// by chunk. SQLite writes a chunk row by row in one transaction; PostgreSQL in three statements,
// its columns as arrays.
import { searchVectorText } from "../db/pg/search-vector";
import type { SqlPort } from "../db/sql-port";
import type { StatementOperation } from "../formats/types";

/** The columns of an operation as storeOperations writes them, after bank_account_id. */
const OP_COLUMNS = [
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

/** An operation's values in OP_COLUMNS order. */
function operationValues(op: StatementOperation): (string | number | null)[] {
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

export class OperationStore {
  private readonly insertOp;
  private readonly storedDocType;
  private readonly linkOp;

  constructor(private readonly port: SqlPort) {
    // An operation stored before (an overlapping statement) keeps its row.
    this.insertOp = port.prepare<unknown, (string | number | null)[]>(
      `INSERT INTO operations (bank_account_id, ${OP_COLUMNS.join(", ")})
       VALUES (${Array(OP_COLUMNS.length + 1)
         .fill("?")
         .join(", ")})
       ON CONFLICT DO NOTHING`,
    );
    this.storedDocType = port.prepare<{ doc_type: string }, [string, string]>(
      "SELECT doc_type FROM operations WHERE bank_account_id = ? AND operation_id = ?",
    );
    this.linkOp = port.prepare<unknown, [string, number, string]>(
      `INSERT INTO statement_operations (statement_id, seq, operation_id) VALUES (?, ?, ?)
       ON CONFLICT (statement_id, seq) DO UPDATE SET operation_id = excluded.operation_id`,
    );
  }

  /**
   * Stores one chunk of a statement's operations (idempotent: a re-run after a crash is harmless).
   * Returns the document kinds of the stored rows: an operation stored before (by an overlapping
   * statement) keeps its stored row, whose kind is the one the exports show.
   */
  store(
    statementId: string,
    bankAccountId: string,
    firstSeq: number,
    ops: StatementOperation[],
  ): Set<string> {
    if (this.port.dialect === "postgres") return this.storeAtOnce(statementId, bankAccountId, firstSeq, ops);
    const docTypes = new Set<string>();
    this.port.transaction(() => {
      let seq = firstSeq;
      for (const op of ops) {
        const inserted = this.insertOp.run(bankAccountId, ...operationValues(op)).changes;
        if (inserted === 1) docTypes.add(op.doc_type);
        else {
          const stored = this.storedDocType.get(bankAccountId, op.operation_id);
          if (stored) docTypes.add(stored.doc_type);
        }
        this.linkOp.run(statementId, seq, op.operation_id);
        seq += 1;
      }
    });
    return docTypes;
  }

  /**
   * store on PostgreSQL: the chunk in three statements, its columns as arrays, instead of
   * two round trips per operation (each one is a round trip to the server there). The same rows.
   */
  private storeAtOnce(
    statementId: string,
    bankAccountId: string,
    firstSeq: number,
    ops: StatementOperation[],
  ): Set<string> {
    const rows = ops.map(operationValues);
    const columns = OP_COLUMNS.map((_, i) => rows.map((r) => r[i]!));
    // The search index's words, computed here (the database would spend a third of the insert on them).
    const search = ops.map((op) => searchVectorText(op.purpose, op.payer.name, op.payee.name, op.doc_number));
    const ids = ops.map((op) => op.operation_id);
    return this.port.transaction(() => {
      this.port
        .prepare(
          `INSERT INTO operations (bank_account_id, ${OP_COLUMNS.join(", ")}, search)
           SELECT ?, ${OP_COLUMNS.join(", ")}, t.search::tsvector
             FROM unnest(${OP_COLUMNS.map((c) => (c === "amount" ? "?::bigint[]" : "?::text[]")).join(", ")}, ?::text[])
                  AS t(${OP_COLUMNS.join(", ")}, search)
           ON CONFLICT DO NOTHING`,
        )
        .run(bankAccountId, ...columns, search);
      this.port
        .prepare(
          `INSERT INTO statement_operations (statement_id, seq, operation_id)
           SELECT ?, ?::int + t.n::int - 1, t.operation_id FROM unnest(?::text[]) WITH ORDINALITY AS t(operation_id, n)
           ON CONFLICT (statement_id, seq) DO UPDATE SET operation_id = excluded.operation_id`,
        )
        .run(statementId, firstSeq, ids);
      // An operation stored before keeps its row: the kinds are the stored rows' kinds.
      const kinds = this.port
        .prepare<{ doc_type: string }>(
          "SELECT DISTINCT doc_type FROM operations WHERE bank_account_id = ? AND operation_id = ANY(?::text[])",
        )
        .all(bankAccountId, ids);
      return new Set(kinds.map((k) => k.doc_type));
    });
  }
}
