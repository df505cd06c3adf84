// Between our account records and the bank adapters: picks the adapter for an account and builds
// the adapter's view of it (with the decrypted login, which goes nowhere else).
import type { SecretBox } from "./auth/secret-box";
import type { BankAccountRef, BankAdapter } from "./banks/adapter";
import type { BankRegistry } from "./banks/registry";
import type { BankAccountRecord, BankAccountRepository, CompanyRepository } from "./db/repos/accounts";

export class BankGateway {
  constructor(
    readonly registry: BankRegistry,
    private readonly accounts: BankAccountRepository,
    private readonly companies: CompanyRepository,
    private readonly secretBox: SecretBox | null,
  ) {}

  adapterFor(account: Pick<BankAccountRecord, "bank">): BankAdapter {
    return this.registry.get(account.bank);
  }

  refFor(account: BankAccountRecord): BankAccountRef {
    const sealed = this.accounts.sealedCredentials(account.id);
    const company = this.companies.findById(account.companyId);
    return {
      bank_account_id: account.id,
      bank: account.bank,
      account_number: account.accountNumber,
      bik: account.bik,
      currency: account.currency,
      sandbox:
        account.sandboxOpsPerDay === null
          ? null
          : { ops_per_day: account.sandboxOpsPerDay, opening_balance: account.sandboxOpeningBalance ?? 0 },
      holder: company ? { name: company.name, inn: company.inn, kpp: company.kpp ?? "" } : null,
      credentials: sealed && this.secretBox ? JSON.parse(this.secretBox.open(sealed)) : null,
    };
  }
}
