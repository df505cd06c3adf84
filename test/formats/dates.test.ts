// lanes: sqlite
import { describe, expect, test } from "bun:test";
import { isoToRu, isValidIsoDate, isValidTime, ruToIso } from "../../src/formats/dates";

describe("dates", () => {
  test("isoToRu", () => {
    expect(isoToRu("2026-11-03")).toBe("03.11.2026");
    expect(isoToRu("2024-02-29")).toBe("29.02.2024");
    expect(() => isoToRu("2026-02-29")).toThrow(RangeError);
    expect(() => isoToRu("03.11.2026")).toThrow(RangeError);
  });

  test("ruToIso", () => {
    expect(ruToIso("03.11.2026")).toBe("2026-11-03");
    expect(ruToIso("29.02.2024")).toBe("2024-02-29");
    expect(ruToIso(" 01.01.2027 ")).toBe("2027-01-01");
    for (const bad of [
      "29.02.2026",
      "31.04.2026",
      "00.01.2026",
      "01.13.2026",
      "1.11.2026",
      "2026-11-03",
      "",
    ]) {
      expect(ruToIso(bad)).toBeNull();
    }
  });

  test("isValidIsoDate is strict and calendar-aware", () => {
    for (const ok of ["2026-11-03", "2024-02-29", "2000-02-29", "2026-12-31", "2026-01-01"]) {
      expect(isValidIsoDate(ok)).toBe(true);
    }
    for (const bad of [
      "2026-02-29",
      "1900-02-29",
      "2026-04-31",
      "2026-13-01",
      "2026-00-10",
      "2026-01-00",
      "0000-01-01",
      "2026-1-03",
      " 2026-11-03",
      "2026-11-03T00:00:00Z",
      "20261103",
      "",
    ]) {
      expect(isValidIsoDate(bad)).toBe(false);
    }
  });

  test("isValidTime", () => {
    expect(isValidTime("00:00:00")).toBe(true);
    expect(isValidTime("23:59:59")).toBe(true);
    expect(isValidTime("24:00:00")).toBe(false);
    expect(isValidTime("12:60:00")).toBe(false);
    expect(isValidTime("1:00:00")).toBe(false);
    expect(isValidTime("12:00")).toBe(false);
  });
});
