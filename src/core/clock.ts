// Time and randomness come from here so that tests can control them.
import { randomBytes, randomUUID } from "node:crypto";

export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/** A clock that moves only when told to; for tests of expiry and rate-limit windows. */
export class ManualClock implements Clock {
  private ms: number;
  constructor(start: Date | string | number = "2026-11-20T09:00:00Z") {
    this.ms = new Date(start).getTime();
  }
  now(): Date {
    return new Date(this.ms);
  }
  set(to: Date | string | number): void {
    this.ms = new Date(to).getTime();
  }
  advance(ms: number): void {
    this.ms += ms;
  }
}

export function newId(): string {
  return randomUUID();
}

export function secureRandomBytes(n: number): Uint8Array {
  return new Uint8Array(randomBytes(n));
}

/** The business time zone unless SVC_TIMEZONE names another: what "today" and a day's end mean. */
export const DEFAULT_TIMEZONE = "Europe/Moscow";

// Formatting through Intl is slow, and "today" is asked for on every order. A calendar date can
// only change at a whole minute (every time zone's offset is a whole number of minutes), so the
// answer is kept per time zone for the minute it was computed in.
const dateFormats = new Map<string, { format: Intl.DateTimeFormat; minute: number; date: string }>();

/** Calendar date (YYYY-MM-DD) of an instant in a time zone: what "today" means for statements. */
export function dateInZone(at: Date, timeZone: string): string {
  const minute = Math.floor(at.getTime() / 60_000);
  let entry = dateFormats.get(timeZone);
  if (!entry) {
    const format = new Intl.DateTimeFormat("en-CA", {
      timeZone,
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
    });
    entry = { format, minute: Number.NaN, date: "" };
    dateFormats.set(timeZone, entry);
  }
  if (entry.minute !== minute) {
    entry.minute = minute;
    entry.date = entry.format.format(at);
  }
  return entry.date;
}

const wallFormats = new Map<string, Intl.DateTimeFormat>();

function wallClock(at: Date, timeZone: string): number[] {
  let format = wallFormats.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat("en-GB", {
      timeZone,
      hourCycle: "h23",
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
      second: "2-digit",
    });
    wallFormats.set(timeZone, format);
  }
  const parts = Object.fromEntries(format.formatToParts(at).map((p) => [p.type, Number(p.value)]));
  return [parts.year!, parts.month!, parts.day!, parts.hour!, parts.minute!, parts.second!];
}

/** An instant as the wall clock of a time zone shows it, to the second: "YYYY-MM-DDTHH:mm:ss". */
export function dateTimeInZone(at: Date, timeZone: string): string {
  const [y, mo, d, h, mi, s] = wallClock(at, timeZone).map((n) => String(n).padStart(2, "0"));
  return `${y!.padStart(4, "0")}-${mo}-${d}T${h}:${mi}:${s}`;
}

/** The instant a time zone's wall clock shows as "YYYY-MM-DDTHH:mm:ss"; null for no such time. */
export function instantOfWallTime(wall: string, timeZone: string): Date | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})$/.exec(wall);
  if (!m) return null;
  const asUtc = Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!);
  if (Number.isNaN(asUtc) || new Date(asUtc).toISOString().slice(0, 19) !== wall) return null;
  // The zone's offset at that wall time, found from how the zone writes an instant near it (twice,
  // for the hours around a change of offset).
  const offset = (at: number) => {
    const [y, mo, d, h, mi, s] = wallClock(new Date(at), timeZone);
    return Date.UTC(y!, mo! - 1, d!, h!, mi!, s!) - Math.floor(at / 1000) * 1000;
  };
  let instant = asUtc - offset(asUtc);
  instant = asUtc - offset(instant);
  return new Date(instant);
}

/** The instant day `day` (YYYY-MM-DD) starts in a time zone: the end of the day before. */
export function dayStartInZone(day: string, timeZone: string): Date {
  const start = instantOfWallTime(`${day}T00:00:00`, timeZone);
  if (start === null) throw new RangeError(`not a day: ${day}`);
  return start;
}
