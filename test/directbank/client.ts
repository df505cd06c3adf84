// A small 1C:DirectBank client written from the standard's text (transport-api/readme.md,
// application-layer/readme.md), independent of svc's codec: it walks the exchange 1C makes —
// settings → Logon → SendPack(StatementRequest) → GetPackList → GetPack — and checks every
// message it receives against the official schema of its version with xmllint.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { XMLParser } from "fast-xml-parser";
import { unzipSync, zipSync } from "fflate";

export const NS = "http://directbank.1c.ru/XMLSchema";
const XSD_DIR = resolve(import.meta.dir, "../fixtures/directbank");
const work = mkdtempSync(join(tmpdir(), "directbank-"));
let files = 0;

/** xmllint's verdict on bytes against a schema of the given version: null when valid. */
export function schemaErrors(bytes: Uint8Array | string, version: string, schema: string): string | null {
  const path = join(work, `m${++files}.xml`);
  writeFileSync(path, bytes);
  const r = Bun.spawnSync([
    "/usr/bin/xmllint",
    "--noout",
    "--schema",
    join(XSD_DIR, version, `1C-Bank_${schema}.xsd`),
    path,
  ]);
  return r.exitCode === 0 ? null : `${schema} ${version}: ${r.stderr.toString()}`;
}

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: "",
  parseTagValue: false,
  removeNSPrefix: true,
  isArray: (name) => ["PacketID", "Document", "OperationInfo"].includes(name),
});

// biome-ignore lint/suspicious/noExplicitAny: the parsed XML is walked by the test as it is.
export type Xml = any;

const BOM = "\uFEFF";
const hasBom = (bytes: Uint8Array) => bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf;

export function parseXml(bytes: Uint8Array): Xml {
  return parser.parse(new TextDecoder().decode(bytes));
}

/** A document inside a packet: base64 (zip when `compressed`), with a BOM as the standard says. */
export function documentBytes(data: string, compressed: boolean): Uint8Array {
  let bytes = new Uint8Array(Buffer.from(data.replace(/\s+/g, ""), "base64"));
  if (compressed) bytes = Object.values(unzipSync(bytes))[0]!;
  if (!hasBom(bytes)) throw new Error("a document without BOM");
  return bytes;
}

export function encodeDocument(xml: string, compressed: boolean): string {
  let bytes = new Uint8Array(Buffer.from(BOM + xml, "utf8"));
  if (compressed) bytes = zipSync({ "request.xml": bytes });
  return Buffer.from(bytes).toString("base64");
}

export interface Answer {
  status: number;
  bytes: Uint8Array;
  xml: Xml;
}

export class DirectBankClient {
  sid = "";
  customerId = "0";
  /** Every message received, to be checked against the schemas. */
  readonly received: { bytes: Uint8Array; version: string; schema: string }[] = [];

  constructor(
    private readonly handle: (r: Request) => Promise<Response>,
    readonly base: string,
    readonly version: string,
  ) {}

  async call(
    method: "GET" | "POST",
    path: string,
    headers: Record<string, string>,
    body?: string,
  ): Promise<Answer> {
    const res = await this.handle(
      new Request(`${this.base}/${path}`, {
        method,
        headers: {
          "content-type": "application/xml; charset=utf-8",
          apiversion: this.version,
          customerid: this.customerId,
          ...(this.sid ? { sid: this.sid } : {}),
          ...headers,
        },
        body,
      }),
    );
    const bytes = new Uint8Array(await res.arrayBuffer());
    if (!res.headers.get("content-type")?.startsWith("application/xml")) {
      throw new Error(`not XML: ${res.status} ${new TextDecoder().decode(bytes)}`);
    }
    if (!hasBom(bytes)) throw new Error("an answer without BOM");
    this.received.push({ bytes, version: this.version, schema: "ResultBank" });
    return { status: res.status, bytes, xml: parseXml(bytes).ResultBank };
  }

  async logon(user: string, password: string): Promise<Answer> {
    const a = await this.call("POST", "Logon", {
      authorization: `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}`,
      availableapiversion: "2.3.2",
    });
    const sid = a.xml?.Success?.LogonResponse?.SID;
    if (sid) this.sid = sid;
    return a;
  }

  getSettings(account: string, inn: string, bic: string): Promise<Answer> {
    return this.call("POST", "GetSettings", { account, inn, bic });
  }

  sendPack(packetXml: string): Promise<Answer> {
    return this.call("POST", "SendPack", {}, BOM + packetXml);
  }

  getPackList(date?: string): Promise<Answer> {
    return this.call(
      "GET",
      `GetPackList${date === undefined ? "" : `?date=${encodeURIComponent(date)}`}`,
      {},
    );
  }

  getPack(id: string): Promise<Answer> {
    return this.call("GET", `GetPack?id=${encodeURIComponent(id)}`, {});
  }

  /** The documents of a GetPack answer, decoded and kept for the schema checks. */
  documents(a: Answer): { dockind: string; bytes: Uint8Array; xml: Xml }[] {
    const packet = a.xml.Success.GetPacketResponse;
    return packet.Document.map((d: Xml) => {
      const bytes = documentBytes(
        typeof d.Data === "string" ? d.Data : d.Data["#text"],
        d.compressed === "true",
      );
      const schema = { "01": "StatusPacketNotice", "15": "Statement" }[d.dockind as string] ?? "?";
      this.received.push({ bytes, version: this.version, schema });
      return { dockind: d.dockind, bytes, xml: parseXml(bytes) };
    });
  }
}

export function statementRequestPacket(o: {
  version: string;
  customerId: string;
  bic: string;
  account: string;
  from: string;
  to: string;
  type?: string;
  compressed?: boolean;
  packetId?: string;
  dockind?: string;
}): { packetId: string; documentId: string; xml: string } {
  const documentId = crypto.randomUUID();
  const packetId = o.packetId ?? crypto.randomUUID();
  const request = `<?xml version="1.0" encoding="UTF-8"?>
<StatementRequest xmlns="${NS}" id="${documentId}" formatVersion="${o.version}" creationDate="2026-11-20T12:00:00" userAgent="test client">
  <Sender id="${o.customerId}" name="ООО Ромашка" inn="7719617469"/>
  <Recipient bic="${o.bic}"/>
  <Data>
    <StatementType>${o.type ?? "0"}</StatementType>
    <DateFrom>${o.from}T00:00:00</DateFrom>
    <DateTo>${o.to}T23:59:59</DateTo>
    <Account>${o.account}</Account>
    <Bank><BIC>${o.bic}</BIC></Bank>
  </Data>
</StatementRequest>`;
  const compressed = o.compressed ?? false;
  const xml = `<?xml version="1.0" encoding="UTF-8"?>
<Packet xmlns="${NS}" id="${packetId}" formatVersion="${o.version}" creationDate="2026-11-20T12:00:00" userAgent="test client">
  <Sender><Customer id="${o.customerId}" name="ООО Ромашка" inn="7719617469"/></Sender>
  <Recipient><Bank bic="${o.bic}"/></Recipient>
  <Document id="${documentId}" dockind="${o.dockind ?? "14"}" formatVersion="${o.version}"${compressed ? ' compressed="true"' : ""}>
    <Data>${encodeDocument(request, compressed)}</Data>
  </Document>
</Packet>`;
  return { packetId, documentId, xml };
}
