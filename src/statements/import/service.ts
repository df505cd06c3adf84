// Statements from a bank's own 1C file (decisions §11): the file parsed and stored by the import
// runner (a worker thread for large files), the statement processing and held until its last
// chunk, a repeat of the same file answered from what is stored (or completing an import cut short).
import { createHash } from "node:crypto";
import type { AccessPolicy } from "../../auth/access-policy";
import type { Principal } from "../../auth/guard";
import { type Clock, dayStartInZone, newId } from "../../core/clock";
import { ApiError, validationError } from "../../core/errors";
import { checkedExternalId } from "../../core/text";
import type { BankAccountRecord } from "../../db/repos/accounts";
import { nextIsoDay } from "../../formats/dates";
import type { StatementView } from "../model";
import type { StatementRepository, StatementRow } from "../repository";
import { statementView } from "../views";
import type { ImportRunner, ParsedImport } from ".";

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
export const FILE_BANK = "file";

export interface StatementImportsDeps {
  clock: Clock;
  timezone: string;
  repo: StatementRepository;
  access: AccessPolicy;
  accountOf: (id: string) => BankAccountRecord | null;
  /** Where imported files are parsed and stored (worker threads, or this thread). */
  runner: ImportRunner;
  /** Today in the business time zone. */
  today: () => string;
}

export class StatementImports {
  /** Imports this server is storing now, by statement id (a repeat of one waits for it). */
  private readonly importing = new Map<string, Promise<void>>();

  constructor(private readonly deps: StatementImportsDeps) {}

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
    // The same file this token already imported to this account, under another external_id: that
    // statement (a new external_id for the same bytes makes no second statement).
    const sameFile = existing ? null : this.deps.repo.findImport(account.id, sha256, principal.tokenId);
    if (sameFile) return this.repeated(sameFile, account, input.file);
    return this.storeFile(account, { apiTokenId: principal.tokenId, externalId, file: input.file, sha256 });
  }

  /**
   * An import made by an operator in the admin pages (no token, no external id). A file the
   * operator already imported to this account (same SHA-256) answers that statement, created false.
   */
  async importFileFromUi(
    bankAccountId: string,
    file: Uint8Array,
    sha256?: string,
  ): Promise<{ created: boolean; statement: StatementView }> {
    const account = this.deps.accountOf(bankAccountId);
    if (!account) throw new ApiError("not_found", "Счёт не найден", { field: "bank_account_id" });
    if (account.bank !== FILE_BANK) {
      throw validationError("bank_account_id", "Выписки из файла загружаются только на счета с bank = file");
    }
    const hash = sha256 ?? sha256Of(file);
    const sameFile = this.deps.repo.findImport(account.id, hash, null);
    if (sameFile) return this.repeated(sameFile, account, file);
    return this.storeFile(account, { apiTokenId: null, externalId: null, file, sha256: hash });
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
          parsed = await this.deps.runner.parse({
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
    const parsed = await this.deps.runner.parse({
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
          as_of: balanceInstant(read.date_to, this.deps.today(), now, this.deps.timezone),
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
}

/**
 * When an imported statement's closing balance was the account's balance: now for a statement
 * ending today, else the end of its last day in the business time zone.
 */
function balanceInstant(dateTo: string, today: string, now: Date, timeZone: string): string {
  if (dateTo >= today) return now.toISOString();
  // A second before the next day starts there.
  return new Date(dayStartInZone(nextIsoDay(dateTo), timeZone).getTime() - 1000).toISOString();
}
