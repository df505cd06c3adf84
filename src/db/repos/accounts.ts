// Companies and bank accounts, in portable SQL (see ../sql-port.ts): the same code on both stores.

import { type CacheChanges, RowCache } from "../row-cache";
import { bankAccounts, companies } from "../schema";
import { type SqlPort, TableRows } from "../sql-port";

export type CompanyRow = typeof companies.$inferSelect;
export type BankAccountRow = typeof bankAccounts.$inferSelect;

// Lists keep creation order; the port's insertion order breaks ties between rows created in the
// same millisecond.
export class CompanyRepository {
  private readonly rows: TableRows<typeof companies>;
  private readonly byId;
  private readonly all;

  constructor(port: SqlPort) {
    this.rows = new TableRows(port, companies);
    this.byId = port.prepare<Record<string, unknown>, [string]>(`${this.rows.selectAll()} WHERE id = ?`);
    this.all = port.prepare<Record<string, unknown>, []>(
      `${this.rows.selectAll()} ORDER BY created_at, ${port.insertionOrder}`,
    );
  }

  insert(row: CompanyRow): void {
    this.rows.insert(row);
  }

  findById(id: string): CompanyRow | null {
    const raw = this.byId.get(id);
    return raw ? this.rows.fromDriver(raw) : null;
  }

  list(): CompanyRow[] {
    return this.all.all().map((raw) => this.rows.fromDriver(raw));
  }
}

export class BankAccountRepository {
  private readonly rows: TableRows<typeof bankAccounts>;
  private readonly byId;
  private readonly byNumber;
  private readonly all;
  private readonly ofCompany;
  private readonly cache: RowCache<BankAccountRecord>;

  constructor(port: SqlPort, changes: CacheChanges) {
    this.cache = new RowCache(changes, "bank_accounts");
    this.rows = new TableRows(port, bankAccounts);
    const select = this.rows.selectAll();
    const order = `ORDER BY created_at, ${port.insertionOrder}`;
    // Hot path: every account-scoped request resolves its account here (through the cache).
    this.byId = port.prepare<Record<string, unknown>, [string]>(`${select} WHERE id = ?`);
    this.byNumber = port.prepare<{ id: string }, [string, string]>(
      "SELECT id FROM bank_accounts WHERE account_number = ? AND bik = ?",
    );
    this.all = port.prepare<Record<string, unknown>, []>(`${select} ${order}`);
    this.ofCompany = port.prepare<Record<string, unknown>, [string]>(
      `${select} WHERE company_id = ? ${order}`,
    );
  }

  insert(row: BankAccountRow): void {
    this.cache.writeAll(() => this.rows.insert(row));
  }

  setConnection(id: string, connectionId: string): void {
    this.cache.write(id, () => this.rows.update({ connectionId }, "id", id));
  }

  /** Accounts reached through this login. */
  listByConnection(connectionId: string): BankAccountRecord[] {
    return this.list().filter((a) => a.connectionId === connectionId);
  }

  /** Treat the result as read-only: it may be shared with other requests. */
  findById(id: string): BankAccountRecord | null {
    return this.cache.get(id, () => {
      const raw = this.byId.get(id);
      return raw ? this.rows.fromDriver(raw) : null;
    });
  }

  /** The account with this number at this bank (BIK), if one was added. */
  findByNumber(accountNumber: string, bik: string): { id: string } | null {
    return this.byNumber.get(accountNumber, bik);
  }

  list(companyId?: string): BankAccountRecord[] {
    const rows = companyId === undefined ? this.all.all() : this.ofCompany.all(companyId);
    return rows.map((raw) => this.rows.fromDriver(raw));
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
