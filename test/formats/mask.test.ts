// lanes: sqlite
import { describe, expect, test } from "bun:test";
import { maskAccountNumber } from "../../src/formats/mask";

describe("maskAccountNumber", () => {
  test("keeps the first and last 4 characters of a number longer than 8, stars in between", () => {
    expect(maskAccountNumber("40702810900000001234")).toBe("4070************1234");
    expect(maskAccountNumber("123456789")).toBe("1234*6789");
  });

  test("hides a number of 8 characters or fewer altogether", () => {
    expect(maskAccountNumber("")).toBe("");
    expect(maskAccountNumber("12345678")).toBe("********");
    expect(maskAccountNumber("123")).toBe("***");
  });

  test("every length keeps its length, also past the prepared stars", () => {
    for (let n = 0; n <= 100; n++) {
      const masked = maskAccountNumber("7".repeat(n));
      expect(masked.length).toBe(n);
      expect(masked.replaceAll("7", "").length).toBe(n <= 8 ? n : n - 8);
    }
  });
});
