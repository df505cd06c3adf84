// lanes: sqlite
// coverageOf, the day-by-day verdict behind search_operations' coverage: held days fetched on a
// later calendar day (in the time zone) are covered, the others held are partial, the rest and
// every day after today missing; consecutive covered and missing days merge into ranges.
import { describe, expect, test } from "bun:test";
import { coverageOf, type HeldDay } from "../../src/statements/coverage";

const MOSCOW = "Europe/Moscow";
const NOW = new Date("2026-11-20T09:00:00Z");
const held = (day: string, fetched_at: string): HeldDay => ({ day, fetched_at });
const range = (date_from: string, date_to: string) => ({ date_from, date_to });

describe("coverageOf", () => {
  test("nothing held: the whole period is one missing range", () => {
    expect(coverageOf([], "2026-10-30", "2026-11-02", MOSCOW, NOW)).toEqual({
      complete: false,
      covered: [],
      partial: [],
      missing: [range("2026-10-30", "2026-11-02")],
    });
  });

  test("covered and missing runs merge across month ends; partial days stay one by one", () => {
    const later = "2026-11-15T00:00:00.000Z";
    const rows = [
      held("2026-10-30", later),
      held("2026-10-31", later),
      held("2026-11-01", later),
      held("2026-11-03", "2026-11-03T10:00:00.000Z"),
      held("2026-11-04", "2026-11-04T10:00:00.000Z"),
      held("2026-11-05", later),
    ];
    expect(coverageOf(rows, "2026-10-29", "2026-11-07", MOSCOW, NOW)).toEqual({
      complete: false,
      covered: [range("2026-10-30", "2026-11-01"), range("2026-11-05", "2026-11-05")],
      partial: [
        { date: "2026-11-03", as_of: "2026-11-03T10:00:00.000Z" },
        { date: "2026-11-04", as_of: "2026-11-04T10:00:00.000Z" },
      ],
      missing: [
        range("2026-10-29", "2026-10-29"),
        range("2026-11-02", "2026-11-02"),
        range("2026-11-06", "2026-11-07"),
      ],
    });
  });

  test("complete only when every day is covered", () => {
    const rows = [
      held("2026-11-01", "2026-11-02T00:00:00.000Z"),
      held("2026-11-02", "2026-11-03T00:00:00.000Z"),
    ];
    expect(coverageOf(rows, "2026-11-01", "2026-11-02", "UTC", NOW)).toEqual({
      complete: true,
      covered: [range("2026-11-01", "2026-11-02")],
      partial: [],
      missing: [],
    });
    expect(coverageOf(rows, "2026-11-01", "2026-11-01", "UTC", NOW).complete).toBe(true);
  });

  test("a day ends at midnight in the time zone: Moscow's is 21:00 UTC the day before", () => {
    const at = (fetched: string) =>
      coverageOf([held("2026-11-10", fetched)], "2026-11-10", "2026-11-10", MOSCOW, NOW);
    expect(at("2026-11-10T20:59:59.999Z").partial).toEqual([
      { date: "2026-11-10", as_of: "2026-11-10T20:59:59.999Z" },
    ]);
    expect(at("2026-11-10T21:00:00.000Z").covered).toEqual([range("2026-11-10", "2026-11-10")]);
    // In UTC the same fetch is still during the day.
    expect(
      coverageOf([held("2026-11-10", "2026-11-10T21:00:00.000Z")], "2026-11-10", "2026-11-10", "UTC", NOW)
        .partial,
    ).toHaveLength(1);
  });

  test("days after today are missing even when held; today at best partial", () => {
    const rows = [held("2026-11-20", NOW.toISOString()), held("2026-11-21", NOW.toISOString())];
    expect(coverageOf(rows, "2026-11-19", "2026-11-22", MOSCOW, NOW)).toEqual({
      complete: false,
      covered: [],
      partial: [{ date: "2026-11-20", as_of: "2026-11-20T09:00:00.000Z" }],
      missing: [range("2026-11-19", "2026-11-19"), range("2026-11-21", "2026-11-22")],
    });
  });

  test("a long period: one range over years, leap day included", () => {
    const rows: HeldDay[] = [];
    for (
      let ms = Date.parse("2024-01-01T00:00:00Z");
      ms <= Date.parse("2025-12-31T00:00:00Z");
      ms += 86_400_000
    ) {
      rows.push(held(new Date(ms).toISOString().slice(0, 10), "2026-01-05T12:00:00.000Z"));
    }
    expect(rows).toHaveLength(366 + 365);
    expect(coverageOf(rows, "2023-12-31", "2026-01-01", MOSCOW, NOW)).toEqual({
      complete: false,
      covered: [range("2024-01-01", "2025-12-31")],
      partial: [],
      missing: [range("2023-12-31", "2023-12-31"), range("2026-01-01", "2026-01-01")],
    });
  });
});
