// A bank's 1C:DirectBank service behind the BankAdapter seam (bank "directbank", decisions §18):
// statements through the statement-only login — a StatementRequest per piece of the period (at most
// `max_days` each), the packets the bank makes ready since the request, its notices and Statement
// documents in 2.3.2 or 2.2.2 — and the balance as a StatementType 2 request. Payments are not
// offered through DirectBank.
import { randomUUID } from "node:crypto";
import { type Clock, dateTimeInZone } from "../../core/clock";
import {
  buildStatementRequest,
  DirectBankFormatError,
  DOCKIND,
  type Packet,
  parseStatement,
  parseStatusPacketNotice,
  type StatementDocument,
  type StatementKind,
  type StatusPacketNoticeDocument,
  USER_AGENT,
} from "../../formats/directbank";
import {
  type BalanceResult,
  type BankAccountRef,
  type BankAdapter,
  BankError,
  type ConnectionStore,
  type CredentialsCheck,
  type DiscoveredAccount,
  type PaymentSubmitResult,
  type StatementPeriod,
  type StatementPollResult,
} from "../adapter";
import { DirectBankHttp, LoginRefused } from "./http";
import { checkLogin, type DirectBankLogin, LoginProblem, readLogin } from "./login";
import { answersPeriod, readyStatement } from "./statement";

export interface DirectBankAdapterDeps {
  connections: ConnectionStore;
  clock: Clock;
  /** The zone of the bank's wall clock (packet times, GetPackList's date). */
  timezone?: string;
  fetch?: typeof fetch;
}

/** One StatementRequest sent: svc's packet and document ids, the bank's id, the dates covered. */
interface SentPiece {
  packetId: string;
  bankId: string;
  documentId: string;
  from: string;
  to: string;
}

/** What a bank packet holds for svc: its notices and statements (other documents are ignored). */
interface Received {
  notices: StatusPacketNoticeDocument[];
  statements: StatementDocument[];
  /** Statement documents that could not be read, with the reason (they fail an order they answer). */
  unreadable: { xml: string; reason: string }[];
}

const BANK_TZ = "Europe/Moscow";
/** Packets the adapter remembers having read (the bank lists them again until they age out). */
const RECEIVED_CACHE = 2000;
/** Rounds of GetPackList a balance waits for its answer. */
const BALANCE_ROUNDS = 5;
const BALANCE_PAUSE_MS = 1000;

/** An account number's currency digits (6–8) as ISO codes: the ones Russian banks use most. */
const CURRENCY_BY_CODE: Record<string, string> = {
  "810": "RUB",
  "840": "USD",
  "978": "EUR",
  "156": "CNY",
};

/** Inclusive pieces of at most `maxDays` days. */
function periodPieces(period: StatementPeriod, maxDays: number): { from: string; to: string }[] {
  const day = (iso: string) => Date.parse(`${iso}T00:00:00Z`);
  const iso = (ms: number) => new Date(ms).toISOString().slice(0, 10);
  const out: { from: string; to: string }[] = [];
  const end = day(period.date_to);
  for (let start = day(period.date_from); start <= end; start += maxDays * 86_400_000) {
    out.push({ from: iso(start), to: iso(Math.min(end, start + (maxDays - 1) * 86_400_000)) });
  }
  return out;
}

/** bank_request_id: when the requests went, then each piece's ids and dates. */
function encodeRequest(sentAtMs: number, pieces: SentPiece[]): string {
  return [
    `dbk1:${sentAtMs}`,
    ...pieces.map((p) => [p.packetId, p.bankId, p.documentId, p.from, p.to].join(",")),
  ].join(";");
}

function decodeRequest(id: string): { sentAtMs: number; pieces: SentPiece[] } {
  const [head, ...rest] = id.split(";");
  const sentAtMs = Number(head?.startsWith("dbk1:") ? head.slice(5) : Number.NaN);
  if (!Number.isFinite(sentAtMs) || rest.length === 0) {
    throw new BankError("bank_error", "Запрос выписки DirectBank не распознан", { retryable: false });
  }
  const pieces = rest.map((r) => {
    const [packetId, bankId, documentId, from, to] = r.split(",");
    return { packetId: packetId!, bankId: bankId!, documentId: documentId!, from: from!, to: to! };
  });
  return { sentAtMs, pieces };
}

export function createDirectBankAdapter(deps: DirectBankAdapterDeps): BankAdapter & {
  readonly http: DirectBankHttp;
} {
  const http = new DirectBankHttp(deps.fetch);
  const timezone = deps.timezone ?? BANK_TZ;
  const received = new Map<string, Received>();

  function loginOf(ref: BankAccountRef): { key: string; login: DirectBankLogin } {
    if (!ref.connection_id) {
      throw new BankError("bank_credentials", "Для счёта не заданы реквизиты DirectBank", {
        retryable: false,
      });
    }
    try {
      return { key: ref.connection_id, login: readLogin(deps.connections.read(ref.connection_id)) };
    } catch (e) {
      if (e instanceof LoginProblem) throw new BankError("bank_credentials", e.message, { retryable: false });
      throw e;
    }
  }

  /** A call whose login the bank refused marks the login refused: the admin page names why. */
  async function guarded<T>(ref: BankAccountRef, call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (e) {
      if (e instanceof LoginRefused && ref.connection_id)
        deps.connections.refused(ref.connection_id, e.message);
      throw e;
    }
  }

  const wall = (at: Date) => dateTimeInZone(at, timezone);

  async function sendRequest(
    ref: BankAccountRef,
    key: string,
    login: DirectBankLogin,
    kind: StatementKind,
    from: string,
    to: string,
  ): Promise<SentPiece> {
    const now = wall(deps.clock.now());
    const documentId = randomUUID();
    const packetId = randomUUID();
    const customer = {
      id: login.customerId,
      name: ref.holder?.name || login.customer.name,
      inn: ref.holder?.inn || login.customer.inn,
      kpp: ref.holder?.kpp || login.customer.kpp,
    };
    const bank = { bic: ref.bik };
    const xml = buildStatementRequest({
      id: documentId,
      formatVersion: login.version,
      creationDate: now,
      userAgent: USER_AGENT,
      sender: customer,
      recipient: bank,
      statementType: kind,
      dateFrom: `${from}T00:00:00`,
      dateTo: `${to}T23:59:59`,
      account: ref.account_number,
      bank,
    });
    const packet: Packet = {
      id: packetId,
      formatVersion: login.version,
      creationDate: now,
      userAgent: USER_AGENT,
      sender: { kind: "customer", ...customer },
      recipient: { kind: "bank", ...bank },
      documents: [
        {
          id: documentId,
          dockind: DOCKIND.statementRequest,
          formatVersion: login.version,
          xml,
          compressed: login.compress,
          fileName: `${documentId}.xml`,
        },
      ],
    };
    const bankId = await http.sendPack(key, login, packet);
    return { packetId, bankId, documentId, from, to };
  }

  function read(packet: Packet): Received {
    const out: Received = { notices: [], statements: [], unreadable: [] };
    for (const d of packet.documents) {
      try {
        if (d.dockind === DOCKIND.statusPacketNotice) out.notices.push(parseStatusPacketNotice(d.xml));
        else if (d.dockind === DOCKIND.statement) out.statements.push(parseStatement(d.xml));
      } catch (e) {
        if (!(e instanceof DirectBankFormatError)) throw e;
        if (d.dockind === DOCKIND.statement) out.unreadable.push({ xml: d.xml, reason: e.message });
      }
    }
    return out;
  }

  /** Every packet the bank lists since the requests went (read once each). */
  async function receivedSince(key: string, login: DirectBankLogin, sentAtMs: number): Promise<Received[]> {
    // A minute's margin for the bank's clock; GetPackList takes dd.MM.yyyy HH:mm:ss.
    const [date, time] = wall(new Date(sentAtMs - 60_000)).split("T");
    const [y, m, d] = date!.split("-");
    const ids = await http.packList(key, login, `${d}.${m}.${y} ${time}`);
    const out: Received[] = [];
    for (const id of ids) {
      const cacheKey = `${key}\u0000${id}`;
      let r = received.get(cacheKey);
      if (!r) {
        r = read(await http.pack(key, login, id));
        received.set(cacheKey, r);
        if (received.size > RECEIVED_CACHE) received.delete(received.keys().next().value!);
      }
      out.push(r);
    }
    return out;
  }

  /** The bank's answers to the pieces: each one's statement, or the first refusal; null if waiting. */
  function match(
    ref: BankAccountRef,
    pieces: SentPiece[],
    packets: Received[],
    balance = false,
  ): { statements: (StatementDocument | null)[]; refusal: StatementPollResult | null } {
    const statements = pieces.map(() => null as StatementDocument | null);
    for (const r of packets) {
      for (const n of r.notices) {
        if (!("error" in n.result)) continue;
        const piece = pieces.find((p) => p.bankId === n.receivedId || p.packetId === n.extIdPacket);
        if (!piece) continue;
        const e = n.result.error;
        return {
          statements,
          refusal: {
            status: "failed",
            error: {
              code: "bank_error",
              message: `Банк отказал в выписке за ${piece.from}…${piece.to}: ${e.description} (код ${e.code})${e.moreInfo ? `; ${e.moreInfo}` : ""}`,
              bank_code: e.code,
            },
          },
        };
      }
      for (const u of r.unreadable) {
        if (pieces.some((p) => u.xml.includes(p.documentId)) || u.xml.includes(ref.account_number)) {
          return {
            statements,
            refusal: {
              status: "failed",
              error: { code: "bank_error", message: `Выписка банка не прочитана: ${u.reason}` },
            },
          };
        }
      }
      for (const s of r.statements) {
        const i = pieces.findIndex((p) => p.documentId === s.extIdStatementRequest);
        const at =
          i >= 0 ? i : pieces.findIndex((p) => answersPeriod(s, balance, ref.account_number, p.from, p.to));
        if (at >= 0) statements[at] = s;
      }
    }
    return { statements, refusal: null };
  }

  return {
    bank: "directbank",
    http,
    supportsStatements: true,

    checkCredentials: (credentials: unknown): CredentialsCheck => checkLogin(credentials),

    async verifyCredentials(credentials: unknown): Promise<CredentialsCheck> {
      const login = readLogin(credentials);
      try {
        await http.logon(login);
        return { ok: true, status: "active" };
      } catch (e) {
        if (!(e instanceof BankError)) throw e;
        return e instanceof LoginRefused
          ? { ok: false, field: "credentials.login", message: e.message }
          : {
              ok: false,
              field: login.fromSettings ? "credentials.settings" : "credentials.url",
              message: `Вход в банк не удался: ${e.message}`,
            };
      }
    },

    async requestStatement(ref: BankAccountRef, period: StatementPeriod) {
      const { key, login } = loginOf(ref);
      const sentAtMs = deps.clock.now().getTime();
      const pieces: SentPiece[] = [];
      await guarded(ref, async () => {
        for (const p of periodPieces(period, login.maxDays)) {
          pieces.push(await sendRequest(ref, key, login, "0", p.from, p.to));
        }
      });
      return { bank_request_id: encodeRequest(sentAtMs, pieces) };
    },

    async pollStatement(ref: BankAccountRef, bankRequestId: string): Promise<StatementPollResult> {
      const { key, login } = loginOf(ref);
      const { sentAtMs, pieces } = decodeRequest(bankRequestId);
      const packets = await guarded(ref, () => receivedSince(key, login, sentAtMs));
      const { statements, refusal } = match(ref, pieces, packets);
      if (refusal) return refusal;
      if (statements.some((s) => s === null)) return { status: "processing" };
      return readyStatement(
        pieces.map((p, i) => ({ from: p.from, to: p.to, statement: statements[i]! })),
        ref.currency,
      );
    },

    async getBalance(ref: BankAccountRef): Promise<BalanceResult> {
      const { key, login } = loginOf(ref);
      const sentAtMs = deps.clock.now().getTime();
      const today = wall(deps.clock.now()).slice(0, 10);
      return guarded(ref, async () => {
        const piece = await sendRequest(ref, key, login, "2", today, today);
        for (let round = 0; round < BALANCE_ROUNDS; round++) {
          if (round > 0) await new Promise((r) => setTimeout(r, BALANCE_PAUSE_MS));
          const { statements, refusal } = match(
            ref,
            [piece],
            await receivedSince(key, login, sentAtMs),
            true,
          );
          if (refusal?.status === "failed") {
            throw new BankError("bank_error", refusal.error.message, {
              retryable: false,
              bankCode: refusal.error.bank_code,
            });
          }
          const s = statements[0];
          if (s) return { balance: s.closingBalance, as_of: deps.clock.now() };
        }
        throw new BankError("bank_error", "Банк не прислал остаток вовремя; повторите позже");
      });
    },

    /** The accounts the login's settings name; without settings, the account itself. */
    async listAccounts(ref: BankAccountRef): Promise<DiscoveredAccount[]> {
      const { login } = loginOf(ref);
      const bic = login.bank?.bic ?? ref.bik;
      const numbers = login.bank?.accounts.length ? login.bank.accounts : [ref.account_number];
      return numbers.map((number) => ({
        account_number: number,
        bik: bic,
        currency: CURRENCY_BY_CODE[number.slice(5, 8)] ?? ref.currency,
        status: "Enabled",
      }));
    },

    async submitPayment(): Promise<PaymentSubmitResult> {
      return {
        status: "rejected",
        error: { code: "bank_not_supported", message: "Платежи через DirectBank не отправляются" },
      };
    },
  };
}
