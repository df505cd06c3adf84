// lanes: sqlite
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import {
  completeInn10,
  completeInn12,
  isValidAccountKey,
  isValidAccountNumber,
  isValidBik,
  isValidInn,
  isValidKpp,
  withAccountKey,
} from "../../src/formats/validators";
import { BANK, ENTREPRENEUR, OWN, SUPPLIER } from "./sample-operations";

const digits = (n: number) => fc.stringMatching(new RegExp(`^\\d{${n}}$`));

describe("INN", () => {
  test("known valid INNs", () => {
    for (const inn of ["7707083893", "7719617469", "7736050003", "500100732259"]) {
      expect(isValidInn(inn)).toBe(true);
    }
  });

  test("invalid INNs", () => {
    for (const inn of [
      "7707083894",
      "7719617460",
      "500100732258",
      "500100732249",
      "770708389",
      "77070838930",
      "",
      "770708389a",
      " 7707083893",
      "７７０７０８３８９３",
    ]) {
      expect(isValidInn(inn)).toBe(false);
    }
  });

  test("completeInn10 and completeInn12 reproduce known INNs", () => {
    expect(completeInn10("770708389")).toBe("7707083893");
    expect(completeInn10("771961746")).toBe("7719617469");
    expect(completeInn12("5001007322")).toBe("500100732259");
  });

  test("completed INNs are valid and any other last digit is not", () => {
    fc.assert(
      fc.property(digits(9), (first9) => {
        const inn = completeInn10(first9);
        expect(isValidInn(inn)).toBe(true);
        for (let d = 0; d <= 9; d++) {
          if (String(d) !== inn[9]) expect(isValidInn(first9 + d)).toBe(false);
        }
      }),
    );
    fc.assert(
      fc.property(digits(10), (first10) => {
        const inn = completeInn12(first10);
        expect(isValidInn(inn)).toBe(true);
        const wrongLast = (Number(inn[11]) + 1) % 10;
        expect(isValidInn(inn.slice(0, 11) + wrongLast)).toBe(false);
      }),
    );
  });

  test("complete helpers reject wrong input", () => {
    expect(() => completeInn10("12345678")).toThrow(RangeError);
    expect(() => completeInn12("12345678901")).toThrow(RangeError);
    expect(() => completeInn10("12345678x")).toThrow(RangeError);
  });
});

describe("BIK, KPP, account number", () => {
  test("BIK", () => {
    expect(isValidBik("044525225")).toBe(true);
    expect(isValidBik("04452522")).toBe(false);
    expect(isValidBik("0445252250")).toBe(false);
    expect(isValidBik("04452522a")).toBe(false);
  });

  test("KPP", () => {
    expect(isValidKpp("771901001")).toBe(true);
    expect(isValidKpp("7719AB001")).toBe(true);
    expect(isValidKpp("0")).toBe(true);
    expect(isValidKpp("7719ab001")).toBe(false);
    expect(isValidKpp("77190100")).toBe(false);
    expect(isValidKpp("77A901001")).toBe(false);
    expect(isValidKpp("")).toBe(false);
    expect(isValidKpp("00")).toBe(false);
  });

  test("account number is 20 digits", () => {
    expect(isValidAccountNumber("40702810938000000001")).toBe(true);
    expect(isValidAccountNumber("4070281093800000000")).toBe(false);
    expect(isValidAccountNumber("407028109380000000011")).toBe(false);
    expect(isValidAccountNumber("4070281093800000000x")).toBe(false);
  });
});

describe("account control key", () => {
  test("real correspondent accounts pass with the correspondent rule", () => {
    const pairs: Array<[string, string]> = [
      ["044525225", "30101810400000000225"],
      ["044525593", "30101810200000000593"],
      ["044525974", "30101810145250000974"],
      ["044525187", "30101810700000000187"],
      ["044030653", "30101810500000000653"],
    ];
    for (const [bik, corr] of pairs) {
      expect(isValidAccountKey(corr, bik, { correspondent: true })).toBe(true);
      expect(isValidAccountKey(corr, bik)).toBe(false);
      expect(withAccountKey(corr, bik, { correspondent: true })).toBe(corr);
    }
  });

  test("settlement account example, both ways", () => {
    expect(withAccountKey("40702810038000000001", "044525225")).toBe("40702810938000000001");
    expect(isValidAccountKey("40702810938000000001", "044525225")).toBe(true);
    expect(isValidAccountKey("40702810838000000001", "044525225")).toBe(false);
  });

  test("sample parties are consistent", () => {
    for (const p of [OWN, SUPPLIER, ENTREPRENEUR, BANK]) {
      expect(isValidInn(p.inn)).toBe(true);
      expect(isValidKpp(p.kpp)).toBe(true);
      expect(isValidAccountKey(p.account, p.bank_bik)).toBe(true);
      expect(isValidAccountKey(p.bank_corr_account, p.bank_bik, { correspondent: true })).toBe(true);
    }
  });

  test("a BIK with digits 7-8 equal to 00 uses the correspondent prefix", () => {
    fc.assert(
      fc.property(digits(20), digits(6), fc.constantFrom("0", "1", "2"), (acc, bikHead, last) => {
        const bik = `${bikHead}00${last}`;
        const keyed = withAccountKey(acc, bik);
        expect(keyed).toBe(withAccountKey(acc, bik, { correspondent: true }));
        expect(isValidAccountKey(keyed, bik, { correspondent: true })).toBe(true);
      }),
    );
  });

  test("withAccountKey passes and any single-digit change fails", () => {
    fc.assert(
      fc.property(
        digits(20),
        digits(9),
        fc.boolean(),
        fc.nat(19),
        fc.integer({ min: 1, max: 9 }),
        (acc, bik, correspondent, pos, delta) => {
          const keyed = withAccountKey(acc, bik, { correspondent });
          expect(keyed.slice(0, 8) + keyed.slice(9)).toBe(acc.slice(0, 8) + acc.slice(9));
          expect(isValidAccountKey(keyed, bik, { correspondent })).toBe(true);
          const changed = String((Number(keyed[pos]) + delta) % 10);
          const broken = keyed.slice(0, pos) + changed + keyed.slice(pos + 1);
          expect(isValidAccountKey(broken, bik, { correspondent })).toBe(false);
        },
      ),
    );
  });

  test("malformed input", () => {
    expect(isValidAccountKey("4070281093800000000", "044525225")).toBe(false);
    expect(isValidAccountKey("40702810938000000001", "04452522")).toBe(false);
    expect(() => withAccountKey("123", "044525225")).toThrow(RangeError);
    expect(() => withAccountKey("40702810938000000001", "bik")).toThrow(RangeError);
  });
});
