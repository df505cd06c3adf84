// Which statements a sync run orders (decisions §16): every day from `since` to today that is not
// covered (missing, or partial: fetched before the day ended) and that no statement still waiting
// for the bank holds, as consecutive ranges cut into pieces of at most 31 days, oldest first. So
// the missing history is ordered once, and each run orders the days from the last covered one to
// today again until a statement fetched after the day ended makes it final.
import { nextIsoDay, shiftIsoDay } from "../formats/dates";
import type { Coverage, DateRange } from "../statements/coverage";

/** The longest period one order may ask for (the statements' own rule). */
const MAX_PIECE_DAYS = 31;

/** The pieces to order for the days of `coverage`, leaving out the days of `inFlight`. */
export function planPieces(coverage: Coverage, inFlight: readonly DateRange[]): DateRange[] {
  const held = new Set<string>();
  for (const range of inFlight) for (const day of daysOf(range)) held.add(day);
  const needed = [...coverage.missing.flatMap((r) => daysOf(r)), ...coverage.partial.map((p) => p.date)]
    .filter((day) => !held.has(day))
    .sort();
  const pieces: DateRange[] = [];
  for (const day of needed) {
    const last = pieces[pieces.length - 1];
    if (last && nextIsoDay(last.date_to) === day && shiftIsoDay(last.date_from, MAX_PIECE_DAYS - 1) >= day)
      last.date_to = day;
    else pieces.push({ date_from: day, date_to: day });
  }
  return pieces;
}

function daysOf(range: DateRange): string[] {
  const days: string[] = [];
  for (let day = range.date_from; day <= range.date_to; day = nextIsoDay(day)) days.push(day);
  return days;
}
