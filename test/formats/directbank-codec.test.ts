// lanes: sqlite
// The 1C:DirectBank codec on its own: every message it builds is valid against the official schema
// of its version and parses back to what was built (both ways, as svc's bank service and a client
// of banks use it); a real bank's messages (Alfa-Bank, format 2.2.2) parse; faults carry the
// standard's codes.
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import {
  buildPacket,
  buildProbe,
  buildResultBank,
  buildSettings,
  buildStatement,
  buildStatementRequest,
  buildStatusPacketNotice,
  DIRECTBANK_NS,
  DIRECTBANK_VERSIONS,
  DirectBankFormatError,
  parsePacket,
  parseProbe,
  parseResultBank,
  parseSettings,
  parseStatement,
  parseStatementRequest,
  parseStatusPacketNotice,
  type ResultBankBody,
  type StatementDocument,
} from "../../src/formats/directbank";
import { DOC_TYPES } from "../../src/formats/types";
import { schemaErrors } from "../directbank/client";
import { statementOperation } from "../helpers/rows";

const ALFA = resolve(import.meta.dir, "../fixtures/directbank/alfa-bank");
const alfa = (name: string) => readFileSync(resolve(ALFA, name), "utf8");
const MAX = 1024 * 1024;
const header = (version: string, id = "11111111-1111-4111-8111-111111111111") => ({
  id,
  formatVersion: version,
  creationDate: "2026-11-20T12:00:00",
  userAgent: "test",
});
const customer = { id: "c-1", name: 'ООО "Ромашка" & Ко', inn: "7719617469", kpp: "771901001" };
const bank = { bic: "044525225", name: "ПАО Банк" };

function statement(version: string): StatementDocument {
  const operations = DOC_TYPES.map((docType, i) =>
    statementOperation({
      operation_id: `op-${i}`,
      doc_type: docType,
      direction: i % 2 === 0 ? "credit" : "debit",
      amount: 1000 * (i + 1),
      purpose: "Оплата по счёту № 12 <срочно> & в т.ч. НДС",
      priority: "5",
      uin: "0",
      budget:
        docType === "payment_order"
          ? { originator_status: "01", kbk: "18210102010011000110", period: "МС.10.2026", date: "0" }
          : null,
    }),
  );
  return {
    ...header(version),
    sender: bank,
    recipient: customer,
    statementType: "0",
    dateFrom: "2026-11-01T00:00:00",
    dateTo: "2026-11-19T23:59:59",
    account: "40702810000000000001",
    bank: { bic: bank.bic, name: bank.name, corrAccount: "30101810400000000225" },
    openingBalance: 100_000,
    totalCredits: 9000,
    totalDebits: 12000,
    closingBalance: 97_000,
    operations,
    extIdStatementRequest: "22222222-2222-4222-8222-222222222222",
  };
}

describe("DirectBank codec", () => {
  for (const version of DIRECTBANK_VERSIONS) {
    test(`documents build valid and parse back (${version})`, () => {
      const s = statement(version);
      const xml = buildStatement(s);
      expect(schemaErrors(xml, version, "Statement")).toBeNull();
      const back = parseStatement(xml);
      expect(back.closingBalance).toBe(97_000);
      expect(back.operations.map((o) => [o.operation_id, o.doc_type, o.direction, o.amount])).toEqual(
        s.operations.map((o) => [o.operation_id, o.doc_type, o.direction, o.amount]),
      );
      expect(back.operations[0]!.budget?.kbk).toBe("18210102010011000110");
      expect(back.operations[0]!.purpose).toBe(s.operations[0]!.purpose);

      const request = {
        ...header(version),
        sender: customer,
        recipient: bank,
        statementType: "0" as const,
        dateFrom: "2026-11-01T00:00:00",
        dateTo: "2026-11-02T23:59:59",
        account: "40702810000000000001",
        bank: { bic: bank.bic },
      };
      const requestXml = buildStatementRequest(request);
      expect(schemaErrors(requestXml, version, "StatementRequest")).toBeNull();
      expect(parseStatementRequest(requestXml)).toMatchObject({
        account: request.account,
        dateFrom: request.dateFrom,
      });

      const probeXml = buildProbe({ ...header(version), sender: customer, recipient: bank });
      expect(schemaErrors(probeXml, version, "Probe")).toBeNull();
      expect(parseProbe(probeXml).sender.name).toBe(customer.name);

      const settings = {
        ...header(version),
        sender: bank,
        recipient: customer,
        customerId: customer.id,
        bankServerAddress: "https://svc.example/directbank",
        version,
        compress: true,
        user: "u",
        docKinds: ["01", "05", "14", "15"],
        receiptStatement: { login: "auto-u", instructions: "токен" },
      };
      const settingsXml = buildSettings(settings);
      expect(schemaErrors(settingsXml, version, "Settings")).toBeNull();
      expect(parseSettings(settingsXml)).toMatchObject({
        compress: true,
        docKinds: settings.docKinds,
        user: "u",
      });

      for (const result of [
        { status: { code: "01", name: "Принят" } },
        { error: { code: "2206", description: "Некорректный период запроса выписки", moreInfo: "банк" } },
      ]) {
        const noticeXml = buildStatusPacketNotice({
          ...header(version),
          sender: { kind: "bank", ...bank },
          recipient: { kind: "customer", ...customer },
          receivedId: "r",
          result,
          extIdPacket: "p",
        });
        expect(schemaErrors(noticeXml, version, "StatusPacketNotice")).toBeNull();
        expect(parseStatusPacketNotice(noticeXml).result).toEqual(result);
      }
    });

    test(`packets and every ResultBank answer build valid and parse back (${version})`, () => {
      const packet = {
        ...header(version),
        sender: { kind: "bank" as const, ...bank },
        recipient: { kind: "customer" as const, ...customer },
        documents: [
          {
            id: "d1",
            dockind: "15",
            formatVersion: version,
            xml: buildStatement(statement(version)),
            compressed: true,
          },
          { id: "d2", dockind: "15", formatVersion: version, xml: buildStatement(statement(version)) },
        ],
      };
      const packetXml = buildPacket(packet);
      expect(schemaErrors(packetXml, version, "ResultBank")).toBeNull();
      const parsed = parsePacket(packetXml, MAX);
      expect(parsed.documents.map((d) => [d.compressed, parseStatement(d.xml).operations.length])).toEqual([
        [true, DOC_TYPES.length],
        [false, DOC_TYPES.length],
      ]);
      const answers = [
        { kind: "logon", sid: "s" },
        { kind: "sendPacket", id: "i" },
        { kind: "packetList", ids: ["a", "b"], timestampLastPacket: "2026-11-20T12:00:00" },
        { kind: "packetList", ids: [] },
        { kind: "packet", packet },
        {
          kind: "settings",
          id: "x",
          formatVersion: version,
          creationDate: "2026-11-20T12:00:00",
          settingsXml: "<a/>",
        },
        {
          kind: "error",
          code: "1201",
          description: "Некорректные данные для аутентификации",
          moreInfo: "нет",
        },
      ] satisfies ResultBankBody[];
      for (const answer of answers) {
        const xml = buildResultBank(version, answer);
        expect(schemaErrors(xml, version, "ResultBank")).toBeNull();
        const back = parseResultBank(xml, MAX);
        expect(back.kind).toBe(answer.kind);
      }
    });
  }

  test("a real bank's messages parse (Alfa-Bank, 2.2.2; inner documents without BOM)", () => {
    const st = parseStatement(alfa("getpack-response-statement.xml"));
    expect(st.operations.length).toBeGreaterThan(0);
    expect(st.operations.every((o) => /^\d{4}-\d{2}-\d{2}$/.test(o.doc_date))).toBe(true);
    const credits = st.operations.filter((o) => o.direction === "credit").reduce((a, o) => a + o.amount, 0);
    expect(credits).toBe(st.totalCredits!);
    const sent = parsePacket(alfa("sendpack-request-statement.xml"), MAX);
    expect(parseStatementRequest(sent.documents[0]!.xml).account).toBe("40702810701300009144");
    const status = parseResultBank(alfa("getpack-response-status.xml"), MAX);
    if (status.kind !== "packet") throw new Error(status.kind);
    expect(parseStatusPacketNotice(status.packet.documents[0]!.xml).result).toEqual({
      status: { code: "01", name: "Принят", moreInfo: undefined },
    });
    const list = parseResultBank(alfa("getpacklist-response.xml"), MAX);
    expect(list).toMatchObject({ kind: "packetList", ids: [expect.any(String), expect.any(String)] });
  });

  test("faults carry the standard's codes", () => {
    const code = (f: () => unknown) => {
      try {
        f();
      } catch (e) {
        return e instanceof DirectBankFormatError ? e.code : String(e);
      }
      return "none";
    };
    const good = buildPacket({
      ...header("2.3.2"),
      sender: { kind: "customer", ...customer },
      recipient: { kind: "bank", ...bank },
      documents: [{ id: "d", dockind: "05", formatVersion: "2.3.2", xml: "<x/>", compressed: true }],
    });
    expect(code(() => parsePacket("<<<", MAX))).toBe("2001");
    expect(code(() => parsePacket(good.replace(DIRECTBANK_NS, "urn:x"), MAX))).toBe("2001");
    expect(code(() => parsePacket(`<!DOCTYPE x [<!ENTITY a "b">]>${good}`, MAX))).toBe("2001");
    expect(code(() => parsePacket(good.replace(/formatVersion="2.3.2"/, 'formatVersion="9.9"'), MAX))).toBe(
      "2006",
    );
    expect(code(() => parsePacket(good.replace(/<Data[^>]*>[^<]*</, "<Data>UEsDBAo=<"), MAX))).toBe("2011");
    expect(code(() => parsePacket(good.replace(/<Data[^>]*>[^<]*</, "<Data>@@<"), MAX))).toBe("2001");
    expect(code(() => parsePacket(good, 3))).toBe("2011");
    // A prefixed namespace is the same namespace.
    const prefixed = good.replace(/<(\/?)(\w+)/g, "<$1edo:$2").replace(`xmlns=`, "xmlns:edo=");
    expect(code(() => parsePacket(prefixed, MAX))).toBe("none");
  });
});
