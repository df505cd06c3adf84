// When a calendar day starts in a time zone, as an instant: what "the end of a day" means for the
// sync lag (a day ends when the next one starts in the business time zone).

const formats = new Map<string, Intl.DateTimeFormat>();

/** The zone's offset from UTC at instant `atMs`, in milliseconds (Moscow: +3 h). */
function offsetMs(atMs: number, timeZone: string): number {
  let format = formats.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat("en-US", {
      timeZone,
      hourCycle: "h23",
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
      second: "2-digit",
    });
    formats.set(timeZone, format);
  }
  const part = (parts: Intl.DateTimeFormatPart[], type: string) =>
    Number(parts.find((p) => p.type === type)?.value ?? 0);
  const parts = format.formatToParts(new Date(atMs));
  const local = Date.UTC(
    part(parts, "year"),
    part(parts, "month") - 1,
    part(parts, "day"),
    part(parts, "hour"),
    part(parts, "minute"),
    part(parts, "second"),
  );
  return local - Math.floor(atMs / 1000) * 1000;
}

/** The instant (ms) day `day` (YYYY-MM-DD) starts in `timeZone`. */
export function dayStartInZone(day: string, timeZone: string): number {
  const midnightUtc = Date.parse(`${day}T00:00:00Z`);
  const first = midnightUtc - offsetMs(midnightUtc, timeZone);
  // Once more with the offset at that instant: a change of offset near midnight moves it.
  return midnightUtc - offsetMs(first, timeZone);
}
