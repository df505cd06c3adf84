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
  private readonly cache: RowCache<BankAccountRecord>;

  constructor(
    private readonly db: Db,
    sqlite: Database,
    changes: ExternalChanges,
  ) {
    this.cache = new RowCache(changes);
    // Hot path: every account-scoped request resolves its account here.
    this.byId = sqlite.query<BankAccountRecord, [string]>(
      `SELECT id, company_id AS companyId, bank, account_number AS accountNumber, bik, currency, alias,
              environment, connection_id AS connectionId, sandbox_ops_per_day AS sandboxOpsPerDay, sandbox_opening_balance AS sandboxOpeningBalance,
              created_at AS createdAt
         FROM bank_accounts WHERE id = ?`,
    );
  }

  insert(row: BankAccountRow): void {
    this.cache.writeAll(() => this.db.insert(bankAccounts).values(row).run());
  }

  setConnection(id: string, connectionId: string): void {
    this.cache.write(id, () =>
      this.db.update(bankAccounts).set({ connectionId }).where(eq(bankAccounts.id, id)).run(),
    );
  }

  /** Accounts reached through this login. */
  listByConnection(connectionId: string): BankAccountRecord[] {
    return this.list().filter((a) => a.connectionId === connectionId);
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
        environment: bankAccounts.environment,
        connectionId: bankAccounts.connectionId,
        sandboxOpsPerDay: bankAccounts.sandboxOpsPerDay,
        sandboxOpeningBalance: bankAccounts.sandboxOpeningBalance,
        createdAt: bankAccounts.createdAt,
      })
      .from(bankAccounts);
    const filtered = companyId ? q.where(and(eq(bankAccounts.companyId, companyId))) : q;
    return filtered.orderBy(asc(bankAccounts.createdAt), asc(sql`rowid`)).all();
  }
}

/** An account (its credentials live in its connection, see connections.ts). */
export interface BankAccountRecord {
  id: string;
  companyId: string;
  bank: string;
  accountNumber: string;
  bik: string;
  currency: string;
  alias: string;
  environment: "production" | "sandbox";
  connectionId: string | null;
  sandboxOpsPerDay: number | null;
  sandboxOpeningBalance: number | null;
  createdAt: string;
}
