// A stateful bank speaking 1C:DirectBank on a loopback port, for svc's `directbank` adapter: it
// checks every request svc sends (the packet and each document) against the official schema of
// its version with xmllint, answers with documents that validate (checked too), and can instead
// answer with a real bank's messages as they are (Alfa-Bank's 2.2.2 samples).
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import {
  buildResultBank,
  buildSettings,
  buildStatement,
  buildStatusPacketNotice,
  type DirectBankVersion,
  DOCKIND,
  dateOf,
  type Packet,
  packDocumentData,
  parsePacket,
  parseStatementRequest,
  type ResultBankBody,
  xmlBytes,
} from "../../src/formats/directbank";
import type { StatementOperation } from "../../src/formats/types";
import { schemaErrors } from "../directbank/client";

export const BANK_BIC = "044525999";
export const SAMPLES = resolve(import.meta.dir, "../fixtures/directbank/alfa-bank");

export interface FakeAccount {
  /** Kopecks at the start of the first day any operation has. */
  opening: number;
  operations: StatementOperation[];
}

export interface FakeDirectBankOptions {
  version?: DirectBankVersion;
  /** Answer with Alfa-Bank's sample messages as they are instead of its own. */
  samples?: boolean;
  /** GetPackList rounds before a request's packets are listed. */
  listsBeforeReady?: number;
  /** Statements name the request they answer (ExtIDStatementRequest); default true. */
  echoRequestId?: boolean;
}

export interface FakeDirectBank {
  url: string;
  version: DirectBankVersion;
  customerId: string;
  /** Requests or answers that broke the schema, or the standard's rules. */
  violations: string[];
  /** Statement requests received: their dates and types. */
  requests: { from: string; to: string; type: string }[];
  addUser(user: string, password: string): void;
  addAccount(number: string, account: FakeAccount): void;
  /** The next statement requests are refused with this code in a StatusPacketNotice. */
  refuseStatements(code: string | null): void;
  /** Closes every open session (the bank's time-out). */
  expireSessions(): void;
  /** The next statement's closing balance is off by this many kopecks. */
  skewNextStatement(kopecks: number): void;
  /** The next statement document is changed by `edit` after its schema check (a bank's fault). */
  editNextStatement(edit: (xml: string) => string): void;
  /** GetPack answers 2102 (no such packet) from now on. */
  forgetPackets(): void;
  /** The bank's settings file; `accounts` adds the account list some banks put in it. */
  settingsXml(opts?: { url?: string; version?: DirectBankVersion; accounts?: string[] }): string;
  calls: string[];
  stop(): Promise<void>;
}

const sample = (name: string) => readFileSync(resolve(SAMPLES, name), "utf8");

let counter = 0;

export function startFakeDirectBank(options: FakeDirectBankOptions = {}): FakeDirectBank {
  const version = options.version ?? "2.3.2";
  const customerId = `cust-${++counter}`;
  const users = new Map<string, string>();
  const sessions = new Set<string>();
  const accounts = new Map<string, FakeAccount>();
  const packets = new Map<string, { packet: Packet; listsLeft: number }>();
  const violations: string[] = [];
  const requests: FakeDirectBank["requests"] = [];
  const calls: string[] = [];
  let refusal: string | null = null;
  let skew = 0;
  let forgotten = false;
  let editStatement: ((xml: string) => string) | null = null;

  const answer = (body: ResultBankBody) => {
    const bytes = xmlBytes(buildResultBank(version, body));
    const bad = schemaErrors(bytes, version, "ResultBank");
    if (bad) violations.push(`answer: ${bad}`);
    return new Response(bytes, { headers: { "content-type": "application/xml; charset=utf-8" } });
  };
  const error = (code: string, description: string) => answer({ kind: "error", code, description });
  const raw = (xml: string) =>
    new Response(xml, { headers: { "content-type": "application/xml; charset=utf-8" } });

  const now = () => new Date().toISOString().slice(0, 19);

  function readyPacket(documents: Packet["documents"]): void {
    const id = crypto.randomUUID();
    const packet: Packet = {
      id,
      formatVersion: version,
      creationDate: now(),
      sender: { kind: "bank", bic: BANK_BIC, name: "АО Тестбанк" },
      recipient: { kind: "customer", id: customerId, name: "ООО Ромашка" },
      documents,
    };
    for (const d of documents) {
      const schema = d.dockind === DOCKIND.statement ? "Statement" : "StatusPacketNotice";
      const bad = schemaErrors(xmlBytes(d.xml), version, schema);
      if (bad) violations.push(`document: ${bad}`);
    }
    if (editStatement) {
      const edit = editStatement;
      editStatement = null;
      for (const d of documents) if (d.dockind === DOCKIND.statement) d.xml = edit(d.xml);
    }
    packets.set(id, { packet, listsLeft: options.listsBeforeReady ?? 0 });
  }

  function notice(
    bankId: string,
    packetId: string,
    result: Parameters<typeof buildStatusPacketNotice>[0]["result"],
  ) {
    const id = crypto.randomUUID();
    return {
      id,
      dockind: DOCKIND.statusPacketNotice,
      formatVersion: version,
      xml: buildStatusPacketNotice({
        id,
        formatVersion: version,
        creationDate: now(),
        sender: { kind: "bank", bic: BANK_BIC },
        recipient: { kind: "customer", id: customerId },
        receivedId: bankId,
        result,
        extIdPacket: packetId,
      }),
    };
  }

  function statementFor(request: ReturnType<typeof parseStatementRequest>, account: FakeAccount) {
    const from = dateOf(request.dateFrom)!;
    const to = dateOf(request.dateTo)!;
    let balance = account.opening;
    const inPeriod: StatementOperation[] = [];
    for (const op of account.operations) {
      const signed = op.direction === "credit" ? op.amount : -op.amount;
      if (op.doc_date < from) balance += signed;
      else if (op.doc_date <= to) inPeriod.push(op);
    }
    const credits = inPeriod.filter((o) => o.direction === "credit").reduce((s, o) => s + o.amount, 0);
    const debits = inPeriod.filter((o) => o.direction === "debit").reduce((s, o) => s + o.amount, 0);
    const closing = balance + credits - debits + skew;
    skew = 0;
    const id = crypto.randomUUID();
    const current = request.statementType === "2";
    return {
      id,
      dockind: DOCKIND.statement,
      formatVersion: version,
      xml: buildStatement({
        id,
        formatVersion: version,
        creationDate: now(),
        sender: { bic: BANK_BIC, name: "АО Тестбанк" },
        recipient: { id: customerId, name: "ООО Ромашка" },
        statementType: request.statementType,
        dateFrom: current ? undefined : `${from}T00:00:00`,
        dateTo: `${to}T23:59:59`,
        account: request.account,
        bank: { bic: BANK_BIC, name: "АО Тестбанк", corrAccount: "30101810400000000999" },
        openingBalance: current ? undefined : balance,
        totalDebits: current ? undefined : debits,
        totalCredits: current ? undefined : credits,
        closingBalance: closing,
        operations: current ? [] : inPeriod,
        extIdStatementRequest: options.echoRequestId === false ? undefined : request.id,
      }),
    };
  }

  async function sendPack(req: Request): Promise<Response> {
    const bytes = new Uint8Array(await req.arrayBuffer());
    const bad = schemaErrors(bytes, version, "Packet");
    if (bad) violations.push(`request: ${bad}`);
    let packet: Packet;
    try {
      packet = parsePacket(new TextDecoder().decode(bytes), 10_000_000);
    } catch (e) {
      return error("2001", (e as Error).message);
    }
    const received = packet.documents.map((d) => {
      const badDoc = schemaErrors(xmlBytes(d.xml), version, "StatementRequest");
      if (badDoc) violations.push(`request document: ${badDoc}`);
      const request = parseStatementRequest(d.xml);
      requests.push({
        from: dateOf(request.dateFrom)!,
        to: dateOf(request.dateTo)!,
        type: request.statementType,
      });
      return request;
    });
    if (options.samples) return raw(sample("sendpack-response.xml"));
    const bankId = crypto.randomUUID();
    const docs: Packet["documents"] = [];
    for (const request of received) {
      const account = accounts.get(request.account);
      if (refusal || !account) {
        docs.push(
          notice(bankId, packet.id, {
            error: {
              code: refusal ?? "2205",
              description: account ? "Выписка не может быть сформирована" : "Счёт не найден",
            },
          }),
        );
        continue;
      }
      docs.push(notice(bankId, packet.id, { status: { code: "01", name: "Принят" } }));
      docs.push(statementFor(request, account));
    }
    readyPacket(docs);
    return answer({ kind: "sendPacket", id: bankId });
  }

  function session(req: Request): Response | null {
    const sid = req.headers.get("sid");
    if (!req.headers.get("customerid")) violations.push("a call without CustomerID");
    if (!sid || !sessions.has(sid)) return error(sid ? "1006" : "1007", "Сессия закрыта по тайм-ауту");
    return null;
  }

  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req) {
      const url = new URL(req.url);
      const method = url.pathname.split("/").pop()!;
      calls.push(method);
      if (req.headers.get("apiversion") !== version)
        violations.push(`APIVersion ${req.headers.get("apiversion")}`);
      if (method === "Logon") {
        const auth = req.headers.get("authorization") ?? "";
        const [user, password] = Buffer.from(auth.replace(/^Basic /, ""), "base64")
          .toString()
          .split(":");
        if (!user || users.get(user) !== password)
          return error("1201", "Некорректные данные для аутентификации");
        if (options.samples) {
          sessions.add("3849a8ad-5c31-42f8-aeb2-4643737228d8");
          return raw(sample("logon-response.xml"));
        }
        const sid = crypto.randomUUID();
        sessions.add(sid);
        return answer({ kind: "logon", sid });
      }
      const refused = session(req);
      if (refused) return refused;
      if (method === "SendPack" && req.method === "POST") return sendPack(req);
      if (method === "GetPackList") {
        const date = url.searchParams.get("date");
        if (date !== null && !/^\d{2}\.\d{2}\.\d{4} \d{2}:\d{2}:\d{2}$/.test(date)) {
          violations.push(`GetPackList date ${date}`);
          return error("2101", "Некорректный формат отметки времени");
        }
        if (options.samples) return raw(sample("getpacklist-response.xml"));
        const ids: string[] = [];
        for (const [id, p] of packets) {
          if (p.listsLeft > 0) p.listsLeft -= 1;
          else ids.push(id);
        }
        return answer({ kind: "packetList", ids });
      }
      if (method === "GetPack") {
        const id = url.searchParams.get("id") ?? "";
        if (options.samples) {
          if (id === "66b7012a-43c0-4122-a671-ba41f5dafc60")
            return raw(sample("getpack-response-status.xml"));
          return raw(samplePacket(id));
        }
        const p = packets.get(id);
        if (!p || forgotten) return error("2102", "Транспортный контейнер не найден");
        return answer({ kind: "packet", packet: p.packet });
      }
      return error("1010", "Метод не найден");
    },
  });

  /** The sample statement document, as the bank wrote it, in the envelope of its status packet. */
  function samplePacket(id: string): string {
    const envelope = sample("getpack-response-status.xml");
    const data = packDocumentData(sample("getpack-response-statement.xml"), false);
    return envelope
      .replace(/(<GetPacketResponse id=")[^"]+/, `$1${id}`)
      .replace(/dockind="01"/, 'dockind="15"')
      .replace(/<Data>[^<]+<\/Data>/, `<Data>${data}</Data>`);
  }

  const url = `http://127.0.0.1:${server.port}/directbank`;
  return {
    url,
    version,
    customerId: options.samples ? "40702810701300009144" : customerId,
    violations,
    requests,
    calls,
    addUser: (user, password) => users.set(user, password),
    addAccount: (number, account) => accounts.set(number, account),
    refuseStatements: (code) => {
      refusal = code;
    },
    expireSessions: () => sessions.clear(),
    skewNextStatement: (kopecks) => {
      skew = kopecks;
    },
    editNextStatement: (edit) => {
      editStatement = edit;
    },
    forgetPackets: () => {
      forgotten = true;
    },
    settingsXml(opts = {}) {
      const v = opts.version ?? version;
      const listed = (opts.accounts ?? []).map((a) => `<Account>${a}</Account>`).join("");
      const xml = buildSettings({
        id: crypto.randomUUID(),
        formatVersion: v,
        creationDate: now(),
        sender: { bic: BANK_BIC, name: "АО Тестбанк" },
        recipient: { id: customerId, name: "ООО Ромашка", inn: "7719617469" },
        customerId,
        bankServerAddress: opts.url ?? url,
        version: v,
        compress: v === "2.2.2",
        user: "statements",
        docKinds: ["01", "14", "15"],
        receiptStatement: { login: "statements", instructions: "Логин выписок" },
      });
      const bad = schemaErrors(xmlBytes(xml), v, "Settings");
      if (bad) violations.push(`settings: ${bad}`);
      return listed ? xml.replace("</Data>", `<Accounts>${listed}</Accounts></Data>`) : xml;
    },
    stop: () => server.stop(true),
  };
}
