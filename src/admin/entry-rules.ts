// The entry checks of decisions §19 applied to rows already stored (by a version of svc before
// them, or by hand): `svc admin migrate-to-postgres` refuses to carry such rows over, naming them.
// The checks themselves are the ones new data meets: the account number's control key against its
// BIK, one alias per company, no allow outside the sandbox for a test token.
import { isSandboxAccount } from "../auth/access-policy";
import { accountKeyProblem } from "./accounts";

/** A row as the SQLite file holds it: column names as in the database. */
type StoredRow = Record<string, unknown>;

/**
 * A checker for the rows of one copy, table by table in an order where parents come first (as
 * the copy goes): what is wrong with a row, or null. It remembers what later tables refer to.
 */
export function storedRowChecker(): (table: string, row: StoredRow) => string | null {
  const aliases = new Set<string>();
  const sandbox = new Map<string, boolean>();
  const testTokens = new Set<string>();
  return (table, row) => {
    if (table === "bank_accounts") {
      const id = String(row.id);
      const number = String(row.account_number);
      const bik = String(row.bik);
      sandbox.set(
        id,
        isSandboxAccount({ bank: String(row.bank), environment: row.environment as "production" }),
      );
      const alias = `${String(row.company_id)}\u0000${String(row.alias)}`;
      const taken = aliases.has(alias);
      aliases.add(alias);
      if (accountKeyProblem(number, bik) !== null)
        return `bank_accounts ${id} (alias ${String(row.alias)}): the account number's control key does not fit BIK ${bik}`;
      if (taken)
        return `bank_accounts ${id}: alias ${String(row.alias)} is taken by another account of company ${String(row.company_id)}`;
      return null;
    }
    if (table === "api_tokens") {
      if (row.mode === "test") testTokens.add(String(row.id));
      return null;
    }
    if (table === "token_accounts") {
      const token = String(row.token_id);
      const account = String(row.bank_account_id);
      if (testTokens.has(token) && sandbox.get(account) === false)
        return `token_accounts: test token ${token} is allowed account ${account}, which is outside the sandbox`;
    }
    return null;
  };
}
