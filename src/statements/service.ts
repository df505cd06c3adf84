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
import { isValidIsoDate } from "../formats/dates";
import type { BalanceView, ListStatementsInput, OrderInput, StatementPage, StatementView } from "./model";
import type { StatementRepository, StatementRow, StatementStatus } from "./repository";
import { readStatementFile } from "./statement-file";
import { balanceView, statementView } from "./views";

// The admin pages name the view through the service.
export type { StatementView } from "./model";

const MAX_PERIOD_DAYS = 31;

export interface ImportInput {
  bank_account_id: string;
  external_id: string;
  file: Uint8Array;
}

/** The bank kind whose statements arrive as the bank's own 1C files (decisions §11). */
const FILE_BANK = "file";

/** Started when an order is stored: sends the bank request now instead of at the next poll. */
export type OrderDispatcher = (statementId: string) => void;

export function daysInclusive(from: string, to: string): number {
  return Math.round((Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / 86_400_000) + 1;
}

export interface StatementServiceDeps {
  clock: Clock;
  timezone: string;
  balanceStaleSeconds: number;
  repo: StatementRepository;
  access: AccessPolicy;
  gateway: BankGateway;
  accountOf: (id: string) => BankAccountRecord | null;
}

export class StatementService {
  private dispatch: OrderDispatcher = () => {};

  constructor(private readonly deps: StatementServiceDeps) {}

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
        `Период не длиннее ${ruDaysGenitive(maxDays)}; закажите несколько выписок`,
        {
          max_days: maxDays,
        },
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

  /**
   * POST /integration/statements/import: the bank's own 1C file of a `file` account, stored as a
   * ready statement. 201 when new; 200 for the same external_id and the same file; 409 conflict
   * for the same external_id with another file. Nothing is stored when the file is refused.
   */
  importFile(principal: Principal, input: ImportInput): { created: boolean; statement: StatementView } {
    const externalId = checkedExternalId(input.external_id);
    const account = this.deps.access.account(principal, input.bank_account_id, "read_statements");
    if (account.bank !== FILE_BANK) {
      throw validationError(
        "bank_account_id",
        "Выписки из файла загружаются только на счета с bank = file; выписки этого счёта заказываются у банка",
        { bank: account.bank },
      );
    }
    return this.storeFile(account, { apiTokenId: principal.tokenId, externalId, file: input.file });
  }

  /** An import made by an operator in the admin pages (no token; external id from the file's hash). */
  importFileFromUi(bankAccountId: string, file: Uint8Array): StatementView {
    const account = this.deps.accountOf(bankAccountId);
    if (!account) throw new ApiError("not_found", "Счёт не найден", { field: "bank_account_id" });
    if (account.bank !== FILE_BANK) {
      throw validationError("bank_account_id", "Выписки из файла загружаются только на счета с bank = file");
    }
    return this.storeFile(account, { apiTokenId: null, externalId: null, file }).statement;
  }

  private storeFile(
    account: BankAccountRecord,
    o: { apiTokenId: string | null; externalId: string | null; file: Uint8Array },
  ): { created: boolean; statement: StatementView } {
    const read = readStatementFile(o.file, account.accountNumber, account.currency);
    const now = this.deps.clock.now();
    const id = newId();
    const outcome = this.deps.repo.createReady(
      {
        id,
        bank_account_id: account.id,
        api_token_id: o.apiTokenId,
        source: "import",
        external_id: o.externalId,
        date_from: read.date_from,
        date_to: read.date_to,
        created_at: now.toISOString(),
        import_sha256: read.sha256,
      },
      {
        opening_balance: read.opening_balance,
        closing_balance: read.closing_balance,
        total_credit: read.total_credit,
        total_debit: read.total_debit,
        fetched_at: now.toISOString(),
      },
      read.operations,
      {
        bank_account_id: account.id,
        balance: read.closing_balance,
        currency: account.currency,
        as_of: balanceInstant(read.date_to, this.today(), now, this.deps.timezone),
      },
    );
    const row = outcome.row;
    if (
      outcome.kind === "existing" &&
      (row.import_sha256 !== read.sha256 || row.bank_account_id !== account.id)
    ) {
      throw new ApiError("conflict", "С этим external_id уже загружен другой файл", { statement_id: row.id });
    }
    return { created: outcome.kind === "created", statement: statementView(row, account) };
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

/**
 * When an imported statement's closing balance was the account's balance: now for a statement
 * ending today, else the end of its last day in the business time zone.
 */
function balanceInstant(dateTo: string, today: string, now: Date, timeZone: string): string {
  if (dateTo >= today) return now.toISOString();
  const next = new Date(Date.parse(`${dateTo}T00:00:00Z`) + 86_400_000);
  // The zone's offset at that midnight, found from how the zone writes that UTC instant.
  const parts = new Intl.DateTimeFormat("en-CA", {
    timeZone,
    hourCycle: "h23",
    year: "numeric",
    month: "2-digit",
    day: "2-digit",
    hour: "2-digit",
    minute: "2-digit",
    second: "2-digit",
  }).formatToParts(next);
  const part = (type: string) => Number(parts.find((p) => p.type === type)?.value);
  const asUtc = Date.UTC(
    part("year"),
    part("month") - 1,
    part("day"),
    part("hour"),
    part("minute"),
    part("second"),
  );
  const offset = asUtc - next.getTime();
  return new Date(next.getTime() - offset - 1000).toISOString();
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
