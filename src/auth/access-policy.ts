// The one answer to "may this token use this account?", for REST routes and agent tools alike.
// Order of the per-account checks: unknown account 404, other company 403 forbidden_company,
// no per-account allow (or a test token on an account outside any sandbox) 403 forbidden_account,
// its details.reason saying which: `no_allow` or `test_token`.

import { ApiError } from "../core/errors";
import type { BankAccountRecord, BankAccountRepository } from "../db/repos/accounts";
import type { Principal, Scope } from "./guard";

export function isSandboxBank(bank: string): boolean {
  return bank === "sandbox" || bank.startsWith("sandbox_");
}

/** What a test token (`svc_test_…`) may reach: sandbox banks and accounts in a bank's sandbox. */
export function isSandboxAccount(account: Pick<BankAccountRecord, "bank" | "environment">): boolean {
  return isSandboxBank(account.bank) || account.environment === "sandbox";
}

export class AccessPolicy {
  constructor(private readonly accounts: BankAccountRepository) {}

  /** The account if the principal holds `right` on it; throws the first failing check otherwise. */
  account(principal: Principal, bankAccountId: string, right: Scope): BankAccountRecord {
    const account = this.accounts.findById(bankAccountId);
    if (!account) throw new ApiError("not_found", "Счёт не найден");
    if (account.companyId !== principal.companyId) throw new ApiError("forbidden_company");
    if (!this.allows(principal, account, right)) {
      // An allow held by a test token for an account outside the sandbox (stored before the admin
      // side refused such allows) is refused for being a test token; otherwise there is no allow.
      const testToken =
        principal.mode === "test" && !isSandboxAccount(account) && principal.grants.has(account.id);
      throw new ApiError(
        "forbidden_account",
        testToken
          ? "Нет доступа к счёту: тестовый токен (svc_test_) работает только со счетами песочницы"
          : "Нет доступа к счёту: токену не разрешён этот счёт или это действие с ним",
        { reason: testToken ? "test_token" : "no_allow" },
      );
    }
    return account;
  }

  /** Accounts of the principal's company that it holds `right` on. */
  accessibleAccounts(principal: Principal, right: Scope): BankAccountRecord[] {
    return this.accounts.list(principal.companyId).filter((a) => this.allows(principal, a, right));
  }

  allows(principal: Principal, account: BankAccountRecord, right: Scope): boolean {
    if (account.companyId !== principal.companyId) return false;
    if (principal.mode === "test" && !isSandboxAccount(account)) return false;
    const grant = principal.grants.get(account.id);
    if (!grant) return false;
    return right === "read_statements" ? grant.allowReadStatements : grant.allowSendPayments;
  }
}
