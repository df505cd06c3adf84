// Tokens and their grants, in portable SQL (see ../sql-port.ts): the same code on SQLite and PostgreSQL.

import { type CacheChanges, RowCache } from "../row-cache";
import { apiTokens, tokenAccounts } from "../schema";
import { type SqlPort, TableRows } from "../sql-port";

export type ApiTokenRow = typeof apiTokens.$inferSelect;
export type TokenAccountRow = typeof tokenAccounts.$inferSelect;

/** What the guard needs to decide about a presented token. */
export interface TokenAuthRecord {
  id: string;
  companyId: string;
  purpose: "integration" | "mcp";
  mode: "live" | "test";
  scopeReadStatements: boolean;
  scopeSendPayments: boolean;
  allowedIps: string[];
  rateLimitPerMinute: number | null;
  expiresAt: string | null;
  revokedAt: string | null;
  /** Set for the token of an OAuth grant (it works at /mcp only). */
  oauthGrantId: string | null;
}

interface RawAuthRow
  extends Omit<TokenAuthRecord, "allowedIps" | "scopeReadStatements" | "scopeSendPayments"> {
  allowedIps: string;
  scopeReadStatements: number;
  scopeSendPayments: number;
}

export interface AccountGrant {
  bankAccountId: string;
  allowReadStatements: boolean;
  allowSendPayments: boolean;
}

/** A token's grants, as a list and by bank account id, loaded together. */
interface GrantSet {
  list: AccountGrant[];
  byAccount: ReadonlyMap<string, AccountGrant>;
}

export class TokenRepository {
  private readonly byHash;
  private readonly grantsOf;
  private readonly touchStmt;
  private readonly byId;
  private readonly all;
  private readonly ofCompany;
  private readonly deleteGrants;
  private readonly tokenRows: TableRows<typeof apiTokens>;
  private readonly grantRows: TableRows<typeof tokenAccounts>;

  private readonly records: RowCache<TokenAuthRecord>;
  private readonly grantSets: RowCache<GrantSet>;

  constructor(
    private readonly port: SqlPort,
    changes: CacheChanges,
  ) {
    this.records = new RowCache(changes, "api_tokens");
    this.grantSets = new RowCache(changes, "token_accounts");
    this.tokenRows = new TableRows(port, apiTokens);
    this.grantRows = new TableRows(port, tokenAccounts);
    this.byHash = port.prepare<RawAuthRow, [string]>(
      `SELECT id, company_id AS "companyId", purpose, mode, scope_read_statements AS "scopeReadStatements",
              scope_send_payments AS "scopeSendPayments", allowed_ips AS "allowedIps",
              rate_limit_per_minute AS "rateLimitPerMinute", expires_at AS "expiresAt", revoked_at AS "revokedAt",
              oauth_grant_id AS "oauthGrantId"
         FROM api_tokens WHERE token_hash = ?`,
    );
    this.grantsOf = port.prepare<{ bankAccountId: string; r: number; s: number }, [string]>(
      `SELECT bank_account_id AS "bankAccountId", allow_read_statements AS r, allow_send_payments AS s
         FROM token_accounts WHERE token_id = ?`,
    );
    this.touchStmt = port.prepare<unknown, [string, string]>(
      `UPDATE api_tokens SET last_used_at = ? WHERE id = ?`,
    );
    const select = this.tokenRows.selectAll();
    const order = `ORDER BY created_at, ${port.insertionOrder}`;
    this.byId = port.prepare<Record<string, unknown>, [string]>(`${select} WHERE id = ?`);
    this.all = port.prepare<Record<string, unknown>, []>(`${select} ${order}`);
    this.ofCompany = port.prepare<Record<string, unknown>, [string]>(
      `${select} WHERE company_id = ? ${order}`,
    );
    this.deleteGrants = port.prepare<unknown, [string]>("DELETE FROM token_accounts WHERE token_id = ?");
  }

  /** Treat the result as read-only: it may be shared with other requests. */
  findByHash(hash: string): TokenAuthRecord | null {
    return this.records.get(hash, () => {
      const row = this.byHash.get(hash);
      if (!row) return null;
      return {
        ...row,
        scopeReadStatements: row.scopeReadStatements === 1,
        scopeSendPayments: row.scopeSendPayments === 1,
        allowedIps: JSON.parse(row.allowedIps) as string[],
      };
    });
  }

  /** Treat the result as read-only: it may be shared with other requests. */
  grants(tokenId: string): AccountGrant[] {
    return this.grantSet(tokenId).list;
  }

  /** The token's grants by bank account id (shared with other requests, like `grants`). */
  grantsByAccount(tokenId: string): ReadonlyMap<string, AccountGrant> {
    return this.grantSet(tokenId).byAccount;
  }

  private grantSet(tokenId: string): GrantSet {
    return this.grantSets.get(tokenId, () => {
      const list = this.grantsOf.all(tokenId).map((g) => ({
        bankAccountId: g.bankAccountId,
        allowReadStatements: g.r === 1,
        allowSendPayments: g.s === 1,
      }));
      return { list, byAccount: new Map(list.map((g) => [g.bankAccountId, g])) };
    })!;
  }

  /** A write to tokens or grants: records are kept by hash, so every cached one goes. */
  private writing(write: () => void): void {
    this.records.writeAll(() => this.grantSets.writeAll(write));
  }

  touch(tokenId: string, at: string): void {
    this.touchStmt.run(at, tokenId);
  }

  // Transactions nest (SQLite: as savepoints; PostgreSQL: joining the open one), so a caller may
  // wrap these in its own transaction together with the audit entry.
  insert(row: ApiTokenRow, grants: AccountGrant[]): void {
    this.writing(() =>
      this.port.transaction(() => {
        this.tokenRows.insert(row);
        this.insertGrants(row.id, grants);
      }),
    );
  }

  update(id: string, patch: Partial<ApiTokenRow>, grants?: AccountGrant[]): void {
    this.writing(() =>
      this.port.transaction(() => {
        this.tokenRows.update(patch, "id", id);
        if (grants) {
          this.deleteGrants.run(id);
          this.insertGrants(id, grants);
        }
      }),
    );
  }

  findById(id: string): ApiTokenRow | null {
    const raw = this.byId.get(id);
    return raw ? this.tokenRows.fromDriver(raw) : null;
  }

  list(companyId?: string): ApiTokenRow[] {
    const rows = companyId === undefined ? this.all.all() : this.ofCompany.all(companyId);
    return rows.map((raw) => this.tokenRows.fromDriver(raw));
  }

  private insertGrants(tokenId: string, grants: AccountGrant[]): void {
    for (const g of grants) this.grantRows.insert({ tokenId, ...g });
  }
}
