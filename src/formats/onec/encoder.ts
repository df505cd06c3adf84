// cp1251 bytes: documents written straight into bytes (the export's hot path) and text encoded.
import iconv from "iconv-lite";
import type { OneCVersion, StatementOperation } from "../types";
import { DOCUMENT_END, type OneCFieldSink, writeStatementDocumentFields } from "./writer";

const CP1251 = (() => {
  const table = new Uint8Array(65536).fill(0x3f);
  const chars = iconv.decode(Buffer.from(Array.from({ length: 256 }, (_, i) => i)), "win1251");
  for (let byte = 0; byte < 256; byte++) {
    const unit = chars.charCodeAt(byte);
    if (chars[byte] !== "\ufffd") table[unit] = byte;
  }
  return table;
})();

// 1 for the two units that end a line (a CR or LF inside a value is not copied as is).
const LINE_BREAK_UNITS = (() => {
  const table = new Uint8Array(65536);
  table[10] = 1;
  table[13] = 1;
  return table;
})();

/**
 * Statement documents written straight into cp1251 bytes: the same bytes as
 * `encodeCp1251(oneCStatementDocument(op, version))`, without building the text first (the
 * export's hot path). Line breaks inside a value become one space, as in the text writer.
 */
export class OneCDocumentEncoder {
  private buf = new Uint8Array(1 << 16);
  private len = 0;
  // Where documents written later go (keepPlace/takeWith).
  private readonly places: number[] = [];
  private readonly keys = new Map<string, Uint8Array>();
  private readonly end = iconv.encode(DOCUMENT_END, "win1251");
  private readonly field: OneCFieldSink = (key, value) => this.write(key, value);

  constructor(private readonly version: OneCVersion) {}

  document(op: StatementOperation): void {
    writeStatementDocumentFields(op, this.version, this.field);
    this.ensure(this.end.length);
    this.buf.set(this.end, this.len);
    this.len += this.end.length;
  }

  /**
   * A document already laid out as text (`lines` lines, each ending in CRLF, `КонецДокумента`
   * included), as the export reads it from SQLite. Writes it and returns true when its only line
   * breaks are those CRLFs. Otherwise writes nothing and returns false: a value holds a line
   * break, which `document` writes differently (a space; a multi-line purpose also as
   * НазначениеПлатежа1..6).
   */
  laidOut(text: string, lines: number): boolean {
    const n = text.length;
    this.ensure(n);
    const buf = this.buf;
    const start = this.len;
    let len = start;
    let breaks = 0;
    for (let i = 0; i < n; i++) {
      const unit = text.charCodeAt(i);
      breaks += LINE_BREAK_UNITS[unit]!;
      buf[len++] = CP1251[unit]!;
    }
    if (breaks !== 2 * lines) return false;
    this.len = len;
    return true;
  }

  /** Keeps the place of a document that `takeWith` will write, in order: one `laidOut` refused. */
  keepPlace(): void {
    this.places.push(this.len);
  }

  /** The bytes written since the last call. */
  take(): Uint8Array {
    if (this.places.length > 0) throw new Error("places kept: use takeWith");
    const out = this.buf.slice(0, this.len);
    this.len = 0;
    return out;
  }

  /**
   * The bytes written since the last call, with the documents of `ops` written by `document`
   * at the places kept, in order, and nothing copied twice: they are written after the rest, then
   * all is copied once into the result.
   */
  takeWith(ops: StatementOperation[]): Uint8Array {
    if (ops.length !== this.places.length)
      throw new Error(`${this.places.length} places kept, ${ops.length} given`);
    const end = this.len;
    const starts = ops.map((op) => {
      const start = this.len;
      this.document(op);
      return start;
    });
    const out = new Uint8Array(this.len);
    let written = 0;
    let from = 0;
    this.places.forEach((place, i) => {
      out.set(this.buf.subarray(from, place), written);
      written += place - from;
      from = place;
      const docEnd = i + 1 < starts.length ? starts[i + 1]! : this.len;
      out.set(this.buf.subarray(starts[i]!, docEnd), written);
      written += docEnd - starts[i]!;
    });
    out.set(this.buf.subarray(from, end), written);
    this.places.length = 0;
    this.len = 0;
    return out;
  }

  private write(key: string, value: string): void {
    let keyBytes = this.keys.get(key);
    if (!keyBytes) {
      keyBytes = iconv.encode(`${key}=`, "win1251");
      this.keys.set(key, keyBytes);
    }
    this.ensure(keyBytes.length + value.length + 2);
    const buf = this.buf;
    buf.set(keyBytes, this.len);
    let len = this.len + keyBytes.length;
    const n = value.length;
    for (let i = 0; i < n; i++) {
      const unit = value.charCodeAt(i);
      if (unit >= 0x80) buf[len++] = CP1251[unit]!;
      else if (unit !== 13 && unit !== 10) buf[len++] = unit;
      else {
        if (unit === 13 && value.charCodeAt(i + 1) === 10) i++;
        buf[len++] = 0x20;
      }
    }
    buf[len++] = 13;
    buf[len++] = 10;
    this.len = len;
  }

  private ensure(extra: number): void {
    if (this.len + extra <= this.buf.length) return;
    const grown = new Uint8Array(Math.max(this.buf.length * 2, this.len + extra));
    grown.set(this.buf.subarray(0, this.len));
    this.buf = grown;
  }
}

export function encodeCp1251(text: string): Uint8Array {
  return iconv.encode(text, "win1251");
}
