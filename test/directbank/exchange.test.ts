// lanes: sqlite postgres
// svc as a 1C:DirectBank bank service (decisions §17), through a client written from the
// standard's text: the whole exchange 1C makes in both format versions, the statement equal to
// svc's own exports, the auth matrix and bad packets in the standard's errors, and every message
// svc sends valid against the official schema of its version.
import { describe, expect, test } from "bun:test";
import { accountSectionBalances, decodeOneC, parseOneC } from "../../src/formats/onec";
import { signIn } from "../helpers/admin-browser";
import { json, makeTestApp, type TestApp } from "../helpers/app";
import { type JsonExport, kop, PATH } from "../statements/export-support";
import {
  DirectBankClient,
  documentBytes,
  encodeDocument,
  NS,
  parseXml,
  schemaErrors,
  statementRequestPacket,
  type Xml,
} from "./client";

const BASE = "http://localhost/directbank";

function setup(opts: { ops_per_day?: number } = {}) {
  const t = makeTestApp();
  const w = t.fixtures.world({ ops_per_day: opts.ops_per_day ?? 4 });
  return { t, w };
}

const client = (t: TestApp, version = "2.3.2") => new DirectBankClient((r) => t.app.handle(r), BASE, version);

/** Every message the client received is valid against its schema. */
function expectAllValid(c: DirectBankClient) {
  const errors = c.received.map((m) => schemaErrors(m.bytes, m.version, m.schema)).filter((e) => e !== null);
  expect(errors).toEqual([]);
}

const errorCode = (a: { xml: Xml }) => a.xml?.Error?.Code as string | undefined;

async function settle(t: TestApp) {
  await t.services.poller.idle();
  await t.services.poller.tick();
  await t.services.poller.idle();
}

const count = (t: TestApp, table: string) =>
  Number(t.db.query<{ n: number }, []>(`SELECT COUNT(*) AS n FROM ${table}`).get()!.n);

describe("1C:DirectBank exchange", () => {
  for (const [version, compressed] of [
    ["2.3.2", false],
    ["2.2.2", true],
  ] as const) {
    test(`settings → logon → request → list → packet (${version}${compressed ? ", zip" : ""}) equals the exports`, async () => {
      const { t, w } = setup();
      const account = w.account;
      // The settings file the operator downloads and 1C loads.
      const file = await t.admin(
        "GET",
        `/tokens/${w.tokenId}/directbank-settings?bank_account_id=${account.bank_account_id}&version=${version}`,
      );
      expect(file.status).toBe(200);
      const settingsBytes = new Uint8Array(await file.arrayBuffer());
      expect(schemaErrors(settingsBytes, version, "Settings")).toBeNull();
      const settings = parseXml(settingsBytes).Settings;
      expect(settings.Data.BankServerAddress).toMatch(/\/directbank$/);
      expect(settings.Data.FormatVersion).toBe(version);
      expect(settings.Data.Logon.Login.User).toBe(w.tokenId);
      expect(settings.Data.ReceiptStatement.Login).not.toBe(w.tokenId);
      const kinds = [settings.Data.Document].flat().map((d: Xml) => d.docKind);
      expect(kinds).toEqual(["01", "05", "14", "15"]);

      // The admin token page offers the same file.
      if (version === "2.3.2") {
        const browser = await signIn(t);
        const href = `/admin/tokens/${w.tokenId}/directbank-settings?bank_account_id=${account.bank_account_id}`;
        expect(await (await browser.get("/admin/tokens")).text()).toContain(href.replaceAll("&", "&amp;"));
        const fromPage = await browser.get(href);
        expect(fromPage.headers.get("content-disposition")).toContain("directbank-settings.xml");
        expect(schemaErrors(new Uint8Array(await fromPage.arrayBuffer()), version, "Settings")).toBeNull();
      }

      const c = client(t, version);
      c.customerId = "0";
      const logon = await c.logon(settings.Data.ReceiptStatement.Login, w.token);
      expect(errorCode(logon)).toBeUndefined();
      expect(c.sid).toBeTruthy();
      c.customerId = settings.Data.CustomerID;

      const accountNumber = await accountNumberOf(t, account.bank_account_id);
      const got = await c.getSettings(accountNumber, "7719617469", "044525225");
      const inner = documentBytes(got.xml.Success.GetSettingsResponse.Data["#text"], false);
      expect(schemaErrors(inner, version, "Settings")).toBeNull();
      expect(parseXml(inner).Settings.Data.CustomerID).toBe(c.customerId);

      const request = statementRequestPacket({
        version,
        customerId: c.customerId,
        bic: "044525225",
        account: accountNumber,
        from: "2026-11-10",
        to: "2026-11-19",
        compressed,
      });
      const sent = await c.sendPack(request.xml);
      const receivedId = sent.xml.Success.SendPacketResponse.ID as string;
      expect(receivedId).toBeTruthy();

      // Before the statement is made: only the notice that the packet was taken.
      const early = await c.getPackList();
      expect(early.xml.Success.GetPacketListResponse.PacketID).toHaveLength(1);
      await settle(t);
      const list = await c.getPackList("20.11.2026 00:00:00");
      const ids = list.xml.Success.GetPacketListResponse.PacketID as string[];
      expect(ids).toHaveLength(2);
      expect(list.xml.Success.GetPacketListResponse.TimeStampLastPacket).toMatch(/^2026-11-20T12:00:00$/);

      const docs = [];
      for (const id of ids) docs.push(...c.documents(await c.getPack(id)));
      const notice = docs.find((d) => d.dockind === "01")!.xml.StatusPacketNotice;
      expect(notice.Result.Status.Code).toBe("01");
      expect(notice.IDResultSuccessResponse).toBe(receivedId);
      expect(notice.ExtIDPacket).toBe(request.packetId);
      const statement = docs.find((d) => d.dockind === "15")!.xml.Statement;
      expect(statement.ExtIDStatementRequest).toBe(request.documentId);
      // Taken packets are not listed again without a date.
      expect((await c.getPackList()).xml.Success.GetPacketListResponse.PacketID ?? []).toHaveLength(0);

      // The same statement through the REST API: operations (json) and balances (1C) agree.
      const statements = await json<{ statements: { statement_id: string }[] }>(
        await t.request("GET", PATH, { token: w.token }),
      );
      expect(statements.statements).toHaveLength(1);
      const sid = statements.statements[0]!.statement_id;
      const exported = (await (
        await t.request("GET", `${PATH}/${sid}/export?format=json`, { token: w.token })
      ).json()) as JsonExport;
      const ops = statement.Data.OperationInfo as Xml[];
      expect(ops.length).toBe(exported.operations.length);
      expect(ops.length).toBe(4 * 10);
      exported.operations.forEach((op, i) => {
        const info = ops[i];
        const body = Object.entries(info.PayDoc).find(([k]) => !["id", "docKind"].includes(k))![1] as Xml;
        expect(info.PayDoc.id).toBe(op.operation_id);
        expect(info.DC).toBe(op.direction === "debit" ? "1" : "2");
        expect(kop(Number(body.Sum))).toBe(kop(op.amount));
        expect(body.DocNo).toBe(op.doc_number);
        expect(body.DocDate).toBe(op.doc_date);
        if (op.doc_type === "memorial_order") {
          expect(body.AccountDebit).toBe(op.payer.account);
          expect(body.AccountCredit).toBe(op.payee.account);
        } else {
          expect(String(body.Payer.INN ?? "")).toBe(op.payer.inn);
          expect(body.Payer.Account).toBe(op.payer.account);
          expect(body.Payee.Name).toBe(op.payee.name);
          expect(body.Payee.Account).toBe(op.payee.account);
          expect(body.Purpose).toBe(op.purpose.replace(/\s*[\r\n]+\s*/g, " ").slice(0, 210));
        }
      });
      const onec = await t.request("GET", `${PATH}/${sid}/export?format=1c`, { token: w.token });
      const balances = accountSectionBalances(
        parseOneC(decodeOneC(new Uint8Array(await onec.arrayBuffer()))).accounts[0]!,
      );
      expect(kop(Number(statement.Data.OpeningBalance))).toBe(balances.openingBalance!);
      expect(kop(Number(statement.Data.ClosingBalance))).toBe(balances.closingBalance!);
      expect(kop(Number(statement.Data.TotalCredits))).toBe(balances.totalCredit!);
      expect(kop(Number(statement.Data.TotalDebits))).toBe(balances.totalDebit!);

      expectAllValid(c);
      // Every call is audited.
      const actions = t.db
        .query<{ action: string }, []>("SELECT action FROM audit_log WHERE action LIKE 'directbank.%'")
        .all()
        .map((r) => r.action);
      expect(new Set(actions)).toEqual(
        new Set([
          "directbank.Logon",
          "directbank.GetSettings",
          "directbank.SendPack",
          "directbank.GetPackList",
          "directbank.GetPack",
        ]),
      );
    });
  }

  test("a repeated request reuses the statement; a current balance; a probe", async () => {
    const { t, w } = setup();
    const c = client(t);
    await c.logon(w.tokenId, w.token);
    const accountNumber = await accountNumberOf(t, w.account.bank_account_id);
    const p = {
      version: "2.3.2",
      customerId: "c",
      bic: "044525225",
      account: accountNumber,
      from: "2026-11-01",
      to: "2026-11-05",
    };
    await c.sendPack(statementRequestPacket(p).xml);
    await c.sendPack(statementRequestPacket(p).xml);
    expect(count(t, "statements")).toBe(1);
    // A period of 40 days is two of svc's statements, answered in one packet.
    await c.sendPack(statementRequestPacket({ ...p, from: "2026-10-01", to: "2026-11-09" }).xml);
    expect(count(t, "statements")).toBe(3);
    const cached = await json(
      await t.admin("POST", `/bank-accounts/${w.account.bank_account_id}/balance/refresh`),
    );
    await c.sendPack(statementRequestPacket({ ...p, type: "2" }).xml);
    const probe = `<?xml version="1.0" encoding="UTF-8"?>
<Probe xmlns="${NS}" id="${crypto.randomUUID()}" formatVersion="2.3.2" creationDate="2026-11-20T12:00:00">
  <Sender id="c" name="ООО Ромашка" inn="7719617469"/><Recipient bic="044525225"/>
</Probe>`;
    const probePacket = statementRequestPacket(p).xml.replace(
      /dockind="14"([^>]*)>\s*<Data>[^<]*<\/Data>/,
      `dockind="05"$1><Data>${encodeDocument(probe, false)}</Data>`,
    );
    expect(errorCode(await c.sendPack(probePacket))).toBeUndefined();
    await settle(t);
    const ids = (await c.getPackList()).xml.Success.GetPacketListResponse.PacketID as string[];
    const docs = [];
    for (const id of ids) docs.push(...c.documents(await c.getPack(id)));
    // Every request is noticed: two statement requests, one balance, one probe.
    expect(docs.filter((d) => d.dockind === "01")).toHaveLength(5);
    const statements = docs.filter((d) => d.dockind === "15").map((d) => d.xml.Statement);
    expect(statements.filter((s) => s.Data.StatementType === "0")).toHaveLength(4);
    const balance = statements.find((s) => s.Data.StatementType === "2");
    expect(Number(balance.Data.ClosingBalance)).toBe(cached.balance as number);
    expectAllValid(c);
  });

  test("a statement the bank fails is a notice with the standard's error 2206", async () => {
    const t = makeTestApp();
    const w = t.fixtures.world({ bank: "sandbox_failing" });
    const c = client(t, "2.2.2");
    await c.logon(w.tokenId, w.token);
    const account = await accountNumberOf(t, w.account.bank_account_id);
    await c.sendPack(
      statementRequestPacket({
        version: "2.2.2",
        customerId: "c",
        bic: "044525225",
        account,
        from: "2026-11-01",
        to: "2026-11-02",
      }).xml,
    );
    await settle(t);
    const ids = (await c.getPackList()).xml.Success.GetPacketListResponse.PacketID as string[];
    const docs = [];
    for (const id of ids) docs.push(...c.documents(await c.getPack(id)));
    const results = docs.map((d) => d.xml.StatusPacketNotice.Result);
    expect(results.map((r) => r.Status?.Code ?? r.Error?.Code)).toEqual(["01", "2206"]);
    expectAllValid(c);
    // The refusal of a known token names it in the audit log.
    await c.logon(w.tokenId, "svc_test_0000000000000000000000000000000000000000");
    const entries = t.db
      .query<{ api_token_id: string | null; outcome: string }, []>(
        "SELECT api_token_id, outcome FROM audit_log WHERE action = 'directbank.Logon' ORDER BY id",
      )
      .all();
    expect(entries.map((e) => e.outcome)).toEqual(["ok", "error:1201"]);
    expect(entries[0]!.api_token_id).toBe(w.tokenId);
  });

  test("auth matrix in the standard's codes: never the JSON envelope", async () => {
    const { t, w } = setup();
    const company = w.company.company_id;
    const mcp = t.fixtures.token(company, {
      purpose: "mcp",
      accounts: [{ bank_account_id: w.account.bank_account_id, allow_read_statements: true }],
    });
    const noScope = t.fixtures.token(company, { read: false, accounts: [] });
    const ipBound = t.fixtures.token(company, {
      allowed_ips: ["10.0.0.1"],
      accounts: [{ bank_account_id: w.account.bank_account_id, allow_read_statements: true }],
    });
    const c = client(t);
    expect(errorCode(await c.logon(w.tokenId, "svc_test_wrong"))).toBe("1201");
    // Another token's password under this token's user.
    expect(errorCode(await c.logon(ipBound.api_token_id, w.token))).toBe("1201");
    expect(errorCode(await c.logon(mcp.api_token_id, mcp.token))).toBe("1202");
    expect(errorCode(await c.logon(noScope.api_token_id, noScope.token))).toBe("1202");
    expect(errorCode(await c.logon(ipBound.api_token_id, ipBound.token))).toBe("1008");
    expect(errorCode(await c.call("POST", "Logon", { authorization: "Bearer x" }))).toBe("1011");
    expect(errorCode(await c.call("GET", "GetPackList", { sid: "nope" }))).toBe("1007");

    // A session stops with its token: revoked, the next request fails.
    expect(errorCode(await c.logon(w.tokenId, w.token))).toBeUndefined();
    expect(errorCode(await c.getPackList())).toBeUndefined();
    await t.admin("POST", `/tokens/${w.tokenId}/revoke`);
    expect(errorCode(await c.getPackList())).toBe("1201");

    // An account of another company, or one the token has no allow on.
    const other = t.fixtures.world();
    const c2 = client(t);
    await c2.logon(other.tokenId, other.token);
    const foreign = statementRequestPacket({
      version: "2.3.2",
      customerId: "c",
      bic: "044525225",
      account: await accountNumberOf(t, w.account.bank_account_id),
      from: "2026-11-01",
      to: "2026-11-02",
    });
    expect(errorCode(await c2.sendPack(foreign.xml))).toBe("1013");
    expect(errorCode(await c2.getSettings(await accountNumberOf(t, w.account.bank_account_id), "", ""))).toBe(
      "1013",
    );

    // The same company's token without the allow on that account.
    const noAllow = t.fixtures.token(company, { accounts: [] });
    const c5 = client(t);
    await c5.logon(noAllow.api_token_id, noAllow.token);
    const own = statementRequestPacket({
      version: "2.3.2",
      customerId: "c",
      bic: "044525225",
      account: await accountNumberOf(t, w.account.bank_account_id),
      from: "2026-11-01",
      to: "2026-11-02",
    });
    expect(errorCode(await c5.sendPack(own.xml))).toBe("1013");

    // A token that expires: its session stops with it.
    const expiring = t.fixtures.token(company, {
      expires_at: "2026-11-20T10:00:00Z",
      accounts: [{ bank_account_id: w.account.bank_account_id, allow_read_statements: true }],
    });
    const c6 = client(t);
    expect(errorCode(await c6.logon(expiring.api_token_id, expiring.token))).toBeUndefined();
    t.clock.advance(2 * 3600 * 1000);
    expect(errorCode(await c6.getPackList())).toBe("1201");
    expect(count(t, "directbank_packets")).toBe(0);

    // The rate limit: 429 with Retry-After, still a ResultBank.
    const limited = t.fixtures.token(company, {
      rate_limit_per_minute: 2,
      accounts: [{ bank_account_id: w.account.bank_account_id, allow_read_statements: true }],
    });
    const c3 = client(t);
    await c3.logon(limited.api_token_id, limited.token);
    await c3.getPackList();
    const over = await c3.getPackList();
    expect(over.status).toBe(429);
    expect(errorCode(over)).toBe("1203");
    expectAllValid(c);
    expectAllValid(c2);
    expectAllValid(c3);
  });

  test("sessions expire; the HTTP core's refusals are ResultBank answers too", async () => {
    const { t, w } = setup();
    const c = client(t);
    await c.logon(w.tokenId, w.token);
    expect(errorCode(await c.getPackList())).toBeUndefined();
    t.clock.advance(8 * 3600 * 1000 + 1);
    expect(errorCode(await c.getPackList())).toBe("1006");
    await c.logon(w.tokenId, w.token);
    expect(errorCode(await c.getPackList())).toBeUndefined();
    // Over the body limit by its Content-Length, before anything is read.
    const huge = await c.call(
      "POST",
      "SendPack",
      { "content-length": String(2 * 1024 * 1024) },
      "x".repeat(2 * 1024 * 1024),
    );
    expect(errorCode(huge)).toBe("2003");
    // A method the standard has and svc does not offer (certificates), and a wrong HTTP method.
    expect(errorCode(await c.call("POST", "LogonCert", {}))).toBe("1010");
    expect(errorCode(await c.call("GET", "SendPack", {}))).toBe("1010");
    expectAllValid(c);
  });

  test("Logon is limited per client address (SVC_PUBLIC_RATE_LIMIT_PER_MINUTE): 429 as a ResultBank", async () => {
    const t = makeTestApp({ SVC_PUBLIC_RATE_LIMIT_PER_MINUTE: "2" });
    const c = client(t);
    for (let i = 0; i < 2; i++) expect(errorCode(await c.logon("u", "svc_test_x"))).toBe("1201");
    const over = await c.logon("u", "svc_test_x");
    expect(over.status).toBe(429);
    expect(errorCode(over)).toBe("1203");
    expectAllValid(c);
  });

  test("bad packets get the standard's error and store nothing", async () => {
    const { t, w } = setup();
    const c = client(t);
    await c.logon(w.tokenId, w.token);
    const accountNumber = await accountNumberOf(t, w.account.bank_account_id);
    const packet = (over: Partial<Parameters<typeof statementRequestPacket>[0]> = {}) =>
      statementRequestPacket({
        version: "2.3.2",
        customerId: "c",
        bic: "044525225",
        account: accountNumber,
        from: "2026-11-01",
        to: "2026-11-02",
        ...over,
      });
    const good = packet();
    const cases: [string, string, string][] = [
      ["not XML", "this is not xml", "2001"],
      ["wrong namespace", good.xml.replace(`xmlns="${NS}"`, 'xmlns="urn:other"'), "2001"],
      ["unknown kind", packet({ dockind: "10" }).xml, "2007"],
      ["not base64", good.xml.replace(/<Data>[^<]*<\/Data>/, "<Data>%%% not base64 %%%</Data>"), "2001"],
      [
        "a version svc does not speak",
        good.xml.replaceAll('formatVersion="2.3.2"', 'formatVersion="3.0.0"'),
        "2006",
      ],
      ["a period in the future", packet({ from: "2026-12-01", to: "2026-12-02" }).xml, "2206"],
      ["a foreign account", packet({ account: "40702810900000000001" }).xml, "1013"],
      ["a huge packet", `${good.xml}<!--${"x".repeat(1024 * 1024)}-->`, "2003"],
    ];
    for (const [name, body, code] of cases) {
      const a = await c.sendPack(body);
      expect(`${name}: ${errorCode(a)}`).toBe(`${name}: ${code}`);
    }
    const unknownVersion = await c.call("GET", "GetPackList", {
      apiversion: "1.0.0",
      availableapiversion: "",
    });
    expect(errorCode(unknownVersion)).toBe("2006");
    expect(unknownVersion.xml.Error.MoreInfo).toContain("2.3.2");
    expect(count(t, "directbank_packets")).toBe(0);
    expect(count(t, "statements")).toBe(0);
    // The same packet twice: the second is a duplicate.
    expect(errorCode(await c.sendPack(good.xml))).toBeUndefined();
    expect(errorCode(await c.sendPack(good.xml))).toBe("2002");
    expect(errorCode(await c.getPack("00000000-0000-4000-8000-000000000000"))).toBe("2102");
    expect(errorCode(await c.getPackList("yesterday"))).toBe("2101");
    expectAllValid(c);
  });
});

async function accountNumberOf(t: TestApp, bankAccountId: string): Promise<string> {
  return t.services.accounts.findById(bankAccountId)!.accountNumber;
}
