// The statement and balance objects, built in one place for the REST API, the admin API and the
// agent tools (which mask free text on top, see mcp/views.ts).
import type { BankAccountRecord } from "../db/repos/accounts";
import { maskAccountNumber } from "../formats/mask";
import { kopecksToJsonNumber } from "../formats/money";
import type { BalanceView, StatementView } from "./model";
import type { BalanceRow, StatementRow } from "./repository";

export function statementView(
  row: StatementRow,
  account: Pick<BankAccountRecord, "accountNumber">,
): StatementView {
  const view: StatementView = {
    statement_id: row.id,
    status: row.status,
    bank_account_id: row.bank_account_id,
    account_number_masked: maskAccountNumber(account.accountNumber),
    external_id: row.external_id,
    source: row.source,
    date_from: row.date_from,
    date_to: row.date_to,
    created_at: row.created_at,
  };
  if (row.status === "ready") {
    view.fetched_at = row.fetched_at ?? undefined;
    view.operations_count = row.operations_count ?? 0;
  }
  if (row.status === "failed") {
    view.error = { code: row.error_code ?? "bank_error", message: row.error_message ?? "Ошибка банка" };
    if (row.bank_error_code) view.error.details = { bank_code: row.bank_error_code };
  }
  return view;
}

/** The cached balance (`cached` null when the bank never reported one); stale past `staleSeconds`. */
export function balanceView(
  account: Pick<BankAccountRecord, "id" | "currency">,
  cached: BalanceRow | null,
  now: Date,
  staleSeconds: number,
): BalanceView {
  if (!cached) {
    return {
      bank_account_id: account.id,
      balance: null,
      currency: account.currency,
      as_of: null,
      stale: true,
    };
  }
  return {
    bank_account_id: account.id,
    balance: kopecksToJsonNumber(cached.balance),
    currency: cached.currency,
    as_of: cached.as_of,
    stale: now.getTime() - Date.parse(cached.as_of) > staleSeconds * 1000,
  };
}
