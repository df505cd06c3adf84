// lanes: sqlite
import { describe, expect, test } from "bun:test";
import {
  closingBalanceAt,
  dayNet,
  generateDay,
  generateStatement,
  openingBalanceAt,
  SANDBOX_DEFAULT_OPENING_BALANCE,
  type SandboxAccountSpec,
} from "../../src/banks/sandbox/generator";
import type { Party, StatementOperation } from "../../src/formats/types";
import { isValidAccountKey, isValidBik, isValidInn, withAccountKey } from "../../src/formats/validators";

const SBER = "044525225";
const ALFA = "044525593";
const KPP_RE = /^\d{4}[\dA-Z]{2}\d{3}$/;
const INSTRUCTION_RE =
  /ignore (all )?previous instructions|игнорируй предыдущие инструкции|disregard all prior|забудь все предыдущие/i;

// Values of one fixed account and day. A change here changes data that services have already
// stored under the same operation ids: only ever update them deliberately.
const GOLDEN_DAY: (string | number)[][] = [
  ["sbx-86cc9c75-20261103-0000", "credit", 4606400, "7726817846", "7715563413"],
  ["sbx-86cc9c75-20261103-0001", "credit", 7942766, "1655418792", "7715563413"],
  ["sbx-86cc9c75-20261103-0002", "credit", 1339819, "0274608231", "7715563413"],
  ["sbx-86cc9c75-20261103-0003", "credit", 20962500, "504728770905", "7715563413"],
  ["sbx-86cc9c75-20261103-0004", "debit", 16993844, "7715563413", "7814781807"],
];
const GOLDEN_OPENING = 3751604000;

function ownAccount(serial: number, bik = SBER): string {
  return withAccountKey(`407028100${String(serial).padStart(11, "0")}`, bik);
}

function spec(serial: number, opsPerDay = 5, bik = SBER): SandboxAccountSpec {
  return {
    account_number: ownAccount(serial, bik),
    bik,
    ops_per_day: opsPerDay,
    opening_balance: SANDBOX_DEFAULT_OPENING_BALANCE,
  };
}

function isoDays(from: string, to: string): string[] {
  const out: string[] = [];
  for (let t = Date.parse(`${from}T00:00:00Z`); t <= Date.parse(`${to}T00:00:00Z`); t += 86_400_000) {
    out.push(new Date(t).toISOString().slice(0, 10));
  }
  return out;
}

function nextDay(iso: string): string {
  return new Date(Date.parse(`${iso}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10);
}

function collect(s: SandboxAccountSpec, from: string, to: string): StatementOperation[] {
  return [...generateStatement(s, from, to).operations];
}

function checkParty(p: Party): void {
  expect(isValidInn(p.inn)).toBe(true);
  if (p.inn.length === 10) expect(p.kpp).toMatch(KPP_RE);
  else expect(p.kpp).toBe("0");
  expect(isValidBik(p.bank_bik)).toBe(true);
  expect(p.bank_bik.startsWith("04")).toBe(true);
  expect(isValidAccountKey(p.account, p.bank_bik)).toBe(true);
  expect(p.bank_corr_account.startsWith("30101810")).toBe(true);
  expect(isValidAccountKey(p.bank_corr_account, p.bank_bik, { correspondent: true })).toBe(true);
  expect(p.name.trim().length).toBeGreaterThan(0);
  expect(p.bank_name.trim().length).toBeGreaterThan(0);
}

describe("determinism", () => {
  test("the same inputs give deep-equal operations", () => {
    const s = spec(1);
    expect(generateDay(s, "2026-11-03")).toEqual(generateDay({ ...s }, "2026-11-03"));
    const a = generateStatement(s, "2026-10-01", "2026-10-31");
    const b = generateStatement({ ...s }, "2026-10-01", "2026-10-31");
    expect([...a.operations]).toEqual([...b.operations]);
    expect({ ...a, operations: null }).toEqual({ ...b, operations: null });
  });

  test("pinned values: data must not change between versions, machines or restarts", () => {
    const s: SandboxAccountSpec = {
      account_number: withAccountKey("40702810038000012345", SBER),
      bik: SBER,
      ops_per_day: 5,
      opening_balance: SANDBOX_DEFAULT_OPENING_BALANCE,
    };
    const day = generateDay(s, "2026-11-03");
    expect(day.map((o) => [o.operation_id, o.direction, o.amount, o.payer.inn, o.payee.inn])).toEqual(
      GOLDEN_DAY,
    );
    expect(openingBalanceAt(s, "2026-11-03")).toBe(GOLDEN_OPENING);
  });

  test("a statement's operations can be iterated more than once with the same result", () => {
    const st = generateStatement(spec(2), "2026-10-01", "2026-10-05");
    expect([...st.operations]).toEqual([...st.operations]);
  });

  test("a statement is the concatenation of its days", () => {
    const s = spec(3);
    const days = isoDays("2026-10-01", "2026-10-07").flatMap((d) => generateDay(s, d));
    expect(collect(s, "2026-10-01", "2026-10-07")).toEqual(days);
  });

  test("different accounts give different data", () => {
    const a = generateDay(spec(10), "2026-11-03");
    const b = generateDay(spec(11), "2026-11-03");
    expect(a.map((o) => o.amount)).not.toEqual(b.map((o) => o.amount));
    const idsA = new Set(a.map((o) => o.operation_id));
    expect(b.some((o) => idsA.has(o.operation_id))).toBe(false);
    expect(openingBalanceAt(spec(10), "2026-11-03")).not.toBe(openingBalanceAt(spec(11), "2026-11-03"));
  });

  test("different days give different data", () => {
    const s = spec(12);
    expect(generateDay(s, "2026-11-03").map((o) => o.amount)).not.toEqual(
      generateDay(s, "2026-11-04").map((o) => o.amount),
    );
  });
});

describe("operation shape", () => {
  const s = spec(20, 40);
  const ops = collect(s, "2026-10-01", "2026-10-31");

  test("requisites: INN checksums, KPP, BIK, account keys, correspondent accounts", () => {
    expect(ops.length).toBe(31 * 40);
    for (const op of ops) {
      checkParty(op.payer);
      checkParty(op.payee);
    }
  });

  test("the statement account is the payee of credits and the payer of debits", () => {
    for (const op of ops) {
      const self = op.direction === "credit" ? op.payee : op.payer;
      const other = op.direction === "credit" ? op.payer : op.payee;
      expect(self.account).toBe(s.account_number);
      expect(self.bank_bik).toBe(s.bik);
      expect(other.account).not.toBe(s.account_number);
    }
  });

  test("amounts are positive integer kopecks, in rubles, dated on their day", () => {
    const days = new Set(isoDays("2026-10-01", "2026-10-31"));
    for (const op of ops) {
      expect(Number.isSafeInteger(op.amount)).toBe(true);
      expect(op.amount).toBeGreaterThan(0);
      expect(op.currency).toBe("RUB");
      expect(days.has(op.doc_date)).toBe(true);
      expect(op.doc_number).toMatch(/^\d{1,6}$/);
      expect(op.purpose.length).toBeGreaterThan(0);
      expect(op.purpose.length).toBeLessThanOrEqual(210);
    }
    // Most payments are between 100 and 500,000 rubles; the rest are the occasional large one.
    const ordinary = ops.filter((o) => o.amount >= 10_000 && o.amount <= 50_000_000).length;
    expect(ordinary / ops.length).toBeGreaterThan(0.85);
  });

  test("operation ids are stable in shape and unique", () => {
    const ids = ops.map((o) => o.operation_id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const op of ops) {
      expect(op.operation_id).toMatch(
        new RegExp(`^sbx-[0-9a-f]{8}-${op.doc_date.replaceAll("-", "")}-\\d{4}$`),
      );
    }
  });

  test("document types are mostly payment orders, with bank and memorial orders and payment requests", () => {
    const count = (t: string) => ops.filter((o) => o.doc_type === t).length;
    expect(count("payment_order")).toBeGreaterThan(ops.length / 2);
    expect(count("bank_order")).toBeGreaterThan(0);
    expect(count("memorial_order")).toBeGreaterThan(0);
    expect(count("payment_request")).toBeGreaterThan(0);
  });

  test("counterparties are varied companies, sole traders and people", () => {
    const names = new Set(ops.map((o) => (o.direction === "credit" ? o.payer.name : o.payee.name)));
    expect(names.size).toBeGreaterThan(50);
    const all = [...names];
    expect(all.some((n) => n.startsWith("ООО "))).toBe(true);
    expect(all.some((n) => n.startsWith("АО "))).toBe(true);
    expect(all.some((n) => n.startsWith("ИП "))).toBe(true);
  });

  test("a known holder appears as the account's party", () => {
    const holder = { name: "ООО «Ромашка»", inn: "7719617469", kpp: "771901001" };
    for (const op of generateDay({ ...s, holder }, "2026-10-10")) {
      const self = op.direction === "credit" ? op.payee : op.payer;
      expect(self.name).toBe(holder.name);
      expect(self.inn).toBe(holder.inn);
      expect(self.kpp).toBe(holder.kpp);
    }
  });

  test("an account at a bank outside the built-in list still gets valid requisites", () => {
    const bik = "044599999";
    const other = { ...spec(21, 5, bik) };
    for (const op of collect(other, "2026-10-01", "2026-10-03")) {
      checkParty(op.payer);
      checkParty(op.payee);
    }
  });
});

describe("purposes at the default volume", () => {
  test("every 31-day period has purposes with a comma, a quote, a line break and instruction-like text", () => {
    for (let serial = 30; serial < 36; serial++) {
      for (const [from, to] of [
        ["2026-10-01", "2026-10-31"],
        ["2025-02-10", "2025-03-12"],
      ] as const) {
        const purposes = collect(spec(serial), from, to).map((o) => o.purpose);
        expect(purposes.length).toBe(155);
        expect(purposes.some((p) => p.includes(","))).toBe(true);
        expect(purposes.some((p) => p.includes('"'))).toBe(true);
        expect(purposes.some((p) => p.includes("\n"))).toBe(true);
        expect(purposes.some((p) => INSTRUCTION_RE.test(p))).toBe(true);
      }
    }
  });

  test("realistic wordings occur", () => {
    const purposes = collect(spec(37, 200), "2026-11-01", "2026-11-30").map((o) => o.purpose);
    const has = (re: RegExp) => purposes.some((p) => re.test(p));
    expect(
      has(
        /^Оплата по счету № \d+ от \d{2}\.\d{2}\.\d{4} за .+\. Сумма \d+-\d{2}, в т\.ч\. НДС \(22%\) \d+-\d{2}$/,
      ),
    ).toBe(true);
    expect(has(/^Заработная плата за октябрь 2026/)).toBe(true);
    expect(has(/^Комиссия за ведение счета/)).toBe(true);
    expect(has(/^Возврат займа по договору №/)).toBe(true);
  });
});

describe("volume", () => {
  test("ops_per_day is honoured exactly on every day", () => {
    for (const n of [1, 2, 5, 37]) {
      const s = spec(40 + n, n);
      for (const d of isoDays("2026-01-25", "2026-02-05")) expect(generateDay(s, d).length).toBe(n);
      const st = generateStatement(s, "2026-01-25", "2026-02-05");
      expect(st.operations_count).toBe(12 * n);
      expect([...st.operations].length).toBe(12 * n);
    }
  });

  test("a 31-day statement at 5000 a day yields 155,000 operations one at a time", () => {
    const st = generateStatement(spec(50, 5000), "2026-10-01", "2026-10-31");
    expect(st.operations_count).toBe(155_000);
    let count = 0;
    let credit = 0;
    let debit = 0;
    for (const op of st.operations) {
      count++;
      if (op.direction === "credit") credit += op.amount;
      else debit += op.amount;
    }
    expect(count).toBe(155_000);
    expect(credit).toBe(st.total_credit);
    expect(debit).toBe(st.total_debit);
    expect(st.opening_balance + credit - debit).toBe(st.closing_balance);
  });

  test("ops_per_day outside 1..5000 and malformed inputs are rejected", () => {
    for (const n of [0, 5001, 2.5, Number.NaN]) {
      expect(() => generateDay({ ...spec(51), ops_per_day: n }, "2026-10-01")).toThrow(RangeError);
    }
    expect(() => generateDay(spec(51), "2026-02-30")).toThrow(RangeError);
    expect(() => generateDay({ ...spec(51), account_number: "123" }, "2026-10-01")).toThrow(RangeError);
    expect(() => generateDay({ ...spec(51), bik: "04452522" }, "2026-10-01")).toThrow(RangeError);
    expect(() => generateStatement(spec(51), "2026-10-02", "2026-10-01")).toThrow(RangeError);
  });
});

describe("balances", () => {
  test("opening + credits − debits = closing, and totals are the sums of the operations", () => {
    for (const n of [1, 5, 300]) {
      const s = spec(60 + n, n);
      const st = generateStatement(s, "2026-10-01", "2026-10-31");
      const ops = [...st.operations];
      const credit = ops.filter((o) => o.direction === "credit").reduce((a, o) => a + o.amount, 0);
      const debit = ops.filter((o) => o.direction === "debit").reduce((a, o) => a + o.amount, 0);
      expect(credit).toBe(st.total_credit);
      expect(debit).toBe(st.total_debit);
      expect(st.opening_balance + st.total_credit - st.total_debit).toBe(st.closing_balance);
      expect(st.opening_balance).toBe(openingBalanceAt(s, "2026-10-01"));
      expect(st.closing_balance).toBe(closingBalanceAt(s, "2026-10-31"));
    }
  });

  test("adjacent periods join: closing of one is the opening of the next day", () => {
    const s = spec(70);
    const first = generateStatement(s, "2026-09-01", "2026-09-30");
    const second = generateStatement(s, "2026-10-01", "2026-10-31");
    expect(second.opening_balance).toBe(first.closing_balance);
    expect(openingBalanceAt(s, "2026-10-01")).toBe(first.closing_balance);
    const whole = generateStatement(s, "2026-09-01", "2026-10-31");
    expect(whole.closing_balance).toBe(second.closing_balance);
    expect(whole.total_credit).toBe(first.total_credit + second.total_credit);
    expect(whole.total_debit).toBe(first.total_debit + second.total_debit);
  });

  test("each day's operations sum to that day's net", () => {
    const s = spec(71, 50);
    for (const d of isoDays("2026-03-01", "2026-03-10")) {
      const start = openingBalanceAt(s, d);
      const net = generateDay(s, d).reduce(
        (a, o) => a + (o.direction === "credit" ? o.amount : -o.amount),
        0,
      );
      expect(net).toBe(dayNet(s, d, start));
      expect(start + net).toBe(openingBalanceAt(s, nextDay(d)));
    }
  });

  test("the anchor: opening_balance holds at 2020-01-01 and before it nothing happens", () => {
    const s = spec(72);
    expect(openingBalanceAt(s, "2020-01-01")).toBe(SANDBOX_DEFAULT_OPENING_BALANCE);
    expect(openingBalanceAt(s, "2019-06-01")).toBe(SANDBOX_DEFAULT_OPENING_BALANCE);
    expect(generateDay(s, "2019-12-31")).toEqual([]);
    const across = generateStatement(s, "2019-12-30", "2020-01-02");
    expect(across.opening_balance).toBe(SANDBOX_DEFAULT_OPENING_BALANCE);
    expect(across.operations_count).toBe(10);
    expect([...across.operations].map((o) => o.doc_date)).toEqual([
      ...Array(5).fill("2020-01-01"),
      ...Array(5).fill("2020-01-02"),
    ]);
  });

  test("the balance never goes negative over 2020-01-01..2027-12-31 at 5 and 5000 a day", () => {
    const days = isoDays("2020-01-01", "2027-12-31");
    for (const n of [5, 5000]) {
      for (let serial = 80; serial < 88; serial++) {
        const s = spec(serial, n);
        let balance = SANDBOX_DEFAULT_OPENING_BALANCE;
        for (let i = 0; i < days.length; i++) {
          const d = days[i]!;
          // The running sum of cheap nets is the balance; sample it against the direct answer.
          if (i % 97 === 0) expect(openingBalanceAt(s, d)).toBe(balance);
          balance += dayNet(s, d, balance);
          expect(balance).toBeGreaterThanOrEqual(0);
        }
        expect(closingBalanceAt(s, "2027-12-31")).toBe(balance);
      }
    }
  });

  test("a zero opening balance stays non-negative too", () => {
    const s = { ...spec(90), opening_balance: 0 };
    let balance = 0;
    for (const d of isoDays("2020-01-01", "2021-12-31")) {
      balance += dayNet(s, d, balance);
      expect(balance).toBeGreaterThanOrEqual(0);
    }
  });
});

describe("other banks' BIKs", () => {
  test("an account at Alfa-Bank is keyed to Alfa-Bank's BIK", () => {
    const s = spec(95, 5, ALFA);
    for (const op of generateDay(s, "2026-10-10")) {
      const self = op.direction === "credit" ? op.payee : op.payer;
      expect(self.bank_name).toBe("АО «АЛЬФА-БАНК»");
      expect(isValidAccountKey(self.account, ALFA)).toBe(true);
    }
  });
});
