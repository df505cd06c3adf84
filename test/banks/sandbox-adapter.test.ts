// lanes: sqlite
import { describe, expect, test } from "bun:test";
import {
  type BankAccountRef,
  BankError,
  BankNotSupportedError,
  type PaymentOrder,
  type ReadyStatement,
  UnknownBankError,
} from "../../src/banks/adapter";
import { BankRegistry, createSandboxRegistry } from "../../src/banks/registry";
import {
  isSandboxBank,
  SANDBOX_BANK,
  SANDBOX_FAILING_BANK,
  SANDBOX_NO_STATEMENTS_BANK,
  SandboxBankAdapter,
} from "../../src/banks/sandbox/adapter";
import {
  closingBalanceAt,
  generateStatement,
  SANDBOX_DEFAULT_OPENING_BALANCE,
  SANDBOX_DEFAULT_OPS_PER_DAY,
} from "../../src/banks/sandbox/generator";
import { InMemorySandboxRequestLog } from "../../src/banks/sandbox/request-log";
import { ManualClock } from "../../src/core/clock";
import { isValidAccountKey, isValidInn, withAccountKey } from "../../src/formats/validators";

const BIK = "044525225";
const NOW = "2026-11-20T21:30:00Z";

function setup(today?: () => string) {
  const clock = new ManualClock(NOW);
  const log = new InMemorySandboxRequestLog();
  const registry = createSandboxRegistry(today === undefined ? { clock, log } : { clock, log, today });
  return { clock, log, registry };
}

function account(bank: string, overrides: Partial<BankAccountRef> = {}): BankAccountRef {
  return {
    bank_account_id: `ba_${bank}`,
    bank,
    account_number: withAccountKey("40702810000000054321", BIK),
    bik: BIK,
    currency: "RUB",
    sandbox: { ops_per_day: 7, opening_balance: 50_000_000 },
    environment: "production",
    connection_id: null,
    credentials: null,
    ...overrides,
  };
}

const PERIOD = { date_from: "2026-11-01", date_to: "2026-11-20" };

const PAYMENT: PaymentOrder = {
  doc_number: "118",
  doc_date: "2026-11-20",
  amount: 1_234_567,
  currency: "RUB",
  purpose: "Оплата по счету № 5 от 18.11.2026. НДС не облагается",
  payee: {
    name: "ООО «Ромашка»",
    inn: "7719617469",
    kpp: "771901001",
    account: withAccountKey("40702810000000099999", "044525593"),
    bank_bik: "044525593",
  },
};

describe("registry", () => {
  test("registers the three sandbox banks", () => {
    const { registry } = setup();
    expect(registry.names()).toEqual([SANDBOX_BANK, SANDBOX_FAILING_BANK, SANDBOX_NO_STATEMENTS_BANK]);
    expect(registry.names()).toEqual(["sandbox", "sandbox_failing", "sandbox_no_statements"]);
    for (const name of registry.names()) {
      expect(registry.get(name).bank).toBe(name);
      expect(registry.has(name)).toBe(true);
      expect(isSandboxBank(name)).toBe(true);
    }
    expect(isSandboxBank("sberbank")).toBe(false);
  });

  test("an unknown bank throws UnknownBankError", () => {
    const { registry } = setup();
    expect(registry.has("nope")).toBe(false);
    expect(() => registry.get("nope")).toThrow(UnknownBankError);
  });

  test("registering a bank twice is refused", () => {
    const { clock, log } = setup();
    const adapter = new SandboxBankAdapter("x", { statements: "ready", payments: "accept" }, { clock, log });
    const registry = new BankRegistry([adapter]);
    expect(() => registry.register(adapter)).toThrow();
    expect(registry.names()).toEqual(["x"]);
  });
});

describe("sandbox", () => {
  test("orders a statement, logs it, and has it ready at the first poll", async () => {
    const { registry, log } = setup();
    const bank = registry.get("sandbox");
    const acc = account("sandbox");
    expect(bank.supportsStatements).toBe(true);
    const { bank_request_id } = await bank.requestStatement(acc, PERIOD, "stmt_1");
    expect(bank_request_id).toMatch(/^sbx-req-/);
    expect(log.entries).toEqual([
      {
        at: new Date(NOW),
        bank_account_id: acc.bank_account_id,
        kind: "statement_request",
        date_from: PERIOD.date_from,
        date_to: PERIOD.date_to,
        client_ref: "stmt_1",
      },
    ]);

    const result = await bank.pollStatement(acc, bank_request_id, PERIOD);
    expect(result.status).toBe("ready");
    const ready = result as ReadyStatement;
    const ops = [...ready.operations];
    expect(ops.length).toBe(20 * 7);
    const expected = generateStatement(
      { account_number: acc.account_number, bik: BIK, ops_per_day: 7, opening_balance: 50_000_000 },
      PERIOD.date_from,
      PERIOD.date_to,
    );
    expect(ops).toEqual([...expected.operations]);
    expect(ready.opening_balance).toBe(expected.opening_balance);
    expect(ready.closing_balance).toBe(expected.closing_balance);
    expect(ready.opening_balance + ready.total_credit - ready.total_debit).toBe(ready.closing_balance);
    for (const op of ops) {
      for (const p of [op.payer, op.payee]) {
        expect(isValidInn(p.inn)).toBe(true);
        expect(isValidAccountKey(p.account, p.bank_bik)).toBe(true);
      }
    }
    expect(log.entries[1]).toEqual({
      at: new Date(NOW),
      bank_account_id: acc.bank_account_id,
      kind: "statement_poll",
      date_from: PERIOD.date_from,
      date_to: PERIOD.date_to,
      client_ref: null,
    });
  });

  test("bank request ids differ between orders", async () => {
    const { registry, clock } = setup();
    const bank = registry.get("sandbox");
    const a = await bank.requestStatement(account("sandbox"), PERIOD, "stmt_1");
    const b = await bank.requestStatement(account("sandbox"), PERIOD, "stmt_1");
    clock.advance(1000);
    const c = await bank.requestStatement(account("sandbox"), PERIOD, "stmt_2");
    expect(new Set([a.bank_request_id, b.bank_request_id, c.bank_request_id]).size).toBe(3);
  });

  test("the same period polled twice gives the same statement", async () => {
    const { registry } = setup();
    const bank = registry.get("sandbox");
    const acc = account("sandbox");
    const one = (await bank.pollStatement(acc, "r1", PERIOD)) as ReadyStatement;
    const two = (await bank.pollStatement(acc, "r2", PERIOD)) as ReadyStatement;
    expect([...one.operations]).toEqual([...two.operations]);
    expect(one.closing_balance).toBe(two.closing_balance);
  });

  test("an account without sandbox settings uses the defaults", async () => {
    const { registry } = setup();
    const acc = account("sandbox", { sandbox: null });
    const ready = (await registry.get("sandbox").pollStatement(acc, "r", PERIOD)) as ReadyStatement;
    expect([...ready.operations].length).toBe(20 * SANDBOX_DEFAULT_OPS_PER_DAY);
    const expected = generateStatement(
      {
        account_number: acc.account_number,
        bik: BIK,
        ops_per_day: SANDBOX_DEFAULT_OPS_PER_DAY,
        opening_balance: SANDBOX_DEFAULT_OPENING_BALANCE,
      },
      PERIOD.date_from,
      PERIOD.date_to,
    );
    expect(ready.closing_balance).toBe(expected.closing_balance);
  });

  test("the account holder, when given, appears in the operations", async () => {
    const { registry } = setup();
    const holder = { name: "ООО «Ромашка»", inn: "7719617469", kpp: "771901001" };
    const ready = (await registry
      .get("sandbox")
      .pollStatement(account("sandbox", { holder }), "r", PERIOD)) as ReadyStatement;
    for (const op of ready.operations) {
      expect((op.direction === "credit" ? op.payee : op.payer).name).toBe(holder.name);
    }
  });

  test("a malformed period is refused without retry", async () => {
    const { registry } = setup();
    const bank = registry.get("sandbox");
    const bad = { date_from: "2026-11-20", date_to: "2026-11-01" };
    const err = await bank.requestStatement(account("sandbox"), bad, "s").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BankError);
    expect((err as BankError).code).toBe("invalid_request");
    expect((err as BankError).retryable).toBe(false);
    await expect(bank.pollStatement(account("sandbox"), "r", bad)).rejects.toBeInstanceOf(BankError);
    const badAccount = account("sandbox", { sandbox: { ops_per_day: 0, opening_balance: 0 } });
    await expect(bank.pollStatement(badAccount, "r", PERIOD)).rejects.toBeInstanceOf(BankError);
  });

  test("accepts payments with a reference and a signing link, deterministic per idempotency key", async () => {
    const { registry, log } = setup();
    const bank = registry.get("sandbox");
    const acc = account("sandbox");
    const first = await bank.submitPayment(acc, PAYMENT, "imp_1:item_1");
    const again = await bank.submitPayment(acc, PAYMENT, "imp_1:item_1");
    const other = await bank.submitPayment(acc, PAYMENT, "imp_1:item_2");
    if (first.status !== "accepted" || again.status !== "accepted" || other.status !== "accepted") {
      throw new Error("expected accepted payments");
    }
    expect(first.bank_reference).toMatch(/^SBX-[0-9A-F]{16}$/);
    expect(first.sign_url).toBe(`https://sandbox.bank.invalid/sign/${first.bank_reference}`);
    expect(again.bank_reference).toBe(first.bank_reference);
    expect(other.bank_reference).not.toBe(first.bank_reference);
    expect(log.entries.map((e) => [e.kind, e.client_ref, e.date_from, e.date_to])).toEqual([
      ["payment_submit", "imp_1:item_1", null, null],
      ["payment_submit", "imp_1:item_1", null, null],
      ["payment_submit", "imp_1:item_2", null, null],
    ]);
  });

  test("rejects a payment whose amount is not positive kopecks", async () => {
    const { registry } = setup();
    const result = await registry
      .get("sandbox")
      .submitPayment(account("sandbox"), { ...PAYMENT, amount: 0 }, "k");
    expect(result.status).toBe("rejected");
  });
});

describe("balances", () => {
  test("the balance is the end-of-today balance and as_of is the clock's now", async () => {
    const { registry, log } = setup(() => "2026-11-21");
    const acc = account("sandbox");
    const spec = {
      account_number: acc.account_number,
      bik: BIK,
      ops_per_day: 7,
      opening_balance: 50_000_000,
    };
    const result = await registry.get("sandbox").getBalance(acc);
    expect(result.as_of).toEqual(new Date(NOW));
    expect(result.balance).toBe(closingBalanceAt(spec, "2026-11-21"));
    // Same number as a statement ending today.
    expect(result.balance).toBe(generateStatement(spec, "2026-11-01", "2026-11-21").closing_balance);
    expect(log.entries).toEqual([
      {
        at: new Date(NOW),
        bank_account_id: acc.bank_account_id,
        kind: "balance",
        date_from: null,
        date_to: null,
        client_ref: null,
      },
    ]);
  });

  test("without a today function the clock's UTC date is today", async () => {
    const { registry } = setup();
    const acc = account("sandbox");
    const spec = {
      account_number: acc.account_number,
      bik: BIK,
      ops_per_day: 7,
      opening_balance: 50_000_000,
    };
    expect((await registry.get("sandbox").getBalance(acc)).balance).toBe(
      closingBalanceAt(spec, "2026-11-20"),
    );
  });

  test("balances work on all three banks and move with the date", async () => {
    let today = "2026-11-20";
    const { registry } = setup(() => today);
    for (const name of registry.names()) {
      const acc = account(name);
      const before = await registry.get(name).getBalance(acc);
      expect(Number.isSafeInteger(before.balance)).toBe(true);
      expect(before.balance).toBeGreaterThanOrEqual(0);
      today = "2026-11-21";
      const after = await registry.get(name).getBalance(acc);
      expect(after.balance).not.toBe(before.balance);
      today = "2026-11-20";
    }
  });
});

describe("sandbox_failing", () => {
  test("every statement fails with bank_error at the first poll", async () => {
    const { registry, log } = setup();
    const bank = registry.get("sandbox_failing");
    const acc = account("sandbox_failing");
    expect(bank.supportsStatements).toBe(true);
    const { bank_request_id } = await bank.requestStatement(acc, PERIOD, "stmt_9");
    const result = await bank.pollStatement(acc, bank_request_id, PERIOD);
    expect(result.status).toBe("failed");
    if (result.status !== "failed") throw new Error("unreachable");
    expect(result.error.code).toBe("bank_error");
    expect(result.error.message.length).toBeGreaterThan(0);
    expect(log.entries.map((e) => e.kind)).toEqual(["statement_request", "statement_poll"]);
  });

  test("payments are rejected with bank_error", async () => {
    const { registry, log } = setup();
    const result = await registry
      .get("sandbox_failing")
      .submitPayment(account("sandbox_failing"), PAYMENT, "k1");
    expect(result).toEqual({
      status: "rejected",
      error: { code: "bank_error", message: expect.any(String) },
    });
    expect(log.entries.map((e) => [e.kind, e.client_ref])).toEqual([["payment_submit", "k1"]]);
  });
});

describe("sandbox_no_statements", () => {
  test("does not support statements: ordering throws BankNotSupportedError", async () => {
    const { registry, log } = setup();
    const bank = registry.get("sandbox_no_statements");
    const acc = account("sandbox_no_statements");
    expect(bank.supportsStatements).toBe(false);
    const err = await bank.requestStatement(acc, PERIOD, "stmt_1").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BankNotSupportedError);
    expect((err as BankNotSupportedError).code).toBe("bank_not_supported");
    await expect(bank.pollStatement(acc, "r", PERIOD)).rejects.toBeInstanceOf(BankNotSupportedError);
    expect(log.entries).toEqual([]);
  });

  test("accepts payments", async () => {
    const { registry } = setup();
    const result = await registry
      .get("sandbox_no_statements")
      .submitPayment(account("sandbox_no_statements"), PAYMENT, "k1");
    expect(result.status).toBe("accepted");
  });
});

describe("request log", () => {
  test("keeps entries per account, copied", () => {
    const log = new InMemorySandboxRequestLog();
    const entry = {
      at: new Date(NOW),
      bank_account_id: "a",
      kind: "balance" as const,
      date_from: null,
      date_to: null,
      client_ref: null,
    };
    log.record(entry);
    log.record({ ...entry, bank_account_id: "b" });
    entry.bank_account_id = "changed";
    expect(log.forAccount("a").length).toBe(1);
    expect(log.forAccount("b").length).toBe(1);
    log.clear();
    expect(log.entries).toEqual([]);
  });
});
