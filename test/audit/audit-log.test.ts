import { describe, expect, test } from "bun:test";
import { auditArguments } from "../../src/audit/audit-log";

describe("audit arguments", () => {
  test("small arguments are stored as they are", () => {
    expect(auditArguments({ bank_account_id: "x" })).toBe('{"bank_account_id":"x"}');
    expect(auditArguments(undefined)).toBeNull();
  });

  test("large arguments are cut to at most 2 KB of JSON, Cyrillic included", () => {
    for (const text of ["a".repeat(10_000), "ж".repeat(10_000), "\u0001".repeat(5000)]) {
      const stored = auditArguments({ query: text })!;
      expect(Buffer.byteLength(stored)).toBeLessThanOrEqual(2048);
      expect(JSON.parse(stored)._truncated).toBe(true);
    }
  });
});
