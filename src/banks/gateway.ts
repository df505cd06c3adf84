// Between our account records and the bank adapters: picks the adapter for an account and builds
// the adapter's view of it (with the decrypted login, which goes nowhere else).

import { type Metrics, noMetrics } from "../core/metrics";
import type { BankAccountRecord, CompanyRepository } from "../db/repos/accounts";
import type { BankAccountRef, BankAdapter } from "./adapter";
import type { BankConnections } from "./connections";
import { meteredAdapter } from "./metered";
import type { BankRegistry } from "./registry";

export class BankGateway {
  private readonly metered = new Map<string, BankAdapter>();

  constructor(
    readonly registry: BankRegistry,
    private readonly companies: CompanyRepository,
    private readonly connections: BankConnections,
    private readonly metrics: Metrics = noMetrics,
  ) {}

  /** The account's bank adapter, its calls counted and timed. */
  adapterFor(account: Pick<BankAccountRecord, "bank">): BankAdapter {
    let adapter = this.metered.get(account.bank);
    if (!adapter) {
      adapter = meteredAdapter(this.registry.get(account.bank), this.metrics);
      this.metered.set(account.bank, adapter);
    }
    return adapter;
  }

  refFor(account: BankAccountRecord): BankAccountRef {
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
      environment: account.environment,
      connection_id: account.connectionId,
      credentials: account.connectionId ? this.connections.read(account.connectionId) : null,
    };
  }
}
