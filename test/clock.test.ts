// lanes: sqlite
import { describe, expect, test } from "bun:test";
import { dateInZone } from "../src/core/clock";

describe("dateInZone", () => {
  test("gives the calendar date in the zone, also across midnight and between zones", () => {
    expect(dateInZone(new Date("2026-11-20T20:59:59Z"), "Europe/Moscow")).toBe("2026-11-20");
    expect(dateInZone(new Date("2026-11-20T21:00:00Z"), "Europe/Moscow")).toBe("2026-11-21");
    expect(dateInZone(new Date("2026-11-20T21:00:00Z"), "UTC")).toBe("2026-11-20");
    expect(dateInZone(new Date("2026-11-20T18:29:59Z"), "Asia/Kolkata")).toBe("2026-11-20");
    expect(dateInZone(new Date("2026-11-20T18:30:00Z"), "Asia/Kolkata")).toBe("2026-11-21");
    expect(dateInZone(new Date("2026-11-20T20:59:00Z"), "Europe/Moscow")).toBe("2026-11-20");
    // Going back in time is answered afresh too.
    expect(dateInZone(new Date("2026-01-01T00:00:00Z"), "Europe/Moscow")).toBe("2026-01-01");
  });
});
