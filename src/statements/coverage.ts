// Which days of an account's period svc holds in full (decisions §15): a day is covered when a
// ready statement (any source, imports included) holds it and was fetched after the day ended in
// the business time zone; partial when the statements holding it were all fetched before its end
// (the bank may add operations to it still); missing otherwise, days after today included.
// Read from statement_days (kept by StatementRepository.markReady): per account and day, the newest
// fetched_at of the ready statements holding it, which alone decides covered or partial.
import { dateInZone } from "../core/clock";
import type { SqlPort } from "../db/sql-port";
import { nextIsoDay } from "../formats/dates";

export interface DateRange {
  date_from: string;
  date_to: string;
}

export interface PartialDay {
  date: string;
  /** The newest fetched_at of the statements holding the day. */
  as_of: string;
}

export interface Coverage {
  /** Nothing missing, nothing partial. */
  complete: boolean;
  /** Consecutive covered days as one range each. */
  covered: DateRange[];
  /** Day by day. */
  partial: PartialDay[];
  /** Consecutive missing days as one range each. */
  missing: DateRange[];
}

export interface HeldDay {
  day: string;
  fetched_at: string;
}

/** Appends `day` to the last range when it continues it, else starts a range. */
function extend(ranges: DateRange[], day: string, previous: string | null): void {
  const last = ranges[ranges.length - 1];
  if (last !== undefined && last.date_to === previous) last.date_to = day;
  else ranges.push({ date_from: day, date_to: day });
}

/**
 * The coverage of days `from`..`to` (inclusive, YYYY-MM-DD) from the held days among them, in time
 * zone `timeZone` at instant `now` (today and the days after it cannot be covered yet).
 */
export function coverageOf(
  held: readonly HeldDay[],
  from: string,
  to: string,
  timeZone: string,
  now: Date,
): Coverage {
  const fetchedAt = new Map(held.map((h) => [h.day, h.fetched_at]));
  // The calendar day each fetch happened on; many days share one statement's fetched_at.
  const fetchDays = new Map<string, string>();
  const fetchDay = (at: string) => {
    let day = fetchDays.get(at);
    if (day === undefined) {
      day = dateInZone(new Date(at), timeZone);
      fetchDays.set(at, day);
    }
    return day;
  };
  const today = dateInZone(now, timeZone);
  const coverage: Coverage = { complete: true, covered: [], partial: [], missing: [] };
  let previous: string | null = null;
  for (let day = from; day <= to; day = nextIsoDay(day)) {
    const at = day <= today ? fetchedAt.get(day) : undefined;
    if (at === undefined) extend(coverage.missing, day, previous);
    // Fetched on a later calendar day: after this one ended.
    else if (fetchDay(at) > day) extend(coverage.covered, day, previous);
    else coverage.partial.push({ date: day, as_of: at });
    previous = day;
  }
  coverage.complete = coverage.missing.length === 0 && coverage.partial.length === 0;
  return coverage;
}

/** Reads coverage through a port: the agent tools' read-only one, or the stores' own. */
export class CoverageReader {
  private readonly heldStmt;

  constructor(
    port: SqlPort,
    private readonly timeZone: string,
  ) {
    this.heldStmt = port.prepare<HeldDay, [string, string, string]>(
      "SELECT day, fetched_at FROM statement_days WHERE bank_account_id = ? AND day >= ? AND day <= ?",
    );
  }

  /** Days `from`..`to` of account `bankAccountId` (a row per held day: years are fine). */
  read(bankAccountId: string, from: string, to: string, now: Date): Coverage {
    return coverageOf(this.heldStmt.all(bankAccountId, from, to), from, to, this.timeZone, now);
  }
}
