// The transport layer of 1C:DirectBank: the packet (`Packet`, also the body of a `GetPacketResponse`)
// and the bank service's answer (`ResultBank`), built and parsed. Documents travel in a packet as
// base64 of their XML (xml.ts); here they are plain XML text.
import {
  attr,
  buildXml,
  child,
  children,
  DirectBankFormatError,
  type DirectBankVersion,
  el,
  isDirectBankVersion,
  optionalChild,
  packDocumentData,
  parseRoot,
  requiredAttr,
  textOf,
  unpackDocumentData,
  type XmlElement,
  type XmlNode,
} from "./xml";

export interface CustomerParty {
  id: string;
  name?: string;
  inn?: string;
  kpp?: string;
}

export interface BankParty {
  bic: string;
  name?: string;
}

/** A packet's sender or recipient: a customer (1C's side) or a bank. */
export type Participant = ({ kind: "customer" } & CustomerParty) | ({ kind: "bank" } & BankParty);

export interface PacketDocument {
  id: string;
  /** The standard's document kind code: "14" statement request, "15" statement, … */
  dockind: string;
  formatVersion: string;
  /** The document's XML text. */
  xml: string;
  /** Zipped inside the packet (the exchange settings' `Compress`). */
  compressed?: boolean;
  fileName?: string;
  /** The packet carried signatures for it (svc's statement login works without any). */
  signed?: boolean;
}

export interface Packet {
  id: string;
  formatVersion: string;
  /** xsd:dateTime */
  creationDate: string;
  userAgent?: string;
  sender: Participant;
  recipient: Participant;
  documents: PacketDocument[];
}

/** The standard's limits a parser holds to: strings cut to the schema's maximum lengths. */
const clip = (value: string | undefined, max: number) =>
  value === undefined ? undefined : value.slice(0, max);

export function customerAttrs(p: CustomerParty): Record<string, string | undefined> {
  return { id: p.id.slice(0, 50), name: clip(p.name, 160), inn: p.inn || undefined, kpp: p.kpp || undefined };
}

export function bankAttrs(p: BankParty): Record<string, string | undefined> {
  return { bic: p.bic, name: clip(p.name, 160) };
}

export function participantElement(name: string, p: Participant): XmlElement {
  return el(name, undefined, [
    p.kind === "customer" ? el("Customer", customerAttrs(p), []) : el("Bank", bankAttrs(p), []),
  ]);
}

export function parseCustomer(node: XmlNode, code: string): CustomerParty {
  return {
    id: requiredAttr(node, "id", code),
    name: attr(node, "name"),
    inn: attr(node, "inn"),
    kpp: attr(node, "kpp"),
  };
}

export function parseBank(node: XmlNode, code: string): BankParty {
  return { bic: requiredAttr(node, "bic", code), name: attr(node, "name") };
}

export function parseParticipant(node: XmlNode, code: string): Participant {
  const customer = optionalChild(node, "Customer");
  if (customer) return { kind: "customer", ...parseCustomer(customer, code) };
  const bank = optionalChild(node, "Bank");
  if (bank) return { kind: "bank", ...parseBank(bank, code) };
  throw new DirectBankFormatError(code, "Участник обмена не указан");
}

function packetElement(name: string, p: Packet): XmlElement {
  return el(
    name,
    { id: p.id, formatVersion: p.formatVersion, creationDate: p.creationDate, userAgent: p.userAgent },
    [
      participantElement("Sender", p.sender),
      participantElement("Recipient", p.recipient),
      ...p.documents.map((d) =>
        el(
          "Document",
          {
            id: d.id,
            dockind: d.dockind,
            formatVersion: d.formatVersion,
            compressed: d.compressed ? "true" : undefined,
          },
          [
            el(
              "Data",
              { fileName: d.fileName },
              packDocumentData(d.xml, d.compressed ?? false, d.fileName ?? `${d.id}.xml`),
            ),
          ],
        ),
      ),
    ],
  );
}

/** A packet as the XML 1C sends to `SendPack`. */
export function buildPacket(p: Packet): string {
  return buildXml(packetElement("Packet", p));
}

const isTrue = (value: string | undefined) => value === "true" || value === "1";

/**
 * A `Packet` (or the `GetPacketResponse` inside a ResultBank): its documents decoded, each at most
 * `maxDocumentBytes` once unzipped. Format faults throw DirectBankFormatError: 2001 (not a packet
 * of the standard), 2006 (a version this codec does not read), 2011 (zip), 2201 (a document that
 * is not UTF-8).
 */
function parsePacketNode(node: XmlNode, maxDocumentBytes: number): Packet {
  const code = "2001";
  const formatVersion = requiredAttr(node, "formatVersion", code);
  if (!isDirectBankVersion(formatVersion)) {
    throw new DirectBankFormatError("2006", `Версия формата ${formatVersion} не поддерживается`);
  }
  const documents = children(node, "Document").map((d): PacketDocument => {
    const compressed = isTrue(attr(d, "compressed"));
    if (isTrue(attr(d, "encrypted"))) throw new DirectBankFormatError("2010", "Шифрование не поддерживается");
    const data = child(d, "Data", code);
    return {
      id: requiredAttr(d, "id", code),
      dockind: requiredAttr(d, "dockind", code),
      formatVersion: requiredAttr(d, "formatVersion", code),
      xml: unpackDocumentData(textOf(data), compressed, maxDocumentBytes),
      compressed,
      fileName: attr(data, "fileName"),
      signed: children(d, "Signature").length > 0,
    };
  });
  if (documents.length === 0)
    throw new DirectBankFormatError(code, "В транспортном контейнере нет документов");
  return {
    id: requiredAttr(node, "id", code),
    formatVersion,
    creationDate: requiredAttr(node, "creationDate", code),
    userAgent: attr(node, "userAgent"),
    sender: parseParticipant(child(node, "Sender", code), code),
    recipient: parseParticipant(child(node, "Recipient", code), code),
    documents,
  };
}

export function parsePacket(xml: string, maxDocumentBytes: number): Packet {
  return parsePacketNode(parseRoot(xml, ["Packet"], "2001").node, maxDocumentBytes);
}

/** What a bank service answers, success or error. */
export type ResultBankBody =
  | { kind: "logon"; sid: string }
  | { kind: "sendPacket"; id: string }
  | { kind: "packetList"; ids: string[]; timestampLastPacket?: string }
  | { kind: "packet"; packet: Packet }
  | { kind: "settings"; id: string; formatVersion: string; creationDate: string; settingsXml: string }
  | { kind: "error"; code: string; description: string; moreInfo?: string };

export const USER_AGENT = "svc DirectBank";

function successElement(body: Exclude<ResultBankBody, { kind: "error" }>): XmlElement {
  switch (body.kind) {
    case "logon":
      return el("LogonResponse", undefined, [el("SID", undefined, body.sid)]);
    case "sendPacket":
      return el("SendPacketResponse", undefined, [el("ID", undefined, body.id)]);
    case "packetList":
      return el(
        "GetPacketListResponse",
        { TimeStampLastPacket: body.timestampLastPacket },
        body.ids.map((id) => el("PacketID", undefined, id)),
      );
    case "packet":
      return packetElement("GetPacketResponse", body.packet);
    case "settings":
      return el(
        "GetSettingsResponse",
        {
          id: body.id,
          formatVersion: body.formatVersion,
          creationDate: body.creationDate,
          userAgent: USER_AGENT,
        },
        [el("Data", { dockind: "06" }, packDocumentData(body.settingsXml, false))],
      );
  }
}

/** The bank service's answer to any method. */
export function buildResultBank(version: DirectBankVersion, body: ResultBankBody): string {
  const inner =
    body.kind === "error"
      ? el("Error", undefined, [
          el("Code", undefined, body.code),
          el("Description", undefined, body.description.slice(0, 255)),
          body.moreInfo ? el("MoreInfo", undefined, body.moreInfo) : undefined,
        ])
      : el("Success", undefined, [successElement(body)]);
  return buildXml(el("ResultBank", { formatVersion: version, userAgent: USER_AGENT }, [inner]));
}

/** A bank service's answer, for a client of one. */
export function parseResultBank(xml: string, maxDocumentBytes: number): ResultBankBody {
  const code = "2001";
  const { node } = parseRoot(xml, ["ResultBank"], code);
  const error = optionalChild(node, "Error");
  if (error) {
    return {
      kind: "error",
      code: textOf(child(error, "Code", code)),
      description: textOf(child(error, "Description", code)),
      moreInfo: optionalChild(error, "MoreInfo") ? textOf(child(error, "MoreInfo", code)) : undefined,
    };
  }
  const success = child(node, "Success", code);
  const logon = optionalChild(success, "LogonResponse");
  if (logon) return { kind: "logon", sid: textOf(child(logon, "SID", code)) };
  const sent = optionalChild(success, "SendPacketResponse");
  if (sent) return { kind: "sendPacket", id: textOf(child(sent, "ID", code)) };
  const list = optionalChild(success, "GetPacketListResponse");
  if (list) {
    return {
      kind: "packetList",
      ids: children(list, "PacketID").map(textOf),
      timestampLastPacket: attr(list, "TimeStampLastPacket"),
    };
  }
  const packet = optionalChild(success, "GetPacketResponse");
  if (packet) return { kind: "packet", packet: parsePacketNode(packet, maxDocumentBytes) };
  const settings = optionalChild(success, "GetSettingsResponse");
  if (settings) {
    return {
      kind: "settings",
      id: requiredAttr(settings, "id", code),
      formatVersion: requiredAttr(settings, "formatVersion", code),
      creationDate: requiredAttr(settings, "creationDate", code),
      settingsXml: unpackDocumentData(textOf(child(settings, "Data", code)), false, maxDocumentBytes),
    };
  }
  throw new DirectBankFormatError(code, "Неизвестный ответ банка");
}
