import type { Database } from "bun:sqlite";
import { asc, eq, sql } from "drizzle-orm";
import type { Db } from "../open";
import { apiTokens, tokenAccounts } from "../schema";
import { type ExternalChanges, RowCache } from "../sqlite/row-cache";

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

  private readonly records: RowCache<TokenAuthRecord>;
  private readonly grantSets: RowCache<GrantSet>;

  constructor(
    private readonly db: Db,
    private readonly sqlite: Database,
    changes: ExternalChanges,
  ) {
    this.records = new RowCache(changes);
    this.grantSets = new RowCache(changes);
    this.byHash = sqlite.query<RawAuthRow, [string]>(
      `SELECT id, company_id AS companyId, purpose, mode, scope_read_statements AS scopeReadStatements,
              scope_send_payments AS scopeSendPayments, allowed_ips AS allowedIps,
              rate_limit_per_minute AS rateLimitPerMinute, expires_at AS expiresAt, revoked_at AS revokedAt,
              oauth_grant_id AS oauthGrantId
         FROM api_tokens WHERE token_hash = ?`,
    );
    this.grantsOf = sqlite.query<{ bankAccountId: string; r: number; s: number }, [string]>(
      `SELECT bank_account_id AS bankAccountId, allow_read_statements AS r, allow_send_payments AS s
         FROM token_accounts WHERE token_id = ?`,
    );
    this.touchStmt = sqlite.query<unknown, [string, string]>(
      `UPDATE api_tokens SET last_used_at = ? WHERE id = ?`,
    );
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

  // bun:sqlite transactions nest (as savepoints), so a caller may wrap these in its own
  // transaction together with the audit entry.
  insert(row: ApiTokenRow, grants: AccountGrant[]): void {
    this.writing(() =>
      this.sqlite
        .transaction(() => {
          this.db.insert(apiTokens).values(row).run();
          for (const g of grants)
            this.db
              .insert(tokenAccounts)
              .values({ tokenId: row.id, ...g })
              .run();
        })
        .immediate(),
    );
  }

  update(id: string, patch: Partial<ApiTokenRow>, grants?: AccountGrant[]): void {
    this.writing(() =>
      this.sqlite
        .transaction(() => {
          if (Object.keys(patch).length > 0)
            this.db.update(apiTokens).set(patch).where(eq(apiTokens.id, id)).run();
          if (grants) {
            this.db.delete(tokenAccounts).where(eq(tokenAccounts.tokenId, id)).run();
            for (const g of grants)
              this.db
                .insert(tokenAccounts)
                .values({ tokenId: id, ...g })
                .run();
          }
        })
        .immediate(),
    );
  }

  findById(id: string): ApiTokenRow | null {
    return this.db.select().from(apiTokens).where(eq(apiTokens.id, id)).get() ?? null;
  }

  list(companyId?: string): ApiTokenRow[] {
    const q = this.db.select().from(apiTokens);
    return (companyId ? q.where(eq(apiTokens.companyId, companyId)) : q)
      .orderBy(asc(apiTokens.createdAt), asc(sql`rowid`))
      .all();
  }
}
