// The customer's side of a bank's 1C:DirectBank service: Logon (basic authentication, the
// statement-only login), SendPack, GetPackList and GetPack, each answered with a ResultBank read by
// the codec. A session the bank closed (1006, 1007) is opened again once; the standard's errors
// become BankErrors carrying the bank's code.
import {
  buildPacket,
  DirectBankFormatError,
  type Packet,
  parseResultBank,
  type ResultBankBody,
  xmlBytes,
} from "../../formats/directbank";
import { BankError } from "../adapter";
import type { DirectBankLogin } from "./login";

/** A packet from the bank is read whole; statements of a busy account stay far below this. */
const MAX_DOCUMENT_BYTES = 64 * 1024 * 1024;
const TIMEOUT_MS = 60_000;

/** Codes after which the same call, later, can succeed (the service is down or overloaded). */
const TRANSIENT = new Set(["1001", "1010", "1203"]);
/** Codes that say the login itself does not work: the operator must fix it. */
const LOGIN_REFUSED = new Set(["1008", "1011", "1201", "1202"]);
/** The session ended: log on again. */
const SESSION_GONE = new Set(["1006", "1007"]);

/** The bank refused the login (wrong user or password, blocked). */
export class LoginRefused extends BankError {}

type Success = Exclude<ResultBankBody, { kind: "error" }>;

export class DirectBankHttp {
  /** Open sessions, per stored login (its connection id) and user. */
  private readonly sessions = new Map<string, string>();

  constructor(private readonly fetchFn: typeof fetch = fetch) {}

  private async exchange(
    login: DirectBankLogin,
    method: "GET" | "POST",
    path: string,
    headers: Record<string, string>,
    body?: Uint8Array,
  ): Promise<ResultBankBody> {
    let res: Response;
    try {
      res = await this.fetchFn(`${login.url}/${path}`, {
        method,
        headers: {
          "content-type": "application/xml; charset=utf-8",
          customerid: login.customerId,
          apiversion: login.version,
          ...headers,
        },
        body,
        signal: AbortSignal.timeout(TIMEOUT_MS),
      });
    } catch (e) {
      throw new BankError("bank_unavailable", `Сервис DirectBank банка недоступен: ${(e as Error).message}`, {
        cause: e,
      });
    }
    const text = new TextDecoder().decode(await res.arrayBuffer());
    try {
      return parseResultBank(text, MAX_DOCUMENT_BYTES);
    } catch (e) {
      if (!(e instanceof DirectBankFormatError)) throw e;
      // A proxy's page or an outage: nothing of the standard to read.
      throw new BankError(
        "bank_error",
        `Банк ответил не по стандарту DirectBank (HTTP ${res.status}): ${e.message}`,
        { retryable: res.status >= 500 || res.status === 429 },
      );
    }
  }

  private failure(body: Extract<ResultBankBody, { kind: "error" }>, what: string): BankError {
    const message = `${what}: ${body.description} (код ${body.code})${body.moreInfo ? `; ${body.moreInfo}` : ""}`;
    if (LOGIN_REFUSED.has(body.code)) {
      return new LoginRefused("bank_credentials", message, { retryable: false, bankCode: body.code });
    }
    return new BankError("bank_error", message, { retryable: TRANSIENT.has(body.code), bankCode: body.code });
  }

  /** Logon with the login's user and password: the session id. */
  async logon(login: DirectBankLogin): Promise<string> {
    const answer = await this.exchange(login, "POST", "Logon", {
      authorization: `Basic ${Buffer.from(`${login.user}:${login.password}`).toString("base64")}`,
      availableapiversion: login.version,
    });
    if (answer.kind === "error") throw this.failure(answer, "Банк не принял вход");
    if (answer.kind !== "logon" || !answer.sid) throw new BankError("bank_error", "Банк не выдал сессию");
    return answer.sid;
  }

  /** One call in the login's session, opened (again) as needed. */
  private async inSession<K extends Success["kind"]>(
    key: string,
    login: DirectBankLogin,
    kind: K,
    what: string,
    call: (sid: string) => Promise<ResultBankBody>,
  ): Promise<Extract<Success, { kind: K }>> {
    const sessionKey = `${key}\u0000${login.user}`;
    for (let attempt = 0; ; attempt++) {
      let sid = this.sessions.get(sessionKey);
      if (!sid) {
        sid = await this.logon(login);
        this.sessions.set(sessionKey, sid);
      }
      const answer = await call(sid);
      if (answer.kind === "error") {
        if (SESSION_GONE.has(answer.code) && attempt === 0) {
          this.sessions.delete(sessionKey);
          continue;
        }
        throw this.failure(answer, what);
      }
      if (answer.kind !== kind) throw new BankError("bank_error", `${what}: неожиданный ответ банка`);
      return answer as Extract<Success, { kind: K }>;
    }
  }

  /** SendPack: the id the bank gave the packet. */
  async sendPack(key: string, login: DirectBankLogin, packet: Packet): Promise<string> {
    const bytes = xmlBytes(buildPacket(packet));
    const answer = await this.inSession(key, login, "sendPacket", "Банк не принял запрос выписки", (sid) =>
      this.exchange(login, "POST", "SendPack", { sid }, bytes),
    );
    return answer.id;
  }

  /** GetPackList: the packets ready since `date` (dd.MM.yyyy HH:mm:ss, the bank's time). */
  async packList(key: string, login: DirectBankLogin, date: string): Promise<string[]> {
    const answer = await this.inSession(key, login, "packetList", "Банк не дал список пакетов", (sid) =>
      this.exchange(login, "GET", `GetPackList?date=${encodeURIComponent(date)}`, { sid }),
    );
    return answer.ids;
  }

  async pack(key: string, login: DirectBankLogin, id: string): Promise<Packet> {
    const answer = await this.inSession(key, login, "packet", `Банк не отдал пакет ${id}`, (sid) =>
      this.exchange(login, "GET", `GetPack?id=${encodeURIComponent(id)}`, { sid }),
    );
    return answer.packet;
  }
}
