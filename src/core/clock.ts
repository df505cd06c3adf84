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
