// Amounts are integer kopecks inside the service; these convert to and from decimal text
// with string arithmetic so no float rounding can creep in.

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
const AMOUNT_RE = /^(-?)(\d+)(?:[.,](\d{1,2}))?$/;

/** `123450` → `"1234.50"`, `-5` → `"-0.05"`: dot decimal, exactly two decimals, no grouping. */
export function formatKopecks(k: number | bigint): string {
  if (typeof k === "number" && !Number.isSafeInteger(k)) {
    throw new RangeError(`kopecks must be a safe integer, got ${k}`);
  }
  if (typeof k === "number") {
    // Exact for safe integers: the remainder is an integer, and so is (abs - remainder) / 100.
    const abs = Math.abs(k);
    const cents = abs % 100;
    return `${k < 0 ? "-" : ""}${(abs - cents) / 100}.${cents < 10 ? "0" : ""}${cents}`;
  }
  const big = BigInt(k);
  const negative = big < 0n;
  const abs = negative ? -big : big;
  const fraction = (abs % 100n).toString().padStart(2, "0");
  return `${negative ? "-" : ""}${abs / 100n}.${fraction}`;
}

function parseKopecks(s: string, allowSign: boolean): number | null {
  const m = AMOUNT_RE.exec(s.trim());
  if (m === null) return null;
  const negative = m[1] === "-";
  if (negative && !allowSign) return null;
  const rubles = m[2]!;
  // Cheap bound before BigInt so a huge digit string cannot cost much.
  if (rubles.length > 20) return null;
  const kopecks = BigInt(rubles) * 100n + BigInt((m[3] ?? "").padEnd(2, "0"));
  if (kopecks > MAX_SAFE) return null;
  const n = Number(kopecks);
  return negative && n !== 0 ? -n : n;
}

/**
 * Parses a non-negative amount: `1234`, `1234.5`, `1234.50`, `1234,50`. Surrounding whitespace
 * is ignored. Signs, more than two decimals, grouping and anything beyond a safe integer of
 * kopecks give null.
 */
export function parseAmountToKopecks(s: string): number | null {
  return parseKopecks(s, false);
}

/** Like parseAmountToKopecks but also accepts a leading "-" (balances may be negative). */
export function parseSignedAmountToKopecks(s: string): number | null {
  return parseKopecks(s, true);
}

/**
 * Kopecks as a JSON number with at most two decimals (123450 → 1234.5). The double nearest to
 * the decimal text serialises back to that text for amounts below 10^15 kopecks.
 */
export function kopecksToJsonNumber(k: number): number {
  return Number(formatKopecks(k));
}
