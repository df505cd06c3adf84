import type { Database } from "bun:sqlite";
import { and, asc, eq, sql } from "drizzle-orm";
import type { Db } from "../open";
import { bankAccounts, companies } from "../schema";
import { type ExternalChanges, RowCache } from "../sqlite/row-cache";

export type CompanyRow = typeof companies.$inferSelect;
export type BankAccountRow = typeof bankAccounts.$inferSelect;

// Lists keep creation order; rowid breaks ties between rows created in the same millisecond.
export class CompanyRepository {
  private readonly byId;

  constructor(
    private readonly db: Db,
    sqlite: Database,
  ) {
    this.byId = sqlite.query<CompanyRow, [string]>(
      "SELECT id, name, inn, kpp, created_at AS createdAt FROM companies WHERE id = ?",
    );
  }

  insert(row: CompanyRow): void {
    this.db.insert(companies).values(row).run();
  }

  findById(id: string): CompanyRow | null {
    return this.byId.get(id) ?? null;
  }

  list(): CompanyRow[] {
    return this.db.select().from(companies).orderBy(asc(companies.createdAt), asc(sql`rowid`)).all();
  }
}

export class BankAccountRepository {
  private readonly byId;
  private readonly credentialsOf;
  private readonly cache: RowCache<BankAccountRecord>;

  constructor(
    private readonly db: Db,
    sqlite: Database,
    changes: ExternalChanges,
  ) {
    this.cache = new RowCache(changes);
    this.credentialsOf = sqlite.query<{ c: Uint8Array | null }, [string]>(
      "SELECT credentials_enc AS c FROM bank_accounts WHERE id = ?",
    );
    // Hot path: every account-scoped request resolves its account here.
    this.byId = sqlite.query<BankAccountRecord, [string]>(
      `SELECT id, company_id AS companyId, bank, account_number AS accountNumber, bik, currency, alias,
              sandbox_ops_per_day AS sandboxOpsPerDay, sandbox_opening_balance AS sandboxOpeningBalance,
              created_at AS createdAt
         FROM bank_accounts WHERE id = ?`,
    );
  }

  insert(row: BankAccountRow): void {
    this.cache.writeAll(() => this.db.insert(bankAccounts).values(row).run());
  }

  /** Treat the result as read-only: it may be shared with other requests. */
  findById(id: string): BankAccountRecord | null {
    return this.cache.get(id, () => this.byId.get(id) ?? null);
  }

  /** The account with this number at this bank (BIK), if one was added. */
  findByNumber(accountNumber: string, bik: string): { id: string } | null {
    return (
      this.db
        .select({ id: bankAccounts.id })
        .from(bankAccounts)
        .where(and(eq(bankAccounts.accountNumber, accountNumber), eq(bankAccounts.bik, bik)))
        .get() ?? null
    );
  }

  /** The sealed credentials, for the bank adapter only. */
  sealedCredentials(id: string): Uint8Array | null {
    return this.credentialsOf.get(id)?.c ?? null;
  }

  list(companyId?: string): BankAccountRecord[] {
    const q = this.db
      .select({
        id: bankAccounts.id,
        companyId: bankAccounts.companyId,
        bank: bankAccounts.bank,
        accountNumber: bankAccounts.accountNumber,
        bik: bankAccounts.bik,
        currency: bankAccounts.currency,
        alias: bankAccounts.alias,
        sandboxOpsPerDay: bankAccounts.sandboxOpsPerDay,
        sandboxOpeningBalance: bankAccounts.sandboxOpeningBalance,
        createdAt: bankAccounts.createdAt,
      })
      .from(bankAccounts);
    const filtered = companyId ? q.where(and(eq(bankAccounts.companyId, companyId))) : q;
    return filtered.orderBy(asc(bankAccounts.createdAt), asc(sql`rowid`)).all();
  }
}

/** An account without its credentials: what everything but the bank adapter sees. */
export interface BankAccountRecord {
  id: string;
  companyId: string;
  bank: string;
  accountNumber: string;
  bik: string;
  currency: string;
  alias: string;
  sandboxOpsPerDay: number | null;
  sandboxOpeningBalance: number | null;
  createdAt: string;
}
