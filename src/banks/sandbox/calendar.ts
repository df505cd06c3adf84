// Calendar arithmetic on day numbers (days since 1970-01-01), the generator's unit of time.
import { isValidIsoDate } from "../../formats/dates";

const MS_PER_DAY = 86_400_000;

/** "2026-11-03" → day number; throws RangeError on anything but a real YYYY-MM-DD date. */
export function isoToDay(iso: string): number {
  if (!isValidIsoDate(iso)) throw new RangeError(`not a valid YYYY-MM-DD date: ${iso}`);
  return (
    Date.UTC(Number(iso.slice(0, 4)), Number(iso.slice(5, 7)) - 1, Number(iso.slice(8, 10))) / MS_PER_DAY
  );
}

export interface CivilDate {
  year: number;
  month: number;
  day: number;
}

/** Day number → year, month (1–12), day. */
export function dayToCivil(dayNumber: number): CivilDate {
  const d = new Date(dayNumber * MS_PER_DAY);
  return { year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate() };
}

function pad2(n: number): string {
  return n < 10 ? `0${n}` : String(n);
}

export function dayToIso(dayNumber: number): string {
  const c = dayToCivil(dayNumber);
  return `${c.year}-${pad2(c.month)}-${pad2(c.day)}`;
}

/** Day number → "dd.MM.yyyy", the way dates are written inside payment purposes. */
export function dayToRu(dayNumber: number): string {
  const c = dayToCivil(dayNumber);
  return `${pad2(c.day)}.${pad2(c.month)}.${c.year}`;
}

/** The calendar date of an instant in UTC. */
export function utcDate(at: Date): string {
  return at.toISOString().slice(0, 10);
}
