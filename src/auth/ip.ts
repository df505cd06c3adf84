// IP addresses and CIDR ranges for token allow-lists and trusted proxies.
// Addresses are compared as 128-bit integers; IPv4 is mapped into ::ffff:0:0/96 so that
// "1.2.3.4" and "::ffff:1.2.3.4" are the same client.

export interface IpRange {
  base: bigint;
  prefix: number; // in the 128-bit space
}

function parseIpv4(s: string): bigint | null {
  const parts = s.split(".");
  if (parts.length !== 4) return null;
  let value = 0n;
  for (const part of parts) {
    if (!/^\d{1,3}$/.test(part)) return null;
    const n = Number(part);
    if (n > 255) return null;
    value = (value << 8n) | BigInt(n);
  }
  return value;
}

const V4_MAPPED = 0xffffn << 32n;

export function parseIp(input: string): bigint | null {
  let s = input.trim();
  if (s.startsWith("[") && s.endsWith("]")) s = s.slice(1, -1);
  const zone = s.indexOf("%");
  if (zone >= 0) s = s.slice(0, zone);
  if (!s.includes(":")) {
    const v4 = parseIpv4(s);
    return v4 === null ? null : V4_MAPPED | v4;
  }
  // IPv6, possibly with an embedded IPv4 tail.
  let tail: bigint | null = null;
  const lastColon = s.lastIndexOf(":");
  const last = s.slice(lastColon + 1);
  if (last.includes(".")) {
    tail = parseIpv4(last);
    if (tail === null) return null;
    s = `${s.slice(0, lastColon + 1)}0:0`;
  }
  const halves = s.split("::");
  if (halves.length > 2) return null;
  const head = halves[0] ? halves[0].split(":") : [];
  const rest = halves.length === 2 && halves[1] ? halves[1].split(":") : [];
  const groupsNeeded = 8;
  if (halves.length === 1 && head.length !== groupsNeeded) return null;
  if (halves.length === 2 && head.length + rest.length > groupsNeeded - 1) return null;
  const groups = [...head, ...Array(groupsNeeded - head.length - rest.length).fill("0"), ...rest];
  let value = 0n;
  for (const g of groups) {
    if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return null;
    value = (value << 16n) | BigInt(Number.parseInt(g, 16));
  }
  if (tail !== null) value = (value & ~0xffffffffn) | tail;
  return value;
}

export function parseIpRange(input: string): IpRange | null {
  const [addr, bits, extra] = input.trim().split("/");
  if (addr === undefined || extra !== undefined) return null;
  const base = parseIp(addr);
  if (base === null) return null;
  const isV4 = !addr.includes(":");
  const max = isV4 ? 32 : 128;
  let prefix = max;
  if (bits !== undefined) {
    if (!/^\d{1,3}$/.test(bits)) return null;
    prefix = Number(bits);
    if (prefix > max) return null;
  }
  const prefix128 = isV4 ? prefix + 96 : prefix;
  return { base: base & mask(prefix128), prefix: prefix128 };
}

function mask(prefix: number): bigint {
  if (prefix === 0) return 0n;
  return ((1n << BigInt(prefix)) - 1n) << BigInt(128 - prefix);
}

export function ipInRange(ip: bigint, range: IpRange): boolean {
  return (ip & mask(range.prefix)) === range.base;
}

export function ipAllowed(ip: string | null, ranges: readonly IpRange[]): boolean {
  if (ip === null) return false;
  const value = parseIp(ip);
  if (value === null) return false;
  return ranges.some((r) => ipInRange(value, r));
}

/** Canonical text of an address: IPv4 (also when given as ::ffff:a.b.c.d) as dotted quad. */
export function normalizeIp(input: string): string {
  const value = parseIp(input);
  if (value === null) return input;
  if (value >> 32n === 0xffffn) {
    const v4 = Number(value & 0xffffffffn);
    return [v4 >>> 24, (v4 >>> 16) & 255, (v4 >>> 8) & 255, v4 & 255].join(".");
  }
  const groups: string[] = [];
  for (let i = 7; i >= 0; i--) groups.push(((value >> BigInt(i * 16)) & 0xffffn).toString(16));
  // RFC 5952: "::" replaces the longest run of two or more zero groups (the first, on a tie).
  let best = -1;
  let bestLen = 1;
  for (let i = 0; i < 8; ) {
    let j = i;
    while (j < 8 && groups[j] === "0") j++;
    if (j - i > bestLen) [best, bestLen] = [i, j - i];
    i = j > i ? j : i + 1;
  }
  if (best < 0) return groups.join(":");
  return `${groups.slice(0, best).join(":")}::${groups.slice(best + bestLen).join(":")}`;
}
