// The bytes of 1C:DirectBank messages: UTF-8 XML with a BOM (the standard's rule for packets and
// their documents; XML without one is read too, as real banks send it), documents base64 in a
// packet, zip-compressed when the exchange settings say so, and an XML tree read and written
// through fast-xml-parser. Every failure is a DirectBankFormatError with the standard's code.

import { XMLBuilder, XMLParser } from "fast-xml-parser";
import { strToU8, unzipSync, zipSync } from "fflate";

export const DIRECTBANK_NS = "http://directbank.1c.ru/XMLSchema";

/** The format versions this codec reads and writes (the schemas differ in nothing it emits). */
export const DIRECTBANK_VERSIONS = ["2.3.2", "2.2.2"] as const;
export type DirectBankVersion = (typeof DIRECTBANK_VERSIONS)[number];

export function isDirectBankVersion(value: string | null | undefined): value is DirectBankVersion {
  return (DIRECTBANK_VERSIONS as readonly string[]).includes(value ?? "");
}

/** A message that breaks the standard, with its code from the standard's table of errors
 *  (2001 packet format, 2006 packet version, 2007 document kind, 2008 document version, 2010,
 *  2011 compression, 2201 document format, 2205 document fields). */
export class DirectBankFormatError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = "DirectBankFormatError";
  }
}

const BOM = new Uint8Array([0xef, 0xbb, 0xbf]);

/** XML text as the standard's bytes: UTF-8 with a BOM. */
export function xmlBytes(xml: string): Uint8Array {
  const body = strToU8(xml);
  const out = new Uint8Array(BOM.length + body.length);
  out.set(BOM);
  out.set(body, BOM.length);
  return out;
}

/** UTF-8 bytes (with or without a BOM) as text; bytes that are not UTF-8 throw `code`. */
function xmlText(bytes: Uint8Array, code = "2001"): string {
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    throw new DirectBankFormatError(code, "Текст не в кодировке UTF-8");
  }
}

const BASE64_RE = /^[A-Za-z0-9+/]*={0,2}$/;

/** Base64 as the standard writes it (line breaks allowed); anything else throws `code`. */
function fromBase64(text: string, code = "2001"): Uint8Array {
  const compact = text.replace(/\s+/g, "");
  if (compact.length % 4 !== 0 || !BASE64_RE.test(compact)) {
    throw new DirectBankFormatError(code, "Данные документа не в кодировке base64");
  }
  return new Uint8Array(Buffer.from(compact, "base64"));
}

function toBase64(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64");
}

/** A document's XML as a packet carries it: BOM, zipped under `fileName` when `compress`, base64. */
export function packDocumentData(xml: string, compress: boolean, fileName = "document.xml"): string {
  const bytes = xmlBytes(xml);
  return toBase64(compress ? zipSync({ [fileName]: bytes }, { level: 6 }) : bytes);
}

/** A packet's document data back to XML text: base64 (2001), unzipped (2011) when `compressed`,
 *  UTF-8 (2201). A zip holds one file, the document. */
export function unpackDocumentData(base64: string, compressed: boolean, maxBytes: number): string {
  let bytes = fromBase64(base64);
  if (compressed) {
    let files: Record<string, Uint8Array>;
    try {
      files = unzipSync(bytes, {
        filter: (f) => {
          if (f.originalSize > maxBytes) throw new Error("too large");
          return true;
        },
      });
    } catch {
      throw new DirectBankFormatError("2011", "Документ не удалось распаковать");
    }
    const entries = Object.values(files);
    if (entries.length !== 1) throw new DirectBankFormatError("2011", "В архиве не один файл");
    bytes = entries[0]!;
  }
  return xmlText(bytes, "2201");
}

/** A parsed element: attributes under `@_name`, text under `#text`, children by local name
 *  (always arrays, so that one child and many read alike). */
export interface XmlNode {
  [key: string]: string | XmlNode[] | undefined;
}

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: "@_",
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: true,
  isArray: (_name, _path, _leaf, isAttribute) => !isAttribute,
  processEntities: true,
});

const localName = (name: string) => name.slice(name.indexOf(":") + 1);

/** Children keyed by local name (a prefixed `edo:Data` is `Data`); attributes keep their names. */
function withLocalNames(node: unknown): XmlNode {
  if (typeof node !== "object" || node === null) return { "#text": String(node ?? "") };
  const out: XmlNode = {};
  for (const [key, value] of Object.entries(node as Record<string, unknown>)) {
    if (key.startsWith("@_") || key === "#text") out[key] = String(value);
    else if (Array.isArray(value)) out[localName(key)] = value.map(withLocalNames);
  }
  return out;
}

/**
 * The root element of an XML message in the standard's namespace: its local name must be one of
 * `roots`. Not XML, a DOCTYPE (entities are never needed and could expand), another namespace or
 * another root throws `code` (2001 for a packet, 2201 for a document).
 */
export function parseRoot(
  xml: string,
  roots: readonly string[],
  code: string,
): { name: string; node: XmlNode } {
  const text = xml.charCodeAt(0) === 0xfeff ? xml.slice(1) : xml;
  if (/<!DOCTYPE/i.test(text)) throw new DirectBankFormatError(code, "DOCTYPE не допускается");
  let tree: Record<string, unknown>;
  try {
    tree = parser.parse(text, true) as Record<string, unknown>;
  } catch {
    throw new DirectBankFormatError(code, "Сообщение не является XML");
  }
  const rootKey = Object.keys(tree).find((k) => k !== "?xml" && !k.startsWith("#"));
  if (rootKey === undefined) throw new DirectBankFormatError(code, "Сообщение не является XML");
  const raw = (tree[rootKey] as unknown[])[0] as Record<string, unknown> | string;
  const attrs = typeof raw === "object" && raw !== null ? raw : {};
  const prefix = rootKey.includes(":") ? rootKey.slice(0, rootKey.indexOf(":")) : null;
  const ns = attrs[prefix === null ? "@_xmlns" : `@_xmlns:${prefix}`];
  if (ns !== DIRECTBANK_NS) {
    throw new DirectBankFormatError(code, `Пространство имён должно быть ${DIRECTBANK_NS}`);
  }
  const name = localName(rootKey);
  if (!roots.includes(name)) {
    throw new DirectBankFormatError(code, `Ожидается элемент ${roots.join(" или ")}, получен ${name}`);
  }
  return { name, node: withLocalNames(raw) };
}

/** The only child `name` of `node`; missing throws `code`. */
export function child(node: XmlNode, name: string, code: string): XmlNode {
  const found = optionalChild(node, name);
  if (!found) throw new DirectBankFormatError(code, `Нет элемента ${name}`);
  return found;
}

export function optionalChild(node: XmlNode, name: string): XmlNode | undefined {
  const list = node[name];
  return Array.isArray(list) ? list[0] : undefined;
}

export function children(node: XmlNode, name: string): XmlNode[] {
  const list = node[name];
  return Array.isArray(list) ? list : [];
}

/** The text of the child `name`; missing throws `code`. */
export function childText(node: XmlNode, name: string, code: string): string {
  return textOf(child(node, name, code));
}

export function optionalText(node: XmlNode | undefined, name: string): string | undefined {
  const found = node ? optionalChild(node, name) : undefined;
  return found ? textOf(found) : undefined;
}

export function textOf(node: XmlNode): string {
  const text = node["#text"];
  return typeof text === "string" ? text : "";
}

export function attr(node: XmlNode, name: string): string | undefined {
  const value = node[`@_${name}`];
  return typeof value === "string" ? value : undefined;
}

export function requiredAttr(node: XmlNode, name: string, code: string): string {
  const value = attr(node, name);
  if (value === undefined || value === "") throw new DirectBankFormatError(code, `Нет атрибута ${name}`);
  return value;
}

/** An element to write: attributes (undefined ones left out), then children in order (an
 *  undefined child left out) or text. */
export interface XmlElement {
  name: string;
  attrs?: Record<string, string | undefined>;
  children?: (XmlElement | undefined)[];
  text?: string;
}

export const el = (
  name: string,
  attrs: XmlElement["attrs"],
  children: XmlElement["children"] | string,
): XmlElement => (typeof children === "string" ? { name, attrs, text: children } : { name, attrs, children });

/** A leaf with text, or nothing when the value is absent or empty (optional elements). */
export const leaf = (name: string, value: string | null | undefined): XmlElement | undefined =>
  value === undefined || value === null || value === "" ? undefined : { name, text: value };

const builder = new XMLBuilder({
  ignoreAttributes: false,
  attributeNamePrefix: "@_",
  preserveOrder: true,
  suppressEmptyNode: true,
  processEntities: true,
});

type Ordered = Record<string, unknown>;

function toOrdered(e: XmlElement): Ordered {
  const body: Ordered[] = [];
  if (e.text !== undefined) body.push({ "#text": e.text });
  for (const c of e.children ?? []) if (c) body.push(toOrdered(c));
  const out: Ordered = { [e.name]: body };
  const attrs = Object.entries(e.attrs ?? {}).filter(([, v]) => v !== undefined);
  if (attrs.length > 0) out[":@"] = Object.fromEntries(attrs.map(([k, v]) => [`@_${k}`, v]));
  return out;
}

/** An element without declaration, to be placed inside a message built by buildXml. */
export function buildFragment(e: XmlElement): string {
  return builder.build([toOrdered(e)]) as string;
}

/** A whole message: declaration and `root` in the standard's namespace. */
export function buildXml(root: XmlElement): string {
  const withNs: XmlElement = { ...root, attrs: { xmlns: DIRECTBANK_NS, ...root.attrs } };
  return `<?xml version="1.0" encoding="UTF-8"?>\n${builder.build([toOrdered(withNs)]) as string}`;
}
