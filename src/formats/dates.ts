// Calendar dates as strings: ISO "YYYY-MM-DD" inside the service, "dd.MM.yyyy" in 1C files.

const ISO_RE = /^(\d{4})-(\d{2})-(\d{2})$/;
const RU_RE = /^(\d{2})\.(\d{2})\.(\d{4})$/;
const TIME_RE = /^([01]\d|2[0-3]):[0-5]\d:[0-5]\d$/;

function isLeapYear(y: number): boolean {
  return (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
}

function isRealDate(y: number, m: number, d: number): boolean {
  if (y < 1 || m < 1 || m > 12 || d < 1) return false;
  const days = [31, isLeapYear(y) ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
  return d <= days[m - 1]!;
}

/** Strict `YYYY-MM-DD` that names a real Gregorian date. */
export function isValidIsoDate(s: string): boolean {
  const m = ISO_RE.exec(s);
  return m !== null && isRealDate(Number(m[1]), Number(m[2]), Number(m[3]));
}

/** Strict `HH:mm:ss`, 24-hour clock. */
export function isValidTime(s: string): boolean {
  return TIME_RE.test(s);
}

/** "2026-11-03" → "03.11.2026"; throws RangeError on an invalid date (a caller bug). */
export function isoToRu(iso: string): string {
  if (!isValidIsoDate(iso)) throw new RangeError(`not a valid YYYY-MM-DD date: ${iso}`);
  return `${iso.slice(8, 10)}.${iso.slice(5, 7)}.${iso.slice(0, 4)}`;
}

/** "03.11.2026" → "2026-11-03"; null unless it is a real date. Surrounding whitespace is ignored. */
export function ruToIso(ru: string): string | null {
  const m = RU_RE.exec(ru.trim());
  if (m === null) return null;
  const [, d, mo, y] = m;
  if (!isRealDate(Number(y), Number(mo), Number(d))) return null;
  return `${y}-${mo}-${d}`;
}

const DAY_MS = 86_400_000;

/** Days from `from` to `to` (YYYY-MM-DD), both counted: 2026-11-01..2026-11-01 is 1. */
export function daysInclusive(from: string, to: string): number {
  return Math.round((Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / DAY_MS) + 1;
}

/** The calendar day after `day` (YYYY-MM-DD). */
export function nextIsoDay(day: string): string {
  return new Date(Date.parse(`${day}T00:00:00Z`) + DAY_MS).toISOString().slice(0, 10);
}

/** The calendar day `days` after `day` (YYYY-MM-DD); negative `days` go back. */
export function shiftIsoDay(day: string, days: number): string {
  return new Date(Date.parse(`${day}T00:00:00Z`) + days * DAY_MS).toISOString().slice(0, 10);
}
