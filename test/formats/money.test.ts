// lanes: sqlite
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import {
  addKopecks,
  closingKopecks,
  formatKopecks,
  kopecksToJsonNumber,
  parseAmountToKopecks,
  parseSignedAmountToKopecks,
  rublesToKopecks,
} from "../../src/formats/money";

describe("formatKopecks", () => {
  test("two decimals, dot, minus sign, no grouping", () => {
    expect(formatKopecks(123450)).toBe("1234.50");
    expect(formatKopecks(5)).toBe("0.05");
    expect(formatKopecks(-5)).toBe("-0.05");
    expect(formatKopecks(0)).toBe("0.00");
    expect(formatKopecks(-0)).toBe("0.00");
    expect(formatKopecks(100)).toBe("1.00");
    expect(formatKopecks(-123456789)).toBe("-1234567.89");
    expect(formatKopecks(Number.MAX_SAFE_INTEGER)).toBe("90071992547409.91");
    expect(formatKopecks(12345678901234567890n)).toBe("123456789012345678.90");
  });

  test("rejects non-integers and unsafe numbers", () => {
    for (const bad of [1.5, Number.NaN, Number.POSITIVE_INFINITY, Number.MAX_SAFE_INTEGER + 1]) {
      expect(() => formatKopecks(bad)).toThrow(RangeError);
    }
  });
});

describe("parseAmountToKopecks", () => {
  test("accepted forms", () => {
    expect(parseAmountToKopecks("1234.5")).toBe(123450);
    expect(parseAmountToKopecks("1234.50")).toBe(123450);
    expect(parseAmountToKopecks("1234")).toBe(123400);
    expect(parseAmountToKopecks("1234,50")).toBe(123450);
    expect(parseAmountToKopecks("0.01")).toBe(1);
    expect(parseAmountToKopecks("0")).toBe(0);
    expect(parseAmountToKopecks("007.10")).toBe(710);
    expect(parseAmountToKopecks(" 12.30 ")).toBe(1230);
    expect(parseAmountToKopecks("90071992547409.91")).toBe(Number.MAX_SAFE_INTEGER);
  });

  test("exact where floats are not", () => {
    expect(parseAmountToKopecks("0.29")).toBe(29);
    expect(parseAmountToKopecks("1.15")).toBe(115);
    expect(parseAmountToKopecks("4.35")).toBe(435);
    expect(parseAmountToKopecks("10000000000000.07")).toBe(1000000000000007);
  });

  test("rejected forms", () => {
    for (const bad of [
      "",
      " ",
      "1234.567",
      "-1.00",
      "+1.00",
      "1 234.50",
      "1,234.50",
      "1234.",
      ".50",
      "12a",
      "1e3",
      "0x10",
      "NaN",
      "Infinity",
      "١٢",
      "90071992547409.92",
      "99999999999999999999999",
    ]) {
      expect(parseAmountToKopecks(bad)).toBeNull();
    }
  });

  test("signed variant accepts a leading minus only", () => {
    expect(parseSignedAmountToKopecks("-1234.50")).toBe(-123450);
    expect(parseSignedAmountToKopecks("1234.50")).toBe(123450);
    expect(Object.is(parseSignedAmountToKopecks("-0.00"), 0)).toBe(true);
    expect(parseSignedAmountToKopecks("+1.00")).toBeNull();
    expect(parseSignedAmountToKopecks("--1")).toBeNull();
  });

  test("round trip with formatKopecks", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }), (k) => {
        expect(parseAmountToKopecks(formatKopecks(k))).toBe(k);
        expect(parseSignedAmountToKopecks(formatKopecks(-k))).toBe(k === 0 ? 0 : -k);
      }),
    );
  });
});

describe("kopecksToJsonNumber", () => {
  test("at most two decimals", () => {
    expect(kopecksToJsonNumber(123450)).toBe(1234.5);
    expect(kopecksToJsonNumber(5)).toBe(0.05);
    expect(kopecksToJsonNumber(100)).toBe(1);
    expect(kopecksToJsonNumber(-199)).toBe(-1.99);
    expect(JSON.stringify(kopecksToJsonNumber(1999))).toBe("19.99");
  });

  test("JSON text equals the decimal amount without trailing zeros", () => {
    fc.assert(
      fc.property(fc.integer({ min: -(10 ** 15) + 1, max: 10 ** 15 - 1 }), (k) => {
        const expected = formatKopecks(k).replace(/\.?0+$/, "");
        expect(JSON.stringify(kopecksToJsonNumber(k))).toBe(
          expected === "" || expected === "-" ? "0" : expected,
        );
      }),
    );
  });
});

describe("rublesToKopecks", () => {
  test("a JSON number with at most two decimals becomes exact kopecks", () => {
    expect(rublesToKopecks(1234.5)).toBe(123450);
    expect(rublesToKopecks(0.07)).toBe(7);
    expect(rublesToKopecks(0)).toBe(0);
    expect(rublesToKopecks(9999999999999.99)).toBe(999_999_999_999_999);
    expect(rublesToKopecks(-12.5, { signed: true })).toBe(-1250);
    expect(rublesToKopecks(1000, { max: 100_000 })).toBe(100_000);
  });

  test("anything else is null: beyond the safe integers, exponents, three decimals, signs, non-numbers", () => {
    for (const bad of [
      1e308,
      1e21,
      90071992547409.92,
      1e-7,
      0.001,
      0.1 + 0.2,
      -1,
      Number.NaN,
      Infinity,
      "1",
      null,
    ]) {
      expect({ bad, k: rublesToKopecks(bad) }).toEqual({ bad, k: null });
    }
    expect(rublesToKopecks(1000.01, { max: 100_000 })).toBeNull();
    expect(rublesToKopecks(-1000.01, { signed: true, max: 100_000 })).toBeNull();
  });
});

describe("addKopecks and closingKopecks", () => {
  test("a sum or a closing balance beyond the safe integers is null, never rounded", () => {
    expect(addKopecks(1, 2)).toBe(3);
    expect(addKopecks(Number.MAX_SAFE_INTEGER, 1)).toBeNull();
    expect(closingKopecks(100, 50, 30)).toBe(120);
    expect(closingKopecks(Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER)).toBe(
      Number.MAX_SAFE_INTEGER,
    );
    // Exactly: in doubles, (MAX + 2) − 1 would round to MAX + 1.
    expect(closingKopecks(Number.MAX_SAFE_INTEGER - 1, 3, 1)).toBeNull();
    expect(closingKopecks(Number.MAX_SAFE_INTEGER - 1, 2, 1)).toBe(Number.MAX_SAFE_INTEGER);
    expect(closingKopecks(0, 0, Number.MAX_SAFE_INTEGER)).toBe(-Number.MAX_SAFE_INTEGER);
  });
});
