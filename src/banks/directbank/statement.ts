// A statement made ready from the bank's Statement documents, one per requested piece of the
// period: each piece must add up (opening + credits − debits = closing, the operations equal the
// totals the bank states) and follow the previous one without a gap, or the statement fails with
// bank_error naming where it does not.
import type { StatementDocument } from "../../formats/directbank";
import { dateOf } from "../../formats/directbank";
import { formatKopecks } from "../../formats/money";
import type { StatementPollResult } from "../adapter";

export interface AnsweredPiece {
  from: string;
  to: string;
  statement: StatementDocument;
}

const rub = (kopecks: number) => formatKopecks(kopecks);

function failed(message: string): StatementPollResult {
  return { status: "failed", error: { code: "bank_error", message } };
}

/** The pieces as one statement; operations in the account's `currency` (the documents name none). */
export function readyStatement(pieces: AnsweredPiece[], currency: string): StatementPollResult {
  let opening = 0;
  let closing = 0;
  let credit = 0;
  let debit = 0;
  for (const [i, { from, to, statement: s }] of pieces.entries()) {
    const where = `Выписка банка за ${from}…${to}`;
    if (s.openingBalance === undefined) return failed(`${where}: нет входящего остатка (OpeningBalance)`);
    let credits = 0;
    let debits = 0;
    for (const op of s.operations) {
      if (op.direction === "credit") credits += op.amount;
      else debits += op.amount;
    }
    if (s.totalCredits !== undefined && s.totalCredits !== credits) {
      return failed(
        `${where}: поступления по операциям ${rub(credits)}, а в итогах банка ${rub(s.totalCredits)}; расхождение ${rub(s.totalCredits - credits)}`,
      );
    }
    if (s.totalDebits !== undefined && s.totalDebits !== debits) {
      return failed(
        `${where}: списания по операциям ${rub(debits)}, а в итогах банка ${rub(s.totalDebits)}; расхождение ${rub(s.totalDebits - debits)}`,
      );
    }
    const expected = s.openingBalance + credits - debits;
    if (expected !== s.closingBalance) {
      return failed(
        `${where} не сходится: ${rub(s.openingBalance)} + ${rub(credits)} − ${rub(debits)} = ${rub(expected)}, а исходящий остаток ${rub(s.closingBalance)}; расхождение ${rub(s.closingBalance - expected)}`,
      );
    }
    if (i === 0) opening = s.openingBalance;
    else if (s.openingBalance !== closing) {
      return failed(
        `${where}: входящий остаток ${rub(s.openingBalance)} не равен исходящему ${rub(closing)} предыдущего дня; расхождение ${rub(s.openingBalance - closing)}`,
      );
    }
    closing = s.closingBalance;
    credit += credits;
    debit += debits;
  }
  return {
    status: "ready",
    opening_balance: opening,
    closing_balance: closing,
    total_credit: credit,
    total_debit: debit,
    operations: pieces.flatMap((p) => p.statement.operations.map((op) => ({ ...op, currency }))),
  };
}

/** Whether a bank's statement answers the request for `from`…`to` of `account` (when the bank does
 *  not echo the request's id): the same kind (a current balance or a statement), the same account
 *  and the same calendar dates. */
export function answersPeriod(
  s: StatementDocument,
  balance: boolean,
  account: string,
  from: string,
  to: string,
): boolean {
  if (s.account !== account || dateOf(s.dateTo) !== to || (s.statementType === "2") !== balance) return false;
  return balance || dateOf(s.dateFrom ?? "") === from;
}
