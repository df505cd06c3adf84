// Amounts are integer kopecks inside the service; these convert to and from decimal text
// with string arithmetic so no float rounding can creep in.
//
// Every amount svc takes from outside (the admin API's and `svc admin`'s sandbox opening balance,
// the agent tools' amount filters, the amounts of 1C files uploaded as payments or imported as
// statements, a bank's JSON) goes through parseKopecks below: a safe integer of kopecks or null,
// which the caller answers with 400 validation_error naming the field. Sums of such amounts go
// through addKopecks, so a total can never leave the safe integers either.

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
 * Below 10^15 kopecks a JSON number with two decimals reads back as the text that was sent; above,
 * neighbouring amounts share one double (90071992547409.91 arrives as …409.9).
 */
const JSON_EXACT_MAX = 999_999_999_999_999;

/**
 * Exact kopecks of rubles given as a JSON number (`1234.5` → 123450): the number's shortest
 * decimal text read like any other amount, so `0.1 + 0.2`, `1e-7`, `1e308`, NaN and infinities
 * give null, as do amounts above `max` kopecks (at most, and by default, 10^15 − 1: the largest a
 * JSON number carries exactly) and, unless `signed`, negative ones.
 */
export function rublesToKopecks(
  value: unknown,
  opts: { signed?: boolean; max?: number } = {},
): number | null {
  if (typeof value !== "number" || !Number.isFinite(value)) return null;
  const decimal = String(value);
  // Exponent notation (below 1e-6 or from 1e21 on) is never a plain amount.
  if (/e/i.test(decimal)) return null;
  const k = parseKopecks(decimal, opts.signed ?? false);
  const max = Math.min(opts.max ?? JSON_EXACT_MAX, JSON_EXACT_MAX);
  return k === null || Math.abs(k) > max ? null : k;
}

/** `a + b` of kopecks, or null when the sum is no longer a safe integer (a file's totals). */
export function addKopecks(a: number, b: number): number | null {
  const sum = a + b;
  return Number.isSafeInteger(sum) ? sum : null;
}

/** `opening + credit − debit` computed exactly, or null when it is no longer a safe integer. */
export function closingKopecks(opening: number, credit: number, debit: number): number | null {
  const closing = BigInt(opening) + BigInt(credit) - BigInt(debit);
  return closing > MAX_SAFE || closing < -MAX_SAFE ? null : Number(closing);
}

/**
 * Kopecks as a JSON number with at most two decimals (123450 → 1234.5). The double nearest to
 * the decimal text serialises back to that text for amounts below 10^15 kopecks.
 */
export function kopecksToJsonNumber(k: number): number {
  return Number(formatKopecks(k));
}

/**
 * Kopecks as a Russian reader writes rubles: groups of three digits split by a space, a decimal
 * comma, always two decimals (123456789 → "1 234 567,89", -5 → "-0,05").
 */
export function formatRubles(k: number): string {
  const [whole, fraction] = formatKopecks(k).split(".") as [string, string];
  const negative = whole.startsWith("-");
  const digits = negative ? whole.slice(1) : whole;
  return `${negative ? "-" : ""}${digits.replace(/\B(?=(\d{3})+$)/g, " ")},${fraction}`;
}
