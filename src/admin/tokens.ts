// API tokens: created (the raw value returned once, only its hash kept), listed, changed and
// revoked, each change audited. A token of an OAuth grant may only be narrowed.

import { isSandboxAccount } from "../auth/access-policy";
import { DEFAULT_RATE_LIMIT } from "../auth/guard";
import { parseIpRange } from "../auth/ip";
import {
  generateToken,
  hashToken,
  type TokenMode,
  type TokenPurpose,
  tokenDisplayPrefix,
} from "../auth/tokens";
import { newId } from "../core/clock";
import { ApiError, validationError } from "../core/errors";
import { requireWellFormed } from "../core/text";
import type { BankAccountRecord, BankAccountRepository, CompanyRepository } from "../db/repos/accounts";
import type { AccountGrant, ApiTokenRow, TokenRepository } from "../db/repos/tokens";
import type { AdminActor, AdminAreaDeps } from "./audit";
import type { CreateTokenInput, PatchTokenInput, TokenGrantInput, TokenView } from "./model";

const NO_PAYMENTS_FOR_AGENTS = "Токен агента (mcp) не может получить право на платежи";

export interface AdminTokensDeps extends AdminAreaDeps {
  companies: CompanyRepository;
  accounts: BankAccountRepository;
  tokens: TokenRepository;
}

export class AdminTokens {
  constructor(private readonly deps: AdminTokensDeps) {}

  create(input: CreateTokenInput, actor: AdminActor = {}): TokenView & { token: string } {
    const company = this.deps.companies.findById(input.company_id);
    if (!company) throw new ApiError("not_found", "Компания не найдена", { field: "company_id" });
    const name = checkName(input.name);
    const mode = input.mode ?? "live";
    const scopeSend = input.scope_send_payments ?? false;
    const grants = this.checkGrants(company.id, input.purpose, mode, input.accounts ?? []);
    if (input.purpose === "mcp" && scopeSend) {
      throw validationError("scope_send_payments", NO_PAYMENTS_FOR_AGENTS);
    }
    const allowedIps = checkIps(input.allowed_ips ?? []);
    const rateLimit = checkRateLimit(input.rate_limit_per_minute ?? null);
    const expiresAt = checkExpiry(input.expires_at ?? null);

    const raw = generateToken(mode);
    const row: ApiTokenRow = {
      id: newId(),
      companyId: company.id,
      name,
      purpose: input.purpose,
      mode,
      tokenHash: hashToken(raw),
      tokenPrefix: tokenDisplayPrefix(raw),
      scopeReadStatements: input.scope_read_statements ?? false,
      scopeSendPayments: scopeSend,
      allowedIps,
      rateLimitPerMinute: rateLimit,
      expiresAt,
      revokedAt: null,
      createdAt: this.deps.clock.now().toISOString(),
      lastUsedAt: null,
      oauthGrantId: null,
    };
    this.deps.atomically(() => {
      this.deps.tokens.insert(row, grants);
      this.deps.audit.record("admin.token.create", row.id, actor, {
        company_id: company.id,
        name,
        purpose: input.purpose,
        mode,
      });
    });
    return { ...this.view(row.id), token: raw };
  }

  list(companyId?: string): TokenView[] {
    return this.deps.tokens.list(companyId).map((row) => tokenView(row, this.deps.tokens.grants(row.id)));
  }

  view(id: string): TokenView {
    return tokenView(this.row(id), this.deps.tokens.grants(id));
  }

  patch(id: string, input: PatchTokenInput, actor: AdminActor = {}): TokenView {
    const row = this.row(id);
    const patch: Partial<ApiTokenRow> = {};
    if (input.name !== undefined) patch.name = checkName(input.name);
    const read = input.scopes?.read_statements ?? input.scope_read_statements;
    const send = input.scopes?.send_payments ?? input.scope_send_payments;
    if (read !== undefined) patch.scopeReadStatements = read;
    if (send !== undefined) {
      if (row.purpose === "mcp" && send) throw validationError("scope_send_payments", NO_PAYMENTS_FOR_AGENTS);
      patch.scopeSendPayments = send;
    }
    if (input.allowed_ips !== undefined) patch.allowedIps = checkIps(input.allowed_ips);
    if (input.rate_limit_per_minute !== undefined)
      patch.rateLimitPerMinute = checkRateLimit(input.rate_limit_per_minute);
    if (input.expires_at !== undefined) patch.expiresAt = checkExpiry(input.expires_at);
    const grants = input.accounts
      ? this.checkGrants(row.companyId, row.purpose, row.mode, input.accounts)
      : undefined;
    if (row.oauthGrantId !== null)
      checkWithinConsent(row, () => this.deps.tokens.grants(row.id), patch, grants);
    this.deps.atomically(() => {
      this.deps.tokens.update(id, patch, grants);
      this.deps.audit.record("admin.token.update", id, actor, input);
    });
    return this.view(id);
  }

  revoke(id: string, actor: AdminActor = {}): TokenView {
    const row = this.row(id);
    if (row.revokedAt === null) {
      this.deps.atomically(() => {
        this.deps.tokens.update(id, { revokedAt: this.deps.clock.now().toISOString() });
        this.deps.audit.record("admin.token.revoke", id, actor);
      });
    }
    return this.view(id);
  }

  private row(id: string): ApiTokenRow {
    const row = this.deps.tokens.findById(id);
    if (!row) throw new ApiError("not_found", "Токен не найден");
    return row;
  }

  private checkGrants(
    companyId: string,
    purpose: TokenPurpose,
    mode: TokenMode,
    grants: TokenGrantInput[],
  ): AccountGrant[] {
    const seen = new Set<string>();
    const outside: BankAccountRecord[] = [];
    const checked = grants.map((g, i) => {
      const account = this.deps.accounts.findById(g.bank_account_id);
      if (!account || account.companyId !== companyId) {
        throw validationError(
          `accounts[${i}].bank_account_id`,
          "Счёт не найден среди счетов компании токена",
        );
      }
      if (seen.has(account.id)) throw validationError(`accounts[${i}].bank_account_id`, "Счёт указан дважды");
      seen.add(account.id);
      if (purpose === "mcp" && g.allow_send_payments) {
        throw validationError(`accounts[${i}].allow_send_payments`, NO_PAYMENTS_FOR_AGENTS);
      }
      if (mode === "test" && !isSandboxAccount(account)) outside.push(account);
      return {
        bankAccountId: account.id,
        allowReadStatements: g.allow_read_statements ?? false,
        allowSendPayments: g.allow_send_payments ?? false,
      };
    });
    // A test token reaches sandboxes only: an allow beyond them would be refused at every use.
    if (outside.length > 0) {
      throw validationError(
        "accounts",
        `Тестовый токен (svc_test_) работает только со счетами песочницы; счета вне песочницы: ${outside.map((a) => a.alias).join(", ")}. Выпустите боевой токен (mode: live)`,
        { bank_account_ids: outside.map((a) => a.id) },
      );
    }
    return checked;
  }
}

/**
 * The token of an OAuth grant carries what the operator consented to: it may be narrowed (fewer
 * accounts, no scope, an IP list, an earlier expiry), never widened; more needs a new consent (the
 * app signs in again). Each refresh sets the expiry of the new access token (an hour).
 */
function checkWithinConsent(
  row: ApiTokenRow,
  consentedGrants: () => AccountGrant[],
  patch: Partial<ApiTokenRow>,
  grants?: AccountGrant[],
): void {
  const again =
    "Доступ OAuth-приложения можно только сузить; больше — только новым согласием (приложение входит заново)";
  if (patch.scopeReadStatements === true && !row.scopeReadStatements) throw validationError("scopes", again);
  if (grants) {
    const consented = new Set(consentedGrants().map((g) => g.bankAccountId));
    const i = grants.findIndex((g) => !consented.has(g.bankAccountId));
    if (i >= 0) throw validationError(`accounts[${i}].bank_account_id`, again);
  }
  const later =
    patch.expiresAt === null ||
    (patch.expiresAt !== undefined &&
      row.expiresAt !== null &&
      Date.parse(patch.expiresAt) > Date.parse(row.expiresAt));
  if (later) throw validationError("expires_at", again);
}

function checkName(value: string): string {
  const name = requireWellFormed("name", value.trim());
  if (name.length === 0 || name.length > 128)
    throw validationError("name", "Имя токена: от 1 до 128 символов");
  return name;
}

function checkIps(ips: string[]): string[] {
  ips.forEach((ip, i) => {
    if (!parseIpRange(ip)) throw validationError(`allowed_ips[${i}]`, `Неверный IP-адрес или подсеть: ${ip}`);
  });
  return ips.map((ip) => ip.trim());
}

function checkRateLimit(value: number | null): number | null {
  if (value === null) return null;
  if (!Number.isInteger(value) || value < 1 || value > 10_000) {
    throw validationError("rate_limit_per_minute", "rate_limit_per_minute: целое от 1 до 10000");
  }
  return value;
}

function checkExpiry(value: string | null): string | null {
  if (value === null) return null;
  const ms = Date.parse(value);
  if (Number.isNaN(ms) || !/^\d{4}-\d{2}-\d{2}T/.test(value)) {
    throw validationError("expires_at", "expires_at: ожидается время ISO 8601");
  }
  return new Date(ms).toISOString();
}

function tokenView(row: ApiTokenRow, grants: AccountGrant[]): TokenView {
  return {
    api_token_id: row.id,
    company_id: row.companyId,
    name: row.name,
    purpose: row.purpose,
    mode: row.mode,
    token_prefix: row.tokenPrefix,
    scopes: { read_statements: row.scopeReadStatements, send_payments: row.scopeSendPayments },
    accounts: grants.map((g) => ({
      bank_account_id: g.bankAccountId,
      allow_read_statements: g.allowReadStatements,
      allow_send_payments: g.allowSendPayments,
    })),
    allowed_ips: row.allowedIps,
    rate_limit_per_minute: row.rateLimitPerMinute ?? DEFAULT_RATE_LIMIT[row.purpose],
    rate_limit_is_default: row.rateLimitPerMinute === null,
    expires_at: row.expiresAt,
    revoked_at: row.revokedAt,
    created_at: row.createdAt,
    last_used_at: row.lastUsedAt,
  };
}
