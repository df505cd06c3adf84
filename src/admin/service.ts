// Administration: companies, bank accounts, tokens and the audit log. Used by the admin API,
// the admin pages and the `svc admin` command alike. Every change is audited.
import { randomBytes } from "node:crypto";
import type { AuditEntry, AuditLog } from "../audit/audit-log";
import { auditLogPage } from "../audit/audit-page";
import { isSandboxBank } from "../auth/access-policy";
import { DEFAULT_RATE_LIMIT } from "../auth/guard";
import { parseIpRange } from "../auth/ip";
import type { SecretBox } from "../auth/secret-box";
import { generateToken, hashToken, type TokenPurpose, tokenDisplayPrefix } from "../auth/tokens";
import type { BankAccountRef, BankAdapter } from "../banks/adapter";
import type { BankConnections } from "../banks/connections";
import { type Clock, newId } from "../core/clock";
import { ApiError, validationError } from "../core/errors";
import { requireWellFormed } from "../core/text";
import type {
  BankAccountRecord,
  BankAccountRepository,
  CompanyRepository,
  CompanyRow,
} from "../db/repos/accounts";
import type { BankConnectionRepository, ConnectionRecord, ConnectionStatus } from "../db/repos/connections";
import type { AccountGrant, ApiTokenRow, TokenRepository } from "../db/repos/tokens";
import { maskAccountNumber } from "../formats/mask";
import { formatKopecks, kopecksToJsonNumber, rublesToKopecks } from "../formats/money";
import { isValidInn, isValidKpp } from "../formats/validators";
import type {
  AuditLogQueryInput,
  BankAccountView,
  CompanyView,
  CreateBankAccountInput,
  CreateCompanyInput,
  CreateTokenInput,
  DiscoveredAccountsView,
  ImportAccountsInput,
  PatchTokenInput,
  TokenGrantInput,
  TokenView,
} from "./model";

export interface AdminActor {
  requestId?: string | null;
  ip?: string | null;
}

// The admin pages name the views through the service.
export type { BankAccountView, CompanyView, TokenGrantInput, TokenView } from "./model";

const ALIAS_RE = /^[A-Za-z0-9_-]{1,32}$/;
/** How long the bank's authorize page may take before its answer is refused. */
const CONSENT_STATE_TTL_MS = 15 * 60_000;
const DEFAULT_SANDBOX_OPS_PER_DAY = 5;
const DEFAULT_SANDBOX_OPENING_BALANCE = 100_000_000; // 1 000 000.00 RUB in kopecks
/** 1 000 000 000 000.00 RUB: a sandbox balance grows by at most ~7.4·10^8 kopecks a day, so a
 *  century of generated days stays far inside the safe integers (and exact as a JSON number). */
const MAX_SANDBOX_OPENING_BALANCE = 100_000_000_000_000;

export interface AdminDeps {
  clock: Clock;
  companies: CompanyRepository;
  accounts: BankAccountRepository;
  tokens: TokenRepository;
  audit: AuditLog;
  secretBox: SecretBox | null;
  knownBanks: () => string[];
  /** The adapter of a known bank (its login checks, environments, account discovery). */
  bankAdapter: (bank: string) => BankAdapter;
  /** The adapter's view of an account, login included. */
  bankRef: (account: BankAccountRecord) => BankAccountRef;
  connections: BankConnections;
  connectionRepo: BankConnectionRepository;
  /** The service's public address: where the bank sends the operator's browser back. */
  publicUrl: string;
  /** Runs `fn` in one write transaction: a change and its audit entry land together or not at all. */
  atomically: <T>(fn: () => T) => T;
}

export class AdminService {
  constructor(private readonly deps: AdminDeps) {}

  // ---- companies

  createCompany(input: CreateCompanyInput, actor: AdminActor = {}): CompanyView {
    const name = requireWellFormed("name", input.name.trim());
    if (name.length === 0 || name.length > 256)
      throw validationError("name", "Название: от 1 до 256 символов");
    if (!isValidInn(input.inn)) throw validationError("inn", "Неверный ИНН (формат или контрольная сумма)");
    const kpp = input.kpp ?? null;
    if (kpp !== null && !isValidKpp(kpp)) throw validationError("kpp", "Неверный КПП");
    const row: CompanyRow = { id: newId(), name, inn: input.inn, kpp, createdAt: this.now() };
    this.deps.atomically(() => {
      this.deps.companies.insert(row);
      this.audit("admin.company.create", row.id, { name, inn: input.inn }, actor);
    });
    return companyView(row);
  }

  listCompanies(): CompanyView[] {
    return this.deps.companies.list().map(companyView);
  }

  // ---- bank accounts

  createBankAccount(input: CreateBankAccountInput, actor: AdminActor = {}): BankAccountView {
    const company = this.deps.companies.findById(input.company_id);
    if (!company) throw new ApiError("not_found", "Компания не найдена", { field: "company_id" });
    if (!this.deps.knownBanks().includes(input.bank)) {
      throw validationError("bank", `Неизвестный банк; доступны: ${this.deps.knownBanks().join(", ")}`);
    }
    if (!/^\d{20}$/.test(input.account_number)) {
      throw validationError("account_number", "Номер счёта: ровно 20 цифр");
    }
    if (!/^\d{9}$/.test(input.bik)) throw validationError("bik", "БИК: ровно 9 цифр");
    const currency = input.currency ?? "RUB";
    if (!/^[A-Z]{3}$/.test(currency)) throw validationError("currency", "Валюта: три заглавные буквы (RUB)");
    const alias = input.alias ?? input.account_number.slice(-4);
    if (!ALIAS_RE.test(alias))
      throw validationError("alias", "Псевдоним: 1–32 символа A-Z, a-z, 0-9, _ или -");

    let sandboxOps: number | null = null;
    let sandboxOpening: number | null = null;
    if (isSandboxBank(input.bank)) {
      sandboxOps = input.sandbox?.ops_per_day ?? DEFAULT_SANDBOX_OPS_PER_DAY;
      if (!Number.isInteger(sandboxOps) || sandboxOps < 1 || sandboxOps > 5000) {
        throw validationError("sandbox.ops_per_day", "ops_per_day: целое от 1 до 5000");
      }
      const opening = input.sandbox?.opening_balance;
      if (opening === undefined) sandboxOpening = DEFAULT_SANDBOX_OPENING_BALANCE;
      else {
        sandboxOpening = rublesToKopecks(opening, { max: MAX_SANDBOX_OPENING_BALANCE });
        if (sandboxOpening === null) {
          throw validationError(
            "sandbox.opening_balance",
            `opening_balance: неотрицательная сумма в рублях, до 2 знаков, не больше ${formatKopecks(MAX_SANDBOX_OPENING_BALANCE)}`,
          );
        }
      }
    } else if (input.sandbox !== undefined) {
      throw validationError("sandbox", "Параметры sandbox допустимы только для тестовых банков");
    }

    const adapter = this.deps.bankAdapter(input.bank);
    const environment = input.environment ?? "production";
    if (!(adapter.environments ?? ["production"]).includes(environment)) {
      throw validationError("environment", `У банка ${input.bank} нет среды ${environment}`);
    }
    let connectionStatus: ConnectionStatus = "active";
    if (adapter.checkCredentials) {
      const check = adapter.checkCredentials(input.credentials, environment);
      if (!check.ok) throw validationError("credentials", check.message);
      connectionStatus = check.status;
    }
    if (input.credentials !== undefined && !this.deps.secretBox) {
      throw validationError("credentials", "Хранение реквизитов банка невозможно: не задан SVC_SECRET_KEY");
    }

    const duplicate = (existingId: string | undefined) =>
      new ApiError("conflict", "Счёт с таким номером и БИК уже добавлен", {
        field: "account_number",
        ...(existingId ? { bank_account_id: existingId } : {}),
      });
    const existing = this.deps.accounts.findByNumber(input.account_number, input.bik);
    if (existing) throw duplicate(existing.id);
    const id = newId();
    try {
      this.deps.atomically(() => {
        const connectionId =
          input.credentials === undefined
            ? null
            : this.deps.connections.create(input.bank, input.credentials, connectionStatus);
        this.deps.accounts.insert({
          id,
          companyId: company.id,
          bank: input.bank,
          accountNumber: input.account_number,
          bik: input.bik,
          currency,
          alias,
          environment,
          connectionId,
          sandboxOpsPerDay: sandboxOps,
          sandboxOpeningBalance: sandboxOpening,
          createdAt: this.now(),
        });
        // The audit entry names the account but never its credentials.
        this.audit(
          "admin.bank_account.create",
          id,
          { company_id: company.id, bank: input.bank, alias, environment },
          actor,
        );
      });
    } catch (e) {
      // Added by another process between the look and the insert: the unique index decides.
      if (e instanceof Error && /UNIQUE constraint failed: bank_accounts\.account_number/.test(e.message)) {
        throw duplicate(this.deps.accounts.findByNumber(input.account_number, input.bik)?.id);
      }
      throw e;
    }
    return this.accountView(this.deps.accounts.findById(id)!);
  }

  listBankAccounts(companyId?: string): BankAccountView[] {
    return this.deps.accounts.list(companyId).map((a) => this.accountView(a));
  }

  private accountView(a: BankAccountRecord): BankAccountView {
    return bankAccountView(a, a.connectionId ? this.deps.connectionRepo.findById(a.connectionId) : null);
  }

  /**
   * A new login for the account's bank connection (a renewed JWT, another OAuth app): checked like
   * at creation, sealed, and shared by every account reached through the connection.
   */
  replaceCredentials(bankAccountId: string, credentials: unknown, actor: AdminActor = {}): BankAccountView {
    const account = this.findBankAccount(bankAccountId);
    const adapter = this.deps.bankAdapter(account.bank);
    let status: ConnectionStatus = "active";
    if (adapter.checkCredentials) {
      const check = adapter.checkCredentials(credentials, account.environment);
      if (!check.ok) throw validationError("credentials", check.message);
      status = check.status;
    }
    if (!this.deps.secretBox) {
      throw validationError("credentials", "Хранение реквизитов банка невозможно: не задан SVC_SECRET_KEY");
    }
    this.deps.atomically(() => {
      if (account.connectionId) {
        this.deps.connections.replace(account.connectionId, credentials, status);
      } else {
        const connectionId = this.deps.connections.create(account.bank, credentials, status);
        this.deps.accounts.setConnection(account.id, connectionId);
      }
      this.audit("admin.bank_account.credentials", account.id, { bank: account.bank }, actor);
    });
    return this.accountView(this.deps.accounts.findById(account.id)!);
  }

  // ---- the bank's consent flow (OAuth logins)

  private callbackUrl(bank: string): string {
    return `${this.deps.publicUrl}/admin/banks/${bank}/callback`;
  }

  /** The bank's page where the customer approves svc's access for this account's login. */
  async startBankConsent(bankAccountId: string, actor: AdminActor = {}): Promise<string> {
    const account = this.findBankAccount(bankAccountId);
    const consent = this.deps.bankAdapter(account.bank).consent;
    const login = account.connectionId ? this.deps.connections.read(account.connectionId) : null;
    if (!consent || !account.connectionId || !consent.appliesTo(login)) {
      throw new ApiError("bank_not_supported", "Для этого счёта вход через банк не нужен");
    }
    const state = randomBytes(32).toString("base64url");
    const url = await consent.start(login, this.callbackUrl(account.bank), state);
    this.deps.atomically(() => {
      this.deps.connectionRepo.addAuthState(
        hashToken(state),
        account.connectionId!,
        this.deps.clock.now().getTime() + CONSENT_STATE_TTL_MS,
      );
      this.audit("admin.bank_connection.consent_start", account.id, { bank: account.bank }, actor);
    });
    return url;
  }

  /**
   * The bank sent the operator back: with a code (exchanged for tokens, stored sealed, the login is
   * active) or with an error (the customer declined). `state` is single use and expires.
   */
  async finishBankConsent(
    bank: string,
    answer: { state?: string; code?: string; error?: string },
    actor: AdminActor = {},
  ): Promise<{ accounts: BankAccountView[] }> {
    const consent = this.deps.knownBanks().includes(bank) ? this.deps.bankAdapter(bank).consent : undefined;
    if (!consent) throw new ApiError("not_found", "Банк не найден");
    const connectionId = answer.state
      ? this.deps.connectionRepo.takeAuthState(hashToken(answer.state), this.deps.clock.now().getTime())
      : null;
    if (!connectionId) {
      throw validationError(
        "state",
        "Ссылка из банка устарела или уже использована; начните подключение заново",
      );
    }
    const accounts = this.deps.accounts.listByConnection(connectionId);
    const target = accounts[0]?.id ?? connectionId;
    if (answer.error !== undefined || !answer.code) {
      this.deps.connectionRepo.setStatus(
        connectionId,
        "consent_required",
        `Доступ не подтверждён в банке (${(answer.error ?? "нет кода").slice(0, 64)})`,
        this.now(),
      );
      this.recordAction("admin.bank_connection.consent_declined", target, actor);
      throw validationError("code", "Банк не подтвердил доступ");
    }
    const completed = await consent.finish(
      this.deps.connections.read(connectionId),
      answer.code,
      this.callbackUrl(bank),
    );
    this.deps.atomically(() => {
      this.deps.connections.replace(connectionId, completed, "active");
      this.audit("admin.bank_connection.consent_done", target, { bank }, actor);
    });
    return { accounts: accounts.map((a) => this.accountView(a)) };
  }

  // ---- the customer's accounts seen through a stored bank login

  /** The account, which must be at `bank` (the bank named in the address). */
  accountAtBank(bankAccountId: string, bank: string): BankAccountView {
    const account = this.findBankAccount(bankAccountId);
    if (account.bank !== bank) {
      throw validationError("bank_account_id", `Счёт не в банке ${bank}`);
    }
    return this.accountView(account);
  }

  /** The accounts the bank shows through this account's login, each with its svc account if added. */
  async discoverAccounts(bankAccountId: string): Promise<DiscoveredAccountsView> {
    const account = this.findBankAccount(bankAccountId);
    const adapter = this.deps.bankAdapter(account.bank);
    if (!adapter.listAccounts) {
      throw new ApiError("bank_not_supported", `Банк ${account.bank} не показывает список счетов`);
    }
    const found = await adapter.listAccounts(this.deps.bankRef(account));
    return {
      accounts: found.map((a) => ({
        ...a,
        bank_account_id: this.deps.accounts.findByNumber(a.account_number, a.bik)?.id ?? null,
      })),
    };
  }

  /**
   * Adds the chosen accounts the bank shows through an existing account's login, in one step: same
   * company, bank, environment and login. All or nothing: an account the bank does not show or
   * one already added refuses the whole request.
   */
  async importAccounts(input: ImportAccountsInput, actor: AdminActor = {}): Promise<BankAccountView[]> {
    const source = this.findBankAccount(input.bank_account_id);
    const shown = await this.discoverAccounts(source.id);
    const chosen = input.accounts.map((wanted, i) => {
      const match = shown.accounts.find(
        (a) => a.account_number === wanted.account_number && a.bik === wanted.bik,
      );
      if (!match) {
        throw validationError(
          `accounts[${i}]`,
          `Банк не показывает счёт ${wanted.account_number} (БИК ${wanted.bik})`,
        );
      }
      if (match.bank_account_id !== null) {
        throw new ApiError("conflict", "Счёт с таким номером и БИК уже добавлен", {
          field: `accounts[${i}]`,
          bank_account_id: match.bank_account_id,
        });
      }
      const alias = wanted.alias ?? wanted.account_number.slice(-4);
      if (!ALIAS_RE.test(alias))
        throw validationError(`accounts[${i}].alias`, "Псевдоним: 1–32 символа A-Z, a-z, 0-9, _ или -");
      return { ...match, alias };
    });
    const ids = chosen.map(() => newId());
    this.deps.atomically(() => {
      chosen.forEach((a, i) => {
        this.deps.accounts.insert({
          id: ids[i]!,
          companyId: source.companyId,
          bank: source.bank,
          accountNumber: a.account_number,
          bik: a.bik,
          currency: a.currency,
          alias: a.alias,
          environment: source.environment,
          connectionId: source.connectionId,
          sandboxOpsPerDay: null,
          sandboxOpeningBalance: null,
          createdAt: this.now(),
        });
        this.audit(
          "admin.bank_account.create",
          ids[i]!,
          {
            company_id: source.companyId,
            bank: source.bank,
            alias: a.alias,
            environment: source.environment,
            via: source.id,
          },
          actor,
        );
      });
    });
    return ids.map((id) => this.accountView(this.deps.accounts.findById(id)!));
  }

  /** The account as the admin views show it; not_found when there is none. */
  findBankAccountView(id: string): BankAccountView {
    return this.accountView(this.findBankAccount(id));
  }

  findBankAccount(id: string): BankAccountRecord {
    const account = this.deps.accounts.findById(id);
    if (!account) throw new ApiError("not_found", "Счёт не найден");
    return account;
  }

  // ---- tokens

  createToken(input: CreateTokenInput, actor: AdminActor = {}): TokenView & { token: string } {
    const company = this.deps.companies.findById(input.company_id);
    if (!company) throw new ApiError("not_found", "Компания не найдена", { field: "company_id" });
    const name = requireWellFormed("name", input.name.trim());
    if (name.length === 0 || name.length > 128)
      throw validationError("name", "Имя токена: от 1 до 128 символов");
    const mode = input.mode ?? "live";
    const scopeSend = input.scope_send_payments ?? false;
    const grants = this.checkGrants(company.id, input.purpose, input.accounts ?? []);
    if (input.purpose === "mcp" && scopeSend) {
      throw validationError("scope_send_payments", "Токен агента (mcp) не может получить право на платежи");
    }
    const allowedIps = this.checkIps(input.allowed_ips ?? []);
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
      createdAt: this.now(),
      lastUsedAt: null,
      oauthGrantId: null,
    };
    this.deps.atomically(() => {
      this.deps.tokens.insert(row, grants);
      this.audit(
        "admin.token.create",
        row.id,
        { company_id: company.id, name, purpose: input.purpose, mode },
        actor,
      );
    });
    return { ...this.tokenView(row.id), token: raw };
  }

  listTokens(companyId?: string): TokenView[] {
    return this.deps.tokens.list(companyId).map((row) => tokenView(row, this.deps.tokens.grants(row.id)));
  }

  tokenView(id: string): TokenView {
    const row = this.deps.tokens.findById(id);
    if (!row) throw new ApiError("not_found", "Токен не найден");
    return tokenView(row, this.deps.tokens.grants(id));
  }

  patchToken(id: string, input: PatchTokenInput, actor: AdminActor = {}): TokenView {
    const row = this.deps.tokens.findById(id);
    if (!row) throw new ApiError("not_found", "Токен не найден");
    const patch: Partial<ApiTokenRow> = {};
    if (input.name !== undefined) {
      const name = requireWellFormed("name", input.name.trim());
      if (name.length === 0 || name.length > 128)
        throw validationError("name", "Имя токена: от 1 до 128 символов");
      patch.name = name;
    }
    const read = input.scopes?.read_statements ?? input.scope_read_statements;
    const send = input.scopes?.send_payments ?? input.scope_send_payments;
    if (read !== undefined) patch.scopeReadStatements = read;
    if (send !== undefined) {
      if (row.purpose === "mcp" && send) {
        throw validationError("scope_send_payments", "Токен агента (mcp) не может получить право на платежи");
      }
      patch.scopeSendPayments = send;
    }
    if (input.allowed_ips !== undefined) patch.allowedIps = this.checkIps(input.allowed_ips);
    if (input.rate_limit_per_minute !== undefined)
      patch.rateLimitPerMinute = checkRateLimit(input.rate_limit_per_minute);
    if (input.expires_at !== undefined) patch.expiresAt = checkExpiry(input.expires_at);
    const grants = input.accounts ? this.checkGrants(row.companyId, row.purpose, input.accounts) : undefined;
    if (row.oauthGrantId !== null) this.checkWithinConsent(row, patch, grants);
    this.deps.atomically(() => {
      this.deps.tokens.update(id, patch, grants);
      this.audit("admin.token.update", id, input, actor);
    });
    return this.tokenView(id);
  }

  revokeToken(id: string, actor: AdminActor = {}): TokenView {
    const row = this.deps.tokens.findById(id);
    if (!row) throw new ApiError("not_found", "Токен не найден");
    if (row.revokedAt === null) {
      this.deps.atomically(() => {
        this.deps.tokens.update(id, { revokedAt: this.now() });
        this.audit("admin.token.revoke", id, undefined, actor);
      });
    }
    return this.tokenView(id);
  }

  // ---- audit log

  auditLog(q: AuditLogQueryInput): { entries: AuditEntry[]; next_cursor: string | null } {
    return auditLogPage(this.deps.audit, q);
  }

  // ---- helpers

  /**
   * The token of an OAuth grant carries what the operator consented to: it may be narrowed (fewer
   * accounts, no scope, an IP list, an earlier expiry), never widened; more needs a new consent (the
   * app signs in again). Each refresh sets the expiry of the new access token (an hour).
   */
  private checkWithinConsent(row: ApiTokenRow, patch: Partial<ApiTokenRow>, grants?: AccountGrant[]): void {
    const again =
      "Доступ OAuth-приложения можно только сузить; больше — только новым согласием (приложение входит заново)";
    if (patch.scopeReadStatements === true && !row.scopeReadStatements)
      throw validationError("scopes", again);
    if (grants) {
      const consented = new Set(this.deps.tokens.grants(row.id).map((g) => g.bankAccountId));
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

  private checkGrants(companyId: string, purpose: TokenPurpose, grants: TokenGrantInput[]): AccountGrant[] {
    const seen = new Set<string>();
    return grants.map((g, i) => {
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
        throw validationError(
          `accounts[${i}].allow_send_payments`,
          "Токен агента (mcp) не может получить право на платежи",
        );
      }
      return {
        bankAccountId: account.id,
        allowReadStatements: g.allow_read_statements ?? false,
        allowSendPayments: g.allow_send_payments ?? false,
      };
    });
  }

  private checkIps(ips: string[]): string[] {
    ips.forEach((ip, i) => {
      if (!parseIpRange(ip))
        throw validationError(`allowed_ips[${i}]`, `Неверный IP-адрес или подсеть: ${ip}`);
    });
    return ips.map((ip) => ip.trim());
  }

  private now(): string {
    return this.deps.clock.now().toISOString();
  }

  /** Runs a change made by another service (e.g. a statement ordered via the UI) together with its
   *  audit entry, in one transaction. */
  audited<T>(
    action: string,
    actor: AdminActor,
    args: unknown,
    change: () => T,
    targetOf: (result: T) => string,
  ): T {
    return this.deps.atomically(() => {
      const result = change();
      this.audit(action, targetOf(result), args, actor);
      return result;
    });
  }

  /** Audits an admin action carried out by another service (statements, balances). */
  /** An audit entry for something done outside the service (sign-in); `outcome` an error code when refused. */
  recordAction(action: string, target: string, actor: AdminActor, args?: unknown, outcome = "ok"): void {
    this.audit(action, target, args, actor, outcome);
  }

  private audit(action: string, target: string, args: unknown, actor: AdminActor, outcome = "ok"): void {
    this.deps.audit.write({
      at: this.deps.clock.now(),
      actor: "admin",
      action,
      target,
      arguments: args,
      outcome,
      requestId: actor.requestId ?? null,
      ip: actor.ip ?? null,
    });
  }
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

function companyView(row: CompanyRow): CompanyView {
  return { company_id: row.id, name: row.name, inn: row.inn, kpp: row.kpp, created_at: row.createdAt };
}

function bankAccountView(a: BankAccountRecord, connection: ConnectionRecord | null): BankAccountView {
  return {
    bank_account_id: a.id,
    company_id: a.companyId,
    bank: a.bank,
    alias: a.alias,
    account_number_masked: maskAccountNumber(a.accountNumber),
    bik: a.bik,
    currency: a.currency,
    sandbox:
      a.sandboxOpsPerDay === null
        ? null
        : {
            ops_per_day: a.sandboxOpsPerDay,
            opening_balance: kopecksToJsonNumber(a.sandboxOpeningBalance ?? 0),
          },
    environment: a.environment,
    credentials_status: connection?.status ?? null,
    credentials_message: connection?.statusMessage ?? null,
    created_at: a.createdAt,
  };
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
