// Bank accounts: created (checked against their bank, the login sealed, audited), listed and found.
import { isSandboxBank } from "../auth/access-policy";
import type { SecretBox } from "../auth/secret-box";
import type { BankAdapter, BankEnvironment } from "../banks/adapter";
import type { BankConnections } from "../banks/connections";
import { newId } from "../core/clock";
import { ApiError, validationError } from "../core/errors";
import type { BankAccountRecord, BankAccountRepository, CompanyRepository } from "../db/repos/accounts";
import type { BankConnectionRepository, ConnectionRecord, ConnectionStatus } from "../db/repos/connections";
import { maskAccountNumber } from "../formats/mask";
import { formatKopecks, kopecksToJsonNumber, rublesToKopecks } from "../formats/money";
import { isValidAccountKey } from "../formats/validators";
import type { AdminActor, AdminAreaDeps } from "./audit";
import type { BankAccountView, CreateBankAccountInput } from "./model";

export const ALIAS_RE = /^[A-Za-z0-9_-]{1,32}$/;
export const ALIAS_MESSAGE = "Псевдоним: 1–32 символа A-Z, a-z, 0-9, _ или -";
const DEFAULT_SANDBOX_OPS_PER_DAY = 5;
const DEFAULT_SANDBOX_OPENING_BALANCE = 100_000_000; // 1 000 000.00 RUB in kopecks
/** 1 000 000 000 000.00 RUB: a sandbox balance grows by at most ~7.4·10^8 kopecks a day, so a
 *  century of generated days stays far inside the safe integers (and exact as a JSON number). */
const MAX_SANDBOX_OPENING_BALANCE = 100_000_000_000_000;

export interface AdminAccountsDeps extends AdminAreaDeps {
  companies: CompanyRepository;
  accounts: BankAccountRepository;
  secretBox: SecretBox | null;
  knownBanks: () => string[];
  /** The adapter of a known bank (its login checks, environments, account discovery). */
  bankAdapter: (bank: string) => BankAdapter;
  connections: BankConnections;
  connectionRepo: BankConnectionRepository;
}

export class AdminAccounts {
  constructor(private readonly deps: AdminAccountsDeps) {}

  create(input: CreateBankAccountInput, actor: AdminActor = {}): BankAccountView {
    const company = this.deps.companies.findById(input.company_id);
    if (!company) throw new ApiError("not_found", "Компания не найдена", { field: "company_id" });
    if (!this.deps.knownBanks().includes(input.bank)) {
      throw validationError("bank", `Неизвестный банк; доступны: ${this.deps.knownBanks().join(", ")}`);
    }
    if (!/^\d{20}$/.test(input.account_number)) {
      throw validationError("account_number", "Номер счёта: ровно 20 цифр");
    }
    if (!/^\d{9}$/.test(input.bik)) throw validationError("bik", "БИК: ровно 9 цифр");
    const keyProblem = accountKeyProblem(input.account_number, input.bik);
    if (keyProblem) throw validationError("account_number", keyProblem);
    const currency = input.currency ?? "RUB";
    if (!/^[A-Z]{3}$/.test(currency)) throw validationError("currency", "Валюта: три заглавные буквы (RUB)");
    const aliases = new Set(this.deps.accounts.list(company.id).map((a) => a.alias));
    const alias = input.alias ?? defaultAlias(input.account_number, aliases);
    if (!ALIAS_RE.test(alias)) throw validationError("alias", ALIAS_MESSAGE);
    if (aliases.has(alias)) {
      throw new ApiError("conflict", `Псевдоним ${alias} уже занят другим счётом этой компании`, {
        field: "alias",
      });
    }
    const sandbox = sandboxSettings(input);

    const adapter = this.deps.bankAdapter(input.bank);
    const environment = input.environment ?? "production";
    if (!(adapter.environments ?? ["production"]).includes(environment)) {
      throw validationError("environment", `У банка ${input.bank} нет среды ${environment}`);
    }
    const connectionStatus = loginStatus(adapter, input.credentials, environment);
    if (input.credentials !== undefined) this.requireSecretBox();

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
          sandboxOpsPerDay: sandbox.opsPerDay,
          sandboxOpeningBalance: sandbox.openingBalance,
          createdAt: this.deps.clock.now().toISOString(),
        });
        // The audit entry names the account but never its credentials.
        this.deps.audit.record("admin.bank_account.create", id, actor, {
          company_id: company.id,
          bank: input.bank,
          alias,
          environment,
        });
      });
    } catch (e) {
      // Added by another process between the look and the insert: the unique index decides.
      if (e instanceof Error && /UNIQUE constraint failed: bank_accounts\.account_number/.test(e.message)) {
        throw duplicate(this.deps.accounts.findByNumber(input.account_number, input.bik)?.id);
      }
      throw e;
    }
    return this.viewOf(this.deps.accounts.findById(id)!);
  }

  /** The login tried at its bank before `create` stores it (banks that can try one). */
  private async verifyNew(input: CreateBankAccountInput): Promise<void> {
    if (!this.deps.knownBanks().includes(input.bank)) return;
    await verifyLogin(
      this.deps.bankAdapter(input.bank),
      input.credentials,
      input.environment ?? "production",
    );
  }

  /** `create` after the bank has tried the login (the command line's way in). */
  async createVerified(input: CreateBankAccountInput, actor: AdminActor = {}): Promise<BankAccountView> {
    await this.verifyNew(input);
    return this.create(input, actor);
  }

  list(companyId?: string): BankAccountView[] {
    return this.deps.accounts.list(companyId).map((a) => this.viewOf(a));
  }

  /** The account as the admin views show it; not_found when there is none. */
  view(id: string): BankAccountView {
    return this.viewOf(this.find(id));
  }

  find(id: string): BankAccountRecord {
    const account = this.deps.accounts.findById(id);
    if (!account) throw new ApiError("not_found", "Счёт не найден");
    return account;
  }

  /** The account, which must be at `bank` (the bank named in the address). */
  atBank(bankAccountId: string, bank: string): BankAccountView {
    const account = this.find(bankAccountId);
    if (account.bank !== bank) {
      throw validationError("bank_account_id", `Счёт не в банке ${bank}`);
    }
    return this.viewOf(account);
  }

  /** A stored account as the admin views show it, with the state of its bank login. */
  viewOf(a: BankAccountRecord): BankAccountView {
    return bankAccountView(a, a.connectionId ? this.deps.connectionRepo.findById(a.connectionId) : null);
  }

  /** Bank logins are stored sealed: without a key there is nowhere to keep one. */
  requireSecretBox(): void {
    if (!this.deps.secretBox) {
      throw validationError("credentials", "Хранение реквизитов банка невозможно: не задан SVC_SECRET_KEY");
    }
  }
}

/**
 * Why an account number cannot be at this BIK (its control key, the rule the payment upload
 * checks too), or null when it can.
 */
export function accountKeyProblem(accountNumber: string, bik: string): string | null {
  return isValidAccountKey(accountNumber, bik)
    ? null
    : "Номер счёта не сходится с БИК: неверный контрольный ключ (9-я цифра); проверьте номер счёта и БИК";
}

/**
 * The alias an account gets when none is given: the number's last 4 digits, or more of them when
 * another account of the company already goes by those (two accounts must not look alike).
 */
export function defaultAlias(accountNumber: string, taken: Set<string>): string {
  for (const digits of [4, 6, 8, 10, 20]) {
    const alias = accountNumber.slice(-digits);
    if (!taken.has(alias)) return alias;
  }
  return accountNumber;
}

/** The state a new login starts in, as its bank's check says (refused: validation_error). */
export function loginStatus(
  adapter: BankAdapter,
  credentials: unknown,
  environment: BankEnvironment,
): ConnectionStatus {
  if (!adapter.checkCredentials) return "active";
  const check = adapter.checkCredentials(credentials, environment);
  if (!check.ok) throw validationError(check.field ?? "credentials", check.message);
  return check.status;
}

/** A login its bank can try before it is stored (a first logon): refused, it is a validation_error. */
export async function verifyLogin(
  adapter: BankAdapter,
  credentials: unknown,
  environment: BankEnvironment,
): Promise<void> {
  if (!adapter.verifyCredentials || credentials === undefined) return;
  loginStatus(adapter, credentials, environment);
  const check = await adapter.verifyCredentials(credentials, environment);
  if (!check.ok) throw validationError(check.field ?? "credentials", check.message);
}

/** A sandbox account's generated day and opening balance; none for a real bank's. */
function sandboxSettings(input: CreateBankAccountInput): {
  opsPerDay: number | null;
  openingBalance: number | null;
} {
  if (!isSandboxBank(input.bank)) {
    if (input.sandbox !== undefined) {
      throw validationError("sandbox", "Параметры sandbox допустимы только для тестовых банков");
    }
    return { opsPerDay: null, openingBalance: null };
  }
  const opsPerDay = input.sandbox?.ops_per_day ?? DEFAULT_SANDBOX_OPS_PER_DAY;
  if (!Number.isInteger(opsPerDay) || opsPerDay < 1 || opsPerDay > 5000) {
    throw validationError("sandbox.ops_per_day", "ops_per_day: целое от 1 до 5000");
  }
  const opening = input.sandbox?.opening_balance;
  if (opening === undefined) return { opsPerDay, openingBalance: DEFAULT_SANDBOX_OPENING_BALANCE };
  const openingBalance = rublesToKopecks(opening, { max: MAX_SANDBOX_OPENING_BALANCE });
  if (openingBalance === null) {
    throw validationError(
      "sandbox.opening_balance",
      `opening_balance: неотрицательная сумма в рублях, до 2 знаков, не больше ${formatKopecks(MAX_SANDBOX_OPENING_BALANCE)}`,
    );
  }
  return { opsPerDay, openingBalance };
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
