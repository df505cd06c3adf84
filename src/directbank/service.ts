// svc as the bank service of 1C:DirectBank (decisions §17), for statements only: logon by an
// integration token, the exchange settings, statement requests ordered through the statements
// service, and the packets that answer them. Knows nothing of HTTP: takes what the request said,
// returns the answer's body or throws DirectBankError (svc's own errors translated).
import type { AccessPolicy } from "../auth/access-policy";
import type { Principal, TokenGuard } from "../auth/guard";
import { type Clock, dateInZone, dateTimeInZone, instantOfWallTime, newId } from "../core/clock";
import { ApiError, validationError } from "../core/errors";
import type { ExportReads } from "../db/export-reads";
import type { BankAccountRecord, BankAccountRepository, CompanyRepository } from "../db/repos/accounts";
import type { TokenRepository } from "../db/repos/tokens";
import { daysInclusive, nextIsoDay } from "../formats/dates";
import {
  buildSettings,
  buildStatement,
  buildStatusPacketNotice,
  DirectBankFormatError,
  type DirectBankVersion,
  DOCKIND,
  dateOf,
  isDirectBankVersion,
  type Packet,
  type PacketDocument,
  parsePacket,
  parseProbe,
  parseStatementRequest,
  type StatementRequestDocument,
  USER_AGENT,
} from "../formats/directbank";
import type { StatementOperation } from "../formats/types";
import type { StatementRepository } from "../statements/repository";
import type { StatementService } from "../statements/service";
import { asDirectBankError, DirectBankError } from "./errors";
import type { DirectBankPacket, DirectBankRepository, NewDirectBankPacket } from "./repository";

/** A packet svc takes is at most this large (the standard's 2003 above it). */
export const MAX_PACKET_BYTES = 1024 * 1024;
/** A document inside it, once unzipped. */
const MAX_DOCUMENT_BYTES = 1024 * 1024;
/** A statement request's period is ordered in pieces of svc's longest statement period… */
const PIECE_DAYS = 31;
/** …and at most this many of them (a year); a longer period is the standard's 2206. */
const MAX_PIECES = 12;
const SESSION_MS = 8 * 3600 * 1000;
const LIST_LIMIT = 500;
const OPERATIONS_PAGE = 500;

export interface DirectBankDeps {
  clock: Clock;
  timezone: string;
  publicUrl: string;
  guard: TokenGuard;
  tokens: TokenRepository;
  companies: CompanyRepository;
  accounts: BankAccountRepository;
  access: AccessPolicy;
  statements: StatementService;
  statementRepo: StatementRepository;
  exportReads: ExportReads;
  repo: DirectBankRepository;
}

/** What a DirectBank request is checked with: its session's token and the client address. */
export interface Caller {
  principal: Principal;
  sessionId: string;
  version: DirectBankVersion;
}

const REQUIREMENT = { purpose: "integration", scope: "read_statements" } as const;

/** The user of 1C's automatic-statement login (the standard wants it to differ from the main one). */
const AUTO_PREFIX = "auto-";

export class DirectBankService {
  constructor(private readonly deps: DirectBankDeps) {}

  /** The version the client speaks: its APIVersion, else its AvailableAPIVersion (1C logs on with
   *  an older APIVersion and names its newest there). */
  version(apiVersion: string | null, available: string | null): DirectBankVersion {
    if (apiVersion === null) throw new DirectBankError("1002", "Нет заголовка APIVersion");
    if (isDirectBankVersion(apiVersion)) return apiVersion;
    if (isDirectBankVersion(available)) return available;
    throw new DirectBankError("2006", `svc поддерживает версии 2.3.2 и 2.2.2, запрошена ${apiVersion}`);
  }

  /** Logon: Basic with the token's id as the user and the raw token as the password; a new SID. */
  async logon(
    authorization: string | null,
    clientIp: string | null,
    version: DirectBankVersion,
    identified?: (apiTokenId: string) => void,
  ) {
    const credentials = basicCredentials(authorization);
    const { principal } = await this.checked(() =>
      this.deps.guard.authenticate(`Bearer ${credentials.password}`, clientIp, REQUIREMENT, identified),
    );
    if (credentials.user !== principal.tokenId && credentials.user !== `${AUTO_PREFIX}${principal.tokenId}`) {
      throw new DirectBankError("1201", "Пользователь не совпадает с токеном");
    }
    const now = this.deps.clock.now();
    const sid = newId();
    this.deps.repo.openSession(
      {
        id: sid,
        apiTokenId: principal.tokenId,
        formatVersion: version,
        createdAt: now.toISOString(),
        expiresAtMs: now.getTime() + SESSION_MS,
      },
      now.getTime(),
    );
    return { sid, principal };
  }

  /** The caller of a request with a SID: the session's token passes every check again (revoked,
   *  expired, IP, purpose, scope, rate limit), as on any request of the integration API. */
  async caller(
    sid: string | null,
    clientIp: string | null,
    version: DirectBankVersion,
    identified?: (apiTokenId: string) => void,
  ): Promise<Caller> {
    if (!sid) throw new DirectBankError("1002", "Нет заголовка SID");
    const session = this.deps.repo.session(sid);
    if (!session) throw new DirectBankError("1007");
    const now = this.deps.clock.now().getTime();
    if (session.expiresAtMs <= now) throw new DirectBankError("1006");
    const token = this.deps.tokens.findById(session.apiTokenId);
    if (!token) throw new DirectBankError("1007");
    identified?.(token.id);
    const { principal } = await this.checked(() =>
      this.deps.guard.authenticateHash(token.tokenHash, clientIp, REQUIREMENT),
    );
    return { principal, sessionId: sid, version };
  }

  /** GetSettings: the settings of the account the request names (or the token's only one). */
  settings(caller: Caller, accountNumber: string | null): string {
    const readable = this.deps.access.accessibleAccounts(caller.principal, "read_statements");
    let account: BankAccountRecord | undefined;
    if (accountNumber) account = readable.find((a) => a.accountNumber === accountNumber);
    else if (readable.length === 1) account = readable[0];
    else throw new DirectBankError("1002", "Нет заголовка Account");
    if (!account) throw new DirectBankError("1013", "Токен не может читать выписки этого счёта");
    return this.settingsXml(caller.principal.tokenId, account, caller.version);
  }

  /** The settings file an operator downloads for a token and one of the accounts it may read. */
  settingsForOperator(
    apiTokenId: string,
    bankAccountId: string | undefined,
    version: string | undefined,
  ): string {
    const token = this.deps.tokens.findById(apiTokenId);
    if (!token) throw new ApiError("not_found", "Токен не найден");
    if (token.purpose !== "integration" || !token.scopeReadStatements || token.revokedAt !== null) {
      throw validationError("api_token_id", "Нужен действующий интеграционный токен с правом чтения выписок");
    }
    const v = version ?? "2.3.2";
    if (!isDirectBankVersion(v)) throw validationError("version", "version: 2.3.2 или 2.2.2");
    const grants = this.deps.tokens.grants(apiTokenId).filter((g) => g.allowReadStatements);
    const accountId = bankAccountId ?? (grants.length === 1 ? grants[0]!.bankAccountId : undefined);
    if (accountId === undefined) throw validationError("bank_account_id", "Укажите bank_account_id");
    const account = this.deps.accounts.findById(accountId);
    if (!account || !grants.some((g) => g.bankAccountId === account.id)) {
      throw validationError("bank_account_id", "Токен не может читать выписки этого счёта");
    }
    return this.settingsXml(apiTokenId, account, v);
  }

  /** The settings file for a token and one of its accounts (GetSettings, and the admin download). */
  settingsXml(apiTokenId: string, account: BankAccountRecord, version: DirectBankVersion): string {
    const company = this.deps.companies.findById(account.companyId);
    return buildSettings({
      id: newId(),
      formatVersion: version,
      creationDate: this.localTime(this.deps.clock.now()),
      userAgent: USER_AGENT,
      sender: { bic: account.bik },
      recipient: {
        id: account.companyId,
        name: company?.name,
        inn: company?.inn,
        kpp: company?.kpp ?? undefined,
      },
      customerId: account.companyId,
      bankServerAddress: `${this.deps.publicUrl}/directbank`,
      version,
      compress: false,
      user: apiTokenId,
      docKinds: [DOCKIND.statusPacketNotice, DOCKIND.probe, DOCKIND.statementRequest, DOCKIND.statement],
      receiptStatement: {
        login: `${AUTO_PREFIX}${apiTokenId}`,
        instructions:
          "Пароль — интеграционный токен svc (svc_live_… или svc_test_…), выданный администратором svc; " +
          "он показывается один раз, при создании токена.",
      },
    });
  }

  /**
   * SendPack: every document is read and checked before anything is stored or ordered; a packet
   * with any fault is refused whole (the standard's code) and leaves nothing behind.
   */
  sendPack(caller: Caller, body: Uint8Array): { receivedId: string; statements: string[] } {
    const { principal } = caller;
    if (body.byteLength > MAX_PACKET_BYTES)
      throw new DirectBankError("2003", `Не более ${MAX_PACKET_BYTES} байт`);
    const packet = this.format(() => parsePacket(decodeUtf8(body), MAX_DOCUMENT_BYTES));
    if (this.deps.repo.received(principal.tokenId, packet.id)) throw new DirectBankError("2002");
    if (packet.sender.kind !== "customer") throw new DirectBankError("2004", "Отправитель — не клиент");
    const plans = packet.documents.map((doc) => this.plan(principal, doc));
    const now = this.deps.clock.now().toISOString();
    const receivedId = newId();
    const compressed = packet.documents.some((d) => d.compressed);
    const base = {
      apiTokenId: principal.tokenId,
      receivedId,
      clientPacketId: packet.id,
      formatVersion: packet.formatVersion,
      compressed,
      createdAt: now,
    };
    const rows: NewDirectBankPacket[] = [];
    const ordered: string[] = [];
    for (const plan of plans) {
      const account = plan.account;
      rows.push({
        ...base,
        id: newId(),
        bankAccountId: account.id,
        kind: "notice",
        requestDocumentId: plan.documentId,
        documentId: newId(),
        readyAt: now,
      });
      if (plan.kind === "probe") continue;
      if (plan.kind === "balance") {
        rows.push({
          ...base,
          id: newId(),
          bankAccountId: account.id,
          kind: "balance",
          requestDocumentId: plan.documentId,
          documentId: newId(),
          readyAt: now,
        });
        continue;
      }
      const ids = plan.pieces.map(
        (piece) =>
          this.checkedSync(() =>
            this.deps.statements.order(principal, {
              bank_account_id: account.id,
              external_id: this.externalId(account.id, piece.from, piece.to),
              date_from: piece.from,
              date_to: piece.to,
            }),
          ).statement.statement_id,
      );
      ordered.push(...ids);
      rows.push({
        ...base,
        id: newId(),
        bankAccountId: account.id,
        kind: "statement",
        requestDocumentId: plan.documentId,
        documentId: newId(),
        statementIds: JSON.stringify(ids),
        dateFrom: plan.pieces[0]!.from,
        dateTo: plan.pieces[plan.pieces.length - 1]!.to,
      });
    }
    this.deps.repo.insertPackets(rows);
    return { receivedId, statements: ordered };
  }

  /** GetPackList: ready packets since `date` (the client's last TimeStampLastPacket), or every
   *  one not yet taken. Statements that became ready or failed since the last look are listed now. */
  packList(caller: Caller, date: string | null): { ids: string[]; timestampLastPacket?: string } {
    const since = date === null ? null : this.parseStamp(date);
    this.settleWaiting(caller.principal.tokenId);
    const rows = this.deps.repo.listReady(caller.principal.tokenId, since, LIST_LIMIT);
    const last = rows[rows.length - 1];
    return {
      ids: rows.map((r) => r.id),
      timestampLastPacket: last?.readyAt ? this.localTime(new Date(last.readyAt)) : undefined,
    };
  }

  /** GetPack: one ready packet of this token, its documents rendered now. */
  pack(caller: Caller, id: string | null): Packet {
    if (!id) throw new DirectBankError("1002", "Нет параметра id");
    const row = this.deps.repo.packet(id, caller.principal.tokenId);
    if (!row || row.readyAt === null) throw new DirectBankError("2102");
    const account = this.deps.accounts.findById(row.bankAccountId);
    if (!account) throw new DirectBankError("2102");
    // An account the token may no longer read: its packets are not given out.
    this.checkedSync(() => this.deps.access.account(caller.principal, account.id, "read_statements"));
    const packet = this.render(row, account);
    this.deps.repo.markTaken(row.id, this.deps.clock.now().toISOString());
    return packet;
  }

  // -------------------------------------------------------------------------------------------

  private plan(
    principal: Principal,
    doc: PacketDocument,
  ):
    | { kind: "probe"; documentId: string; account: BankAccountRecord }
    | { kind: "balance"; documentId: string; account: BankAccountRecord }
    | {
        kind: "statement";
        documentId: string;
        account: BankAccountRecord;
        pieces: { from: string; to: string }[];
      } {
    if (doc.dockind !== DOCKIND.statementRequest && doc.dockind !== DOCKIND.probe) {
      throw new DirectBankError(
        "2007",
        `Вид электронного документа с кодом ${doc.dockind} не поддерживается`,
      );
    }
    if (!isDirectBankVersion(doc.formatVersion)) {
      throw new DirectBankError("2008", `Версия ${doc.formatVersion} не поддерживается`);
    }
    if (doc.dockind === DOCKIND.probe) {
      const probe = this.format(() => parseProbe(doc.xml));
      const account = this.deps.access.accessibleAccounts(principal, "read_statements")[0];
      if (!account) throw new DirectBankError("1013", "Токен не может читать выписки ни одного счёта");
      return { kind: "probe", documentId: probe.id, account };
    }
    const request = this.format(() => parseStatementRequest(doc.xml));
    const account = this.requestedAccount(principal, request);
    if (request.statementType === "2") return { kind: "balance", documentId: request.id, account };
    return { kind: "statement", documentId: request.id, account, pieces: this.pieces(request) };
  }

  private requestedAccount(principal: Principal, request: StatementRequestDocument): BankAccountRecord {
    const account = this.deps.accounts
      .list(principal.companyId)
      .find((a) => a.accountNumber === request.account);
    if (!account) throw new DirectBankError("1013", "Счёт не найден среди счетов клиента");
    return this.checkedSync(() => this.deps.access.account(principal, account.id, "read_statements"));
  }

  /** The requested days, up to today, in pieces svc orders as statements. */
  private pieces(request: StatementRequestDocument): { from: string; to: string }[] {
    const today = dateInZone(this.deps.clock.now(), this.deps.timezone);
    const from = dateOf(request.dateFrom)!;
    let to = dateOf(request.dateTo)!;
    if (to > today) to = today;
    if (from > to) throw new DirectBankError("2206", "Начало периода позже его конца или сегодняшнего дня");
    if (daysInclusive(from, to) > PIECE_DAYS * MAX_PIECES) {
      throw new DirectBankError("2206", `Период не длиннее ${PIECE_DAYS * MAX_PIECES} дней`);
    }
    const pieces: { from: string; to: string }[] = [];
    let start = from;
    while (start <= to) {
      let end = start;
      for (let i = 1; i < PIECE_DAYS && end < to; i++) end = nextIsoDay(end);
      pieces.push({ from: start, to: end });
      start = nextIsoDay(end);
    }
    return pieces;
  }

  /**
   * The idempotency key of a piece: the same account and period reuse the statement; a period
   * that reaches today is ordered again each hour (1C asks hourly, and today's operations grow).
   */
  private externalId(accountId: string, from: string, to: string): string {
    const now = this.deps.clock.now();
    const today = dateInZone(now, this.deps.timezone);
    const hour = to === today ? `@${this.localTime(now).slice(0, 13)}` : "";
    return `directbank:${accountId}:${from}:${to}${hour}`;
  }

  /** Packets waiting for their statements: ready once all are, with an error once one failed. */
  private settleWaiting(apiTokenId: string): void {
    const now = this.deps.clock.now().toISOString();
    for (const row of this.deps.repo.waitingPackets(apiTokenId)) {
      const ids = JSON.parse(row.statementIds ?? "[]") as string[];
      const statements = ids.map((id) => this.deps.statementRepo.findById(id));
      const failed = statements.find((s) => !s || s.status === "failed");
      if (failed !== undefined) {
        this.deps.repo.markReady(row.id, now, {
          code: "2206",
          text: failed?.error_message ?? "Выписку не удалось получить",
        });
      } else if (statements.every((s) => s?.status === "ready")) {
        this.deps.repo.markReady(row.id, now);
      }
    }
  }

  private render(row: DirectBankPacket, account: BankAccountRecord): Packet {
    const version = (
      isDirectBankVersion(row.formatVersion) ? row.formatVersion : "2.3.2"
    ) as DirectBankVersion;
    const company = this.deps.companies.findById(account.companyId);
    const customer = {
      id: account.companyId,
      name: company?.name,
      inn: company?.inn,
      kpp: company?.kpp ?? undefined,
    };
    const bank = { bic: account.bik };
    const creationDate = this.localTime(new Date(row.readyAt ?? row.createdAt));
    const header = { formatVersion: version, creationDate, userAgent: USER_AGENT };
    let documents: PacketDocument[];
    if (row.kind === "notice" || row.errorCode) {
      const xml = buildStatusPacketNotice({
        ...header,
        id: row.documentId,
        sender: { kind: "bank", ...bank },
        recipient: { kind: "customer", ...customer },
        receivedId: row.receivedId,
        result: row.errorCode
          ? {
              error: {
                code: row.errorCode,
                description: "Некорректный период запроса выписки",
                moreInfo: row.errorText ?? undefined,
              },
            }
          : { status: { code: "01", name: "Принят" } },
        extIdPacket: row.clientPacketId,
      });
      documents = [{ id: row.documentId, dockind: DOCKIND.statusPacketNotice, formatVersion: version, xml }];
    } else if (row.kind === "balance") {
      const balance = this.deps.statementRepo.balance(account.id);
      const asOf = balance ? new Date(balance.as_of) : this.deps.clock.now();
      const xml = buildStatement({
        ...header,
        id: row.documentId,
        sender: bank,
        recipient: customer,
        statementType: "2",
        dateTo: this.localTime(asOf),
        account: account.accountNumber,
        bank: { bic: account.bik },
        closingBalance: balance?.balance ?? 0,
        operations: [],
        extIdStatementRequest: row.requestDocumentId ?? undefined,
      });
      documents = [
        {
          id: row.documentId,
          dockind: DOCKIND.statement,
          formatVersion: version,
          xml,
          compressed: row.compressed,
        },
      ];
    } else {
      const ids = JSON.parse(row.statementIds ?? "[]") as string[];
      documents = ids.map((statementId, i) => {
        const statement = this.deps.statementRepo.findById(statementId)!;
        const id = i === 0 ? row.documentId : `${row.documentId}-${i + 1}`;
        const xml = buildStatement({
          ...header,
          id,
          sender: bank,
          recipient: customer,
          statementType: "0",
          dateFrom: `${statement.date_from}T00:00:00`,
          dateTo: `${statement.date_to}T23:59:59`,
          account: account.accountNumber,
          bank: { bic: account.bik },
          openingBalance: statement.opening_balance ?? 0,
          totalDebits: statement.total_debit ?? 0,
          totalCredits: statement.total_credit ?? 0,
          closingBalance: statement.closing_balance ?? 0,
          operations: this.operations(statement.id, account.id, statement.operations_count ?? 0),
          extIdStatementRequest: row.requestDocumentId ?? undefined,
        });
        return { id, dockind: DOCKIND.statement, formatVersion: version, xml, compressed: row.compressed };
      });
    }
    return {
      id: row.id,
      formatVersion: version,
      creationDate,
      userAgent: USER_AGENT,
      sender: { kind: "bank", ...bank },
      recipient: { kind: "customer", ...customer },
      documents,
    };
  }

  /** A ready statement's operations in their order, read as the exports read them. */
  private operations(statementId: string, accountId: string, count: number): StatementOperation[] {
    const ops: StatementOperation[] = [];
    const statement = { id: statementId, bank_account_id: accountId };
    for (let first = 1; first <= count; first += OPERATIONS_PAGE) {
      const seqs = Array.from({ length: Math.min(OPERATIONS_PAGE, count - first + 1) }, (_, i) => first + i);
      for (const r of this.deps.exportReads.operationsAt(statement, seqs)) ops.push(r.op);
    }
    return ops;
  }

  /** An instant as the standard's xsd:dateTime in svc's business time zone, to the second. */
  localTime(at: Date): string {
    return dateTimeInZone(at, this.deps.timezone);
  }

  /** GetPackList's `date`: "dd.MM.yyyy HH:mm:ss" (the standard), "yyyy-MM-dd HH:mm:ss" or
   *  "yyyy-MM-ddTHH:mm:ss" (what real clients send), in svc's business time zone; an ISO instant. */
  private parseStamp(text: string): string {
    const m =
      /^(\d{2})\.(\d{2})\.(\d{4})[ T](\d{2}):(\d{2}):(\d{2})$/.exec(text.trim()) ??
      /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})(?:\.\d+)?$/.exec(text.trim());
    if (!m) throw new DirectBankError("2101", "Ожидается dd.MM.yyyy HH:mm:ss");
    const [y, mo, d] = m[1]!.length === 4 ? [m[1]!, m[2]!, m[3]!] : [m[3]!, m[2]!, m[1]!];
    const instant = instantOfWallTime(`${y}-${mo}-${d}T${m[4]}:${m[5]}:${m[6]}`, this.deps.timezone);
    if (instant === null) throw new DirectBankError("2101");
    return instant.toISOString();
  }

  private format<T>(read: () => T): T {
    try {
      return read();
    } catch (e) {
      if (e instanceof DirectBankFormatError) throw new DirectBankError(e.code, e.message);
      throw e;
    }
  }

  private checkedSync<T>(work: () => T): T {
    try {
      return work();
    } catch (e) {
      throw asDirectBankError(e) ?? e;
    }
  }

  private async checked<T>(work: () => T | Promise<T>): Promise<T> {
    try {
      const result = await work();
      return result;
    } catch (e) {
      throw asDirectBankError(e) ?? e;
    }
  }
}

function basicCredentials(authorization: string | null): { user: string; password: string } {
  if (!authorization) throw new DirectBankError("1002", "Нет заголовка Authorization");
  const m = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(authorization);
  if (!m) throw new DirectBankError("1011", "Ожидается Authorization: Basic");
  const text = Buffer.from(m[1]!, "base64").toString("utf8");
  const colon = text.indexOf(":");
  if (colon < 0) throw new DirectBankError("1201");
  return { user: text.slice(0, colon), password: text.slice(colon + 1) };
}

function decodeUtf8(bytes: Uint8Array): string {
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw new DirectBankError("2001", "Транспортный контейнер не в кодировке UTF-8");
  }
}
