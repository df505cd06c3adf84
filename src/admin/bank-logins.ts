// What an account's bank login gives: a new login, the bank's consent flow for OAuth logins (and its
// callback), and the customer's other accounts seen through it, added in one step.
import { randomBytes } from "node:crypto";
import { hashToken } from "../auth/tokens";
import type { BankAccountRef, BankAdapter } from "../banks/adapter";
import type { BankConnections } from "../banks/connections";
import { newId } from "../core/clock";
import { ApiError, validationError } from "../core/errors";
import type { BankAccountRecord, BankAccountRepository } from "../db/repos/accounts";
import type { BankConnectionRepository } from "../db/repos/connections";
import {
  type AdminAccounts,
  ALIAS_MESSAGE,
  ALIAS_RE,
  accountKeyProblem,
  defaultAlias,
  loginStatus,
  verifyLogin,
} from "./accounts";
import type { AdminActor, AdminAreaDeps } from "./audit";
import type { BankAccountView, DiscoveredAccountsView, ImportAccountsInput } from "./model";

/** How long the bank's authorize page may take before its answer is refused. */
const CONSENT_STATE_TTL_MS = 15 * 60_000;

export interface BankLoginsDeps extends AdminAreaDeps {
  accounts: BankAccountRepository;
  /** The admin's accounts: finding one and showing it. */
  adminAccounts: AdminAccounts;
  knownBanks: () => string[];
  bankAdapter: (bank: string) => BankAdapter;
  /** The adapter's view of an account, login included. */
  bankRef: (account: BankAccountRecord) => BankAccountRef;
  connections: BankConnections;
  connectionRepo: BankConnectionRepository;
  /** The service's public address: where the bank sends the operator's browser back. */
  publicUrl: string;
}

export class BankLogins {
  constructor(private readonly deps: BankLoginsDeps) {}

  /**
   * A new login for the account's bank connection (a renewed JWT, another OAuth app): checked like
   * at creation, sealed, and shared by every account reached through the connection.
   */
  async replaceCredentials(
    bankAccountId: string,
    credentials: unknown,
    actor: AdminActor = {},
  ): Promise<BankAccountView> {
    const { adminAccounts } = this.deps;
    const account = adminAccounts.find(bankAccountId);
    const adapter = this.deps.bankAdapter(account.bank);
    const status = loginStatus(adapter, credentials, account.environment);
    adminAccounts.requireSecretBox();
    await verifyLogin(adapter, credentials, account.environment);
    this.deps.atomically(() => {
      if (account.connectionId) {
        this.deps.connections.replace(account.connectionId, credentials, status);
      } else {
        const connectionId = this.deps.connections.create(account.bank, credentials, status);
        this.deps.accounts.setConnection(account.id, connectionId);
      }
      this.deps.audit.record("admin.bank_account.credentials", account.id, actor, { bank: account.bank });
    });
    return adminAccounts.view(account.id);
  }

  // ---- the bank's consent flow (OAuth logins)

  private callbackUrl(bank: string): string {
    return `${this.deps.publicUrl}/admin/banks/${bank}/callback`;
  }

  /** The bank's page where the customer approves svc's access for this account's login. */
  async startConsent(bankAccountId: string, actor: AdminActor = {}): Promise<string> {
    const account = this.deps.adminAccounts.find(bankAccountId);
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
      this.deps.audit.record("admin.bank_connection.consent_start", account.id, actor, {
        bank: account.bank,
      });
    });
    return url;
  }

  /**
   * The bank sent the operator back: with a code (exchanged for tokens, stored sealed, the login is
   * active) or with an error (the customer declined). `state` is single use and expires.
   */
  async finishConsent(
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
        this.deps.clock.now().toISOString(),
      );
      this.deps.audit.record("admin.bank_connection.consent_declined", target, actor);
      throw validationError("code", "Банк не подтвердил доступ");
    }
    const completed = await consent.finish(
      this.deps.connections.read(connectionId),
      answer.code,
      this.callbackUrl(bank),
    );
    this.deps.atomically(() => {
      this.deps.connections.replace(connectionId, completed, "active");
      this.deps.audit.record("admin.bank_connection.consent_done", target, actor, { bank });
    });
    return { accounts: accounts.map((a) => this.deps.adminAccounts.viewOf(a)) };
  }

  // ---- the customer's accounts seen through a stored bank login

  /** The accounts the bank shows through this account's login, each with its svc account if added. */
  async discover(bankAccountId: string): Promise<DiscoveredAccountsView> {
    const account = this.deps.adminAccounts.find(bankAccountId);
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
  async import(input: ImportAccountsInput, actor: AdminActor = {}): Promise<BankAccountView[]> {
    const source = this.deps.adminAccounts.find(input.bank_account_id);
    const shown = await this.discover(source.id);
    // The entry checks of an account added by hand (accounts.ts), over this request's accounts too.
    const taken = new Set(this.deps.accounts.list(source.companyId).map((a) => a.alias));
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
      const keyProblem = accountKeyProblem(match.account_number, match.bik);
      if (keyProblem) throw validationError(`accounts[${i}].account_number`, keyProblem);
      const alias = wanted.alias ?? defaultAlias(wanted.account_number, taken);
      if (!ALIAS_RE.test(alias)) throw validationError(`accounts[${i}].alias`, ALIAS_MESSAGE);
      if (taken.has(alias)) {
        throw new ApiError("conflict", `Псевдоним ${alias} уже занят другим счётом этой компании`, {
          field: `accounts[${i}].alias`,
        });
      }
      taken.add(alias);
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
          createdAt: this.deps.clock.now().toISOString(),
        });
        this.deps.audit.record("admin.bank_account.create", ids[i]!, actor, {
          company_id: source.companyId,
          bank: source.bank,
          alias: a.alias,
          environment: source.environment,
          via: source.id,
        });
      });
    });
    return ids.map((id) => this.deps.adminAccounts.view(id));
  }
}
