// Ordering, polling and listing statements. Knows nothing of HTTP: takes a principal and plain
// input, returns views or throws ApiError.

import type { AccessPolicy } from "../auth/access-policy";
import type { Principal } from "../auth/guard";
import type { BankGateway } from "../banks/gateway";
import { type Clock, dateInZone, newId } from "../core/clock";
import { ApiError, validationError } from "../core/errors";
import { ruDaysGenitive } from "../core/plural";
import { checkedExternalId } from "../core/text";
import type { BankAccountRecord } from "../db/repos/accounts";
import { daysInclusive, isValidIsoDate } from "../formats/dates";
import type { ImportRunner } from "./import";
import { FILE_BANK, type ImportInput, StatementImports } from "./import/service";
import type { BalanceView, ListStatementsInput, OrderInput, StatementPage, StatementView } from "./model";
import type { StatementRepository, StatementRow, StatementStatus } from "./repository";
import { balanceView, statementView } from "./views";

// The admin pages name the view through the service.
export type { StatementView } from "./model";

const MAX_PERIOD_DAYS = 31;
/** Where a `file` account's statements arrive instead of being ordered. */
const IMPORT_PATH = "/api/v1/integration/statements/import";

/** Started when an order is stored: sends the bank request now instead of at the next poll. */
export type OrderDispatcher = (statementId: string) => void;

export interface StatementServiceDeps {
  clock: Clock;
  timezone: string;
  balanceStaleSeconds: number;
  repo: StatementRepository;
  access: AccessPolicy;
  gateway: BankGateway;
  accountOf: (id: string) => BankAccountRecord | null;
  /** Where imported files are parsed and stored (worker threads, or this thread). */
  imports: ImportRunner;
}

export class StatementService {
  private dispatch: OrderDispatcher = () => {};
  private readonly imports: StatementImports;

  constructor(private readonly deps: StatementServiceDeps) {
    this.imports = new StatementImports({ ...deps, runner: deps.imports, today: () => this.today() });
  }

  onOrder(dispatch: OrderDispatcher): void {
    this.dispatch = dispatch;
  }

  today(): string {
    return dateInZone(this.deps.clock.now(), this.deps.timezone);
  }

  /** Validates dates per the rules of the order route; returns nothing or throws validation_error. */
  checkPeriod(dateFrom: string, dateTo: string, maxDays = MAX_PERIOD_DAYS): void {
    if (!isValidIsoDate(dateFrom)) throw validationError("date_from", "date_from: ожидается дата YYYY-MM-DD");
    if (!isValidIsoDate(dateTo)) throw validationError("date_to", "date_to: ожидается дата YYYY-MM-DD");
    if (dateFrom > dateTo) throw validationError("date_from", "date_from не может быть позже date_to");
    if (dateTo > this.today())
      throw validationError("date_to", "date_to не может быть позже сегодняшнего дня");
    if (daysInclusive(dateFrom, dateTo) > maxDays) {
      throw validationError(
        "date_to",
        `Период не длиннее ${ruDaysGenitive(maxDays)}; закажите несколько выписок по частям, каждую со своим external_id (см. docs/api.md, «Период длиннее 31 дня»)`,
        { max_days: maxDays },
      );
    }
  }

  /** POST /integration/statements: 201 for a new order, 200 for an idempotent repeat. */
  order(principal: Principal, input: OrderInput): { created: boolean; statement: StatementView } {
    const externalId = checkedExternalId(input.external_id);
    this.checkPeriod(input.date_from, input.date_to);
    const account = this.deps.access.account(principal, input.bank_account_id, "read_statements");
    return this.place(account, {
      apiTokenId: principal.tokenId,
      externalId,
      source: "integration",
      dateFrom: input.date_from,
      dateTo: input.date_to,
    });
  }

  /** POST /integration/statements/import (statements/import/service.ts). */
  importFile(
    principal: Principal,
    input: ImportInput,
  ): Promise<{ created: boolean; statement: StatementView }> {
    return this.imports.importFile(principal, input);
  }

  /** An import made by an operator in the admin pages (statements/import/service.ts). */
  importFileFromUi(
    bankAccountId: string,
    file: Uint8Array,
    sha256?: string,
  ): Promise<{ created: boolean; statement: StatementView }> {
    return this.imports.importFileFromUi(bankAccountId, file, sha256);
  }

  /** An order placed by an operator in the admin UI (no token, no external id). */
  orderFromUi(bankAccountId: string, dateFrom: string, dateTo: string): StatementView {
    const account = this.deps.accountOf(bankAccountId);
    if (!account) throw new ApiError("not_found", "Счёт не найден", { field: "bank_account_id" });
    this.checkPeriod(dateFrom, dateTo);
    return this.place(account, { apiTokenId: null, externalId: null, source: "ui", dateFrom, dateTo })
      .statement;
  }

  private place(
    account: BankAccountRecord,
    o: {
      apiTokenId: string | null;
      externalId: string | null;
      source: "integration" | "ui";
      dateFrom: string;
      dateTo: string;
    },
  ): { created: boolean; statement: StatementView } {
    const adapter = this.deps.gateway.adapterFor(account);
    const outcome = this.deps.repo.createOrFind({
      id: newId(),
      bank_account_id: account.id,
      api_token_id: o.apiTokenId,
      source: o.source,
      external_id: o.externalId,
      date_from: o.dateFrom,
      date_to: o.dateTo,
      created_at: this.deps.clock.now().toISOString(),
    });
    // Checked before inserting would be simpler, but an idempotent repeat of an existing order must
    // still answer 200/409 as before; a new order for such a bank is removed below, leaving nothing.
    if (outcome.kind === "existing") {
      const row = outcome.row;
      if (row.bank_account_id !== account.id || row.date_from !== o.dateFrom || row.date_to !== o.dateTo) {
        throw new ApiError("conflict", undefined, { statement_id: row.id });
      }
      return { created: false, statement: statementView(row, account) };
    }
    if (!adapter.supportsStatements) {
      this.deps.repo.delete(outcome.row.id);
      if (account.bank === FILE_BANK) {
        throw new ApiError(
          "bank_not_supported",
          `Выписки этого счёта (bank = file) не заказываются у банка, а загружаются файлом 1C банка: POST ${IMPORT_PATH} (или форма загрузки на странице «Выписки»)`,
          { bank: account.bank, import: IMPORT_PATH },
        );
      }
      throw new ApiError("bank_not_supported", "Банк этого счёта не поддерживает выписки", {
        bank: account.bank,
      });
    }
    this.dispatch(outcome.row.id);
    return { created: true, statement: statementView(outcome.row, account) };
  }

  /** A statement owned by the principal's token; another token's is "not found" (deliberately). */
  owned(principal: Principal, statementId: string): { row: StatementRow; account: BankAccountRecord } {
    const row = this.deps.repo.findById(statementId);
    if (!row || row.api_token_id !== principal.tokenId) throw new ApiError("not_found", "Выписка не найдена");
    const account = this.deps.access.account(principal, row.bank_account_id, "read_statements");
    return { row, account };
  }

  /** Any statement with its account, for the operator (the admin pages). */
  forOperator(statementId: string): { row: StatementRow; account: BankAccountRecord } {
    const row = this.deps.repo.findById(statementId);
    const account = row ? this.deps.accountOf(row.bank_account_id) : null;
    if (!row || !account) throw new ApiError("not_found", "Выписка не найдена");
    return { row, account };
  }

  get(principal: Principal, statementId: string): StatementView {
    const { row, account } = this.owned(principal, statementId);
    return statementView(row, account);
  }

  list(principal: Principal, q: ListStatementsInput): StatementPage {
    const limit = q.limit ?? 20;
    if (!Number.isInteger(limit) || limit < 1 || limit > 100)
      throw validationError("limit", "limit: от 1 до 100");
    let accountIds: string[];
    if (q.bank_account_id !== undefined) {
      accountIds = [this.deps.access.account(principal, q.bank_account_id, "read_statements").id];
    } else {
      accountIds = this.deps.access.accessibleAccounts(principal, "read_statements").map((a) => a.id);
    }
    return this.page({
      apiTokenId: principal.tokenId,
      accountIds,
      status: q.status,
      limit,
      cursor: q.cursor,
    });
  }

  /** Keyset-paged statements of the given accounts (and token, when given), newest first. */
  page(q: {
    apiTokenId?: string;
    accountIds: string[];
    status?: StatementStatus;
    limit: number;
    cursor?: string;
  }): StatementPage {
    const before = q.cursor === undefined ? undefined : decodeListCursor(q.cursor);
    if (before === null) throw validationError("cursor", "Неверный курсор");
    const rows = this.deps.repo.list({
      apiTokenId: q.apiTokenId,
      bankAccountIds: q.accountIds,
      status: q.status,
      before,
      limit: q.limit + 1,
    });
    const more = rows.length > q.limit;
    const page = more ? rows.slice(0, q.limit) : rows;
    const accounts = new Map<string, BankAccountRecord | null>();
    const statements = page.map((row) => {
      if (!accounts.has(row.bank_account_id))
        accounts.set(row.bank_account_id, this.deps.accountOf(row.bank_account_id));
      return statementView(row, accounts.get(row.bank_account_id) ?? { accountNumber: "" });
    });
    const last = page[page.length - 1];
    return { statements, next_cursor: more && last ? encodeListCursor(last) : null };
  }

  /** The cached balance; reading it never calls the bank. */
  balance(account: BankAccountRecord): BalanceView {
    return balanceView(
      account,
      this.deps.repo.balance(account.id),
      this.deps.clock.now(),
      this.deps.balanceStaleSeconds,
    );
  }

  /** Asks the bank for the balance now and caches it (admin refresh and the periodic refresh). */
  async refreshBalance(account: BankAccountRecord): Promise<BalanceView> {
    const adapter = this.deps.gateway.adapterFor(account);
    // A bank that cannot be asked (statements from files): the balance of the latest file stands.
    if (adapter.supportsBalances === false) return this.balance(account);
    const result = await adapter.getBalance(this.deps.gateway.refFor(account));
    this.deps.repo.upsertBalance({
      bank_account_id: account.id,
      balance: result.balance,
      currency: account.currency,
      as_of: result.as_of.toISOString(),
    });
    return this.balance(account);
  }
}

function encodeListCursor(row: StatementRow): string {
  return Buffer.from(JSON.stringify([row.created_at, row.id])).toString("base64url");
}

function decodeListCursor(cursor: string): { created_at: string; id: string } | null {
  try {
    const value = JSON.parse(Buffer.from(cursor, "base64url").toString()) as unknown;
    if (
      Array.isArray(value) &&
      value.length === 2 &&
      typeof value[0] === "string" &&
      typeof value[1] === "string"
    ) {
      return { created_at: value[0], id: value[1] };
    }
  } catch {
    // falls through
  }
  return null;
}
