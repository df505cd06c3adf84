// Ordering, polling and listing statements. Knows nothing of HTTP: takes a principal and plain
// input, returns views or throws ApiError.

import { createHash } from "node:crypto";
import type { AccessPolicy } from "../auth/access-policy";
import type { Principal } from "../auth/guard";
import type { BankGateway } from "../banks/gateway";
import { type Clock, dateInZone, newId } from "../core/clock";
import { ApiError, validationError } from "../core/errors";
import { ruDaysGenitive } from "../core/plural";
import { checkedExternalId } from "../core/text";
import type { BankAccountRecord } from "../db/repos/accounts";
import { isValidIsoDate } from "../formats/dates";
import type { ImportRunner, ParsedImport } from "./import";
import type { BalanceView, ListStatementsInput, OrderInput, StatementPage, StatementView } from "./model";
import type { StatementRepository, StatementRow, StatementStatus } from "./repository";
import { balanceView, statementView } from "./views";

// The admin pages name the view through the service.
export type { StatementView } from "./model";

const MAX_PERIOD_DAYS = 31;

export interface ImportInput {
  bank_account_id: string;
  external_id: string;
  file: Uint8Array;
  /** SHA-256 of the file (hex), when the caller computed it as the bytes arrived. */
  sha256?: string;
}

/** How long an import holds its statement without storing a chunk (each chunk renews it). */
const IMPORT_LEASE_MS = 2 * 60_000;
/** An import's next_poll_at_ms: the poller never takes it (there is no bank to ask). */
const NEVER_DUE = Number.MAX_SAFE_INTEGER;

function sha256Of(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

/** Whether stored statement `row` is this file imported to this account. */
function sameImport(row: StatementRow, account: BankAccountRecord, sha256: string): boolean {
  return row.source === "import" && row.import_sha256 === sha256 && row.bank_account_id === account.id;
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
  /** Where imported files are parsed and stored (worker threads, or this thread). */
  imports: ImportRunner;
}

export class StatementService {
  private dispatch: OrderDispatcher = () => {};
  /** Imports this server is storing now, by statement id (a repeat of one waits for it). */
  private readonly importing = new Map<string, Promise<void>>();

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
   * ready statement. 201 when new; 200 for the same external_id and the same file (answered from
   * the stored statement, the file unread); 409 conflict for the same external_id with another
   * file (once that file is read: a refused file answers as before). Nothing is stored when the
   * file is refused. `sha256`: of the file's bytes, computed while the upload arrived.
   */
  async importFile(
    principal: Principal,
    input: ImportInput,
  ): Promise<{ created: boolean; statement: StatementView }> {
    const externalId = checkedExternalId(input.external_id);
    const account = this.deps.access.account(principal, input.bank_account_id, "read_statements");
    if (account.bank !== FILE_BANK) {
      throw validationError(
        "bank_account_id",
        "Выписки из файла загружаются только на счета с bank = file; выписки этого счёта заказываются у банка",
        { bank: account.bank },
      );
    }
    const sha256 = input.sha256 ?? sha256Of(input.file);
    const existing = this.deps.repo.findByExternalId(principal.tokenId, externalId);
    if (existing && sameImport(existing, account, sha256))
      return this.repeated(existing, account, input.file);
    return this.storeFile(account, { apiTokenId: principal.tokenId, externalId, file: input.file, sha256 });
  }

  /** An import made by an operator in the admin pages (no token, no external id). */
  async importFileFromUi(bankAccountId: string, file: Uint8Array, sha256?: string): Promise<StatementView> {
    const account = this.deps.accountOf(bankAccountId);
    if (!account) throw new ApiError("not_found", "Счёт не найден", { field: "bank_account_id" });
    if (account.bank !== FILE_BANK) {
      throw validationError("bank_account_id", "Выписки из файла загружаются только на счета с bank = file");
    }
    const stored = await this.storeFile(account, {
      apiTokenId: null,
      externalId: null,
      file,
      sha256: sha256 ?? sha256Of(file),
    });
    return stored.statement;
  }

  /**
   * The same file again under the same external_id: the stored statement. One still being stored
   * by this server is awaited; one whose import was cut short (the server stopped) is completed
   * from this copy of the file, under a lease, so two servers never store it at once.
   */
  private async repeated(
    row: StatementRow,
    account: BankAccountRecord,
    file: Uint8Array,
  ): Promise<{ created: boolean; statement: StatementView }> {
    const running = this.importing.get(row.id);
    if (running) await running.catch(() => {});
    const current = this.deps.repo.findById(row.id) ?? row;
    if (current.status === "processing" && !this.importing.has(row.id)) {
      const now = this.deps.clock.now().getTime();
      if (this.deps.repo.takeLease(row.id, now, now + IMPORT_LEASE_MS)) {
        let parsed: ParsedImport;
        try {
          parsed = await this.deps.imports.parse({
            bytes: file,
            accountNumber: account.accountNumber,
            currency: account.currency,
          });
        } catch (e) {
          this.deps.repo.releaseLease(row.id);
          throw e;
        }
        await this.track(row.id, this.complete(row.id, account, parsed));
      }
    }
    const after = this.deps.repo.findById(row.id) ?? row;
    return { created: false, statement: statementView(after, account) };
  }

  private async storeFile(
    account: BankAccountRecord,
    o: { apiTokenId: string | null; externalId: string | null; file: Uint8Array; sha256: string },
  ): Promise<{ created: boolean; statement: StatementView }> {
    const parsed = await this.deps.imports.parse({
      bytes: o.file,
      accountNumber: account.accountNumber,
      currency: account.currency,
    });
    const read = parsed.summary;
    const now = this.deps.clock.now();
    // Processing, held, and never due for the poller (there is no bank to ask) until it is ready.
    const outcome = this.deps.repo.createOrFind({
      id: newId(),
      bank_account_id: account.id,
      api_token_id: o.apiTokenId,
      source: "import",
      external_id: o.externalId,
      date_from: read.date_from,
      date_to: read.date_to,
      created_at: now.toISOString(),
      import_sha256: o.sha256,
      next_poll_at_ms: NEVER_DUE,
      lease_until_ms: now.getTime() + IMPORT_LEASE_MS,
    });
    if (outcome.kind === "existing") {
      // Another request with this external_id got there first.
      parsed.discard();
      const row = outcome.row;
      if (!sameImport(row, account, o.sha256)) {
        throw new ApiError("conflict", "С этим external_id уже загружен другой файл", {
          statement_id: row.id,
        });
      }
      return this.repeated(row, account, o.file);
    }
    const id = outcome.row.id;
    await this.track(id, this.complete(id, account, parsed));
    const row = this.deps.repo.findById(id) ?? outcome.row;
    return { created: true, statement: statementView(row, account) };
  }

  /** Stores a parsed file's operations under statement `id` (held), then makes it ready. */
  private async complete(id: string, account: BankAccountRecord, parsed: ParsedImport): Promise<void> {
    const read = parsed.summary;
    try {
      const kinds = await parsed.store(id, account.id, {
        nowMs: this.deps.clock.now().getTime(),
        ms: IMPORT_LEASE_MS,
      });
      const now = this.deps.clock.now();
      this.deps.repo.markReady(
        id,
        {
          opening_balance: read.opening_balance,
          closing_balance: read.closing_balance,
          total_credit: read.total_credit,
          total_debit: read.total_debit,
          operations_count: read.operations_count,
          fetched_at: now.toISOString(),
          doc_types: kinds,
        },
        {
          bank_account_id: account.id,
          balance: read.closing_balance,
          currency: account.currency,
          as_of: balanceInstant(read.date_to, this.today(), now, this.deps.timezone),
        },
      );
    } finally {
      // A statement left processing is completed by the next repeat of the same file.
      this.deps.repo.releaseLease(id);
    }
  }

  private track(id: string, work: Promise<void>): Promise<void> {
    this.importing.set(id, work);
    return work.finally(() => this.importing.delete(id));
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
