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

/** Calendar date (YYYY-MM-DD) of an instant in a time zone: what "today" means for statements. */
export function dateInZone(at: Date, timeZone: string): string {
  return new Intl.DateTimeFormat("en-CA", {
    timeZone,
    year: "numeric",
    month: "2-digit",
    day: "2-digit",
  }).format(at);
}
