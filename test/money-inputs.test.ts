// lanes: sqlite postgres
// Every amount svc takes from outside is a safe integer of kopecks or a 400 validation_error that
// names the field (docs/security.md, "Money inputs"): the admin API's and `svc admin`'s sandbox
// opening balance, the agent tools' amount filters, the amounts of payment files and of imported
// statement files, and the totals of those files.
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { withAccountKey } from "../src/formats/validators";
import { signIn } from "./helpers/admin-browser";
import { BASE, json, makeTestApp, type TestApp } from "./helpers/app";
import { expectError } from "./helpers/envelope";
import { svcAdmin, svcAdminRun, tempDir } from "./helpers/server";
import { callTool, initSession, MCP, readyStatement, type ToolResultBody } from "./mcp/helpers";
import { paymentFile, paymentTableCounts, upload } from "./payments/support";
import { bankFile, importFile, storedCounts } from "./statements/import-support";

/** JSON numbers that are no amount of kopecks: beyond the safe integers, too precise, negative. */
const BAD_RUBLES = [1e308, 1e21, 1e17, 90071992547409.92, 0.001, 1e-7, 0.1 + 0.2, -1, -0];

interface AccountBody {
  bank_account_id: string;
  sandbox: { ops_per_day: number; opening_balance: number } | null;
}

describe("sandbox opening balance (admin API)", () => {
  function create(t: TestApp, companyId: string, opening: unknown, n: number) {
    return t.admin("POST", "/bank-accounts", {
      company_id: companyId,
      bank: "sandbox",
      account_number: withAccountKey(`4070281000000000${String(1000 + n)}`.slice(0, 20), "044525225"),
      bik: "044525225",
      alias: `a${n}`,
      sandbox: { opening_balance: opening },
    });
  }

  test("1e308 and every other non-amount is 400 naming sandbox.opening_balance; nothing is stored and the lists still answer", async () => {
    const t = makeTestApp();
    const company = t.fixtures.company();
    let n = 0;
    // -0 is zero: a valid opening balance, so it is left out here.
    for (const opening of [...BAD_RUBLES.filter((v) => !Object.is(v, -0)), 1_000_000_000_000.01]) {
      n += 1;
      const details = await expectError(
        await create(t, company.company_id, opening, n),
        400,
        "validation_error",
      );
      expect({ opening, field: details.field }).toEqual({ opening, field: "sandbox.opening_balance" });
    }
    const list = await t.admin("GET", "/bank-accounts");
    expect(list.status).toBe(200);
    expect((await json<{ bank_accounts: unknown[] }>(list)).bank_accounts).toEqual([]);
    expect((await t.admin("GET", "/companies")).status).toBe(200);
  });

  test("amounts with at most two decimals up to 1 000 000 000 000.00 are stored exactly", async () => {
    const t = makeTestApp();
    const company = t.fixtures.company();
    let n = 100;
    for (const opening of [0, 1234.56, 0.07, 1_000_000_000_000]) {
      n += 1;
      const res = await create(t, company.company_id, opening, n);
      expect(res.status).toBe(201);
      expect((await json<AccountBody>(res)).sandbox?.opening_balance).toBe(opening);
    }
    const list = await json<{ bank_accounts: AccountBody[] }>(await t.admin("GET", "/bank-accounts"));
    expect(list.bank_accounts.map((a) => a.sandbox?.opening_balance)).toEqual([
      0, 1234.56, 0.07, 1_000_000_000_000,
    ]);
  });
});

describe("svc admin account create --opening-balance", () => {
  test("1e308 is refused naming the field, and nothing is stored", async () => {
    const dbPath = join(tempDir(), "svc.db");
    const company = await svcAdmin(dbPath, [
      "company",
      "create",
      "--name",
      "ООО Тест",
      "--inn",
      "7719617469",
    ]);
    const companyId = (JSON.parse(company) as { company_id: string }).company_id;
    for (const bad of ["1e308", "-5"]) {
      const run = await svcAdminRun(dbPath, [
        ...["account", "create", "--company", companyId, "--bank", "sandbox"],
        ...["--number", withAccountKey("40702810900000000001", "044525225"), "--bik", "044525225"],
        `--opening-balance=${bad}`,
      ]);
      expect({ bad, code: run.code, error: JSON.parse(run.err).error }).toMatchObject({
        bad,
        code: 1,
        error: { code: "validation_error", details: { field: "sandbox.opening_balance" } },
      });
    }
    expect(JSON.parse(await svcAdmin(dbPath, ["account", "list"]))).toEqual({ bank_accounts: [] });
  });
});

describe("agent tools: search_operations amount_min / amount_max", () => {
  test("a non-amount is a validation_error naming the argument, over MCP and over the relay's REST path", async () => {
    const t = makeTestApp();
    const w = t.fixtures.world({ purpose: "mcp" });
    const accountId = w.account.bank_account_id;
    await readyStatement(t, accountId, "2026-11-01", "2026-11-10");
    const session = await initSession(t, w.token);
    const base = { bank_account_id: accountId, date_from: "2026-11-01", date_to: "2026-11-10" };
    for (const field of ["amount_min", "amount_max"]) {
      for (const value of BAD_RUBLES.filter((v) => !Object.is(v, -0))) {
        const viaMcp = await callTool(t, w.token, session, "search_operations", { ...base, [field]: value });
        const res = await t.request("POST", `${MCP}/tools/search_operations/call`, {
          token: w.token,
          headers: { "x-mcp-session-id": crypto.randomUUID() },
          body: { arguments: { ...base, [field]: value } },
        });
        expect(res.status).toBe(200);
        const viaRelay = (await res.json()) as ToolResultBody;
        for (const r of [viaMcp, viaRelay]) {
          expect(r.isError).toBe(true);
          // A tool-level error names the argument first in its message.
          const error = r.structuredContent.error as { code: string; message: string };
          expect({ field, value, code: error.code, at: error.message.split(":")[0] }).toEqual({
            field,
            value,
            code: "validation_error",
            at: field,
          });
        }
      }
    }
    // A valid filter still answers.
    const ok = await callTool(t, w.token, session, "search_operations", {
      ...base,
      amount_min: 0.01,
      amount_max: 1e12,
    });
    expect(ok.isError).toBe(false);
  });
});

describe("payment files: Сумма", () => {
  test("an amount beyond the safe integers of kopecks, in exponent form or with three decimals is 400 naming Сумма", async () => {
    const t = makeTestApp();
    const w = t.fixtures.world({ send: true });
    const number = t.services.accounts.findById(w.account.bank_account_id)?.accountNumber as string;
    const before = paymentTableCounts(t);
    for (const amount of [
      "90071992547409.92",
      "1e308",
      "99999999999999999999999",
      "Infinity",
      "1.005",
      "-10.00",
    ]) {
      const res = await upload(t, w.token, w.account.bank_account_id, paymentFile(number, [{ amount }]));
      const details = await expectError(res, 400, "validation_error");
      expect({ amount, field: details.field }).toEqual({ amount, field: "Сумма" });
    }
    expect(paymentTableCounts(t)).toEqual(before);
  });
});

describe("statement files: amounts and totals", () => {
  function fileWorld(t: TestApp) {
    const company = t.fixtures.company();
    const account = t.fixtures.account(company.company_id, "file");
    const token = t.fixtures.token(company.company_id, {
      mode: "live",
      accounts: [{ bank_account_id: account.bank_account_id, allow_read_statements: true }],
      rate_limit_per_minute: 10_000,
    });
    const number = t.services.accounts.findById(account.bank_account_id)?.accountNumber as string;
    return { accountId: account.bank_account_id, number, token: token.token };
  }

  /** The file without its declared totals, each document's Сумма replaced. */
  const withAmounts = (amount: string) => (text: string) =>
    text
      .replace(/^(ВсегоПоступило|ВсегоСписано|КонечныйОстаток)=[^\r]*\r\n/gm, "")
      .replace(/^Сумма=[^\r]*$/gm, `Сумма=${amount}`);

  async function refused(t: TestApp, w: ReturnType<typeof fileWorld>, bytes: Uint8Array, field: string) {
    const before = storedCounts(t);
    const details = await expectError(
      await importFile(t, w.token, w.accountId, "big", bytes),
      400,
      "validation_error",
    );
    expect(details.key ?? details.field).toBe(field);
    expect(storedCounts(t)).toEqual(before);
  }

  test("a Сумма beyond the safe integers is 400 naming Сумма", async () => {
    const t = makeTestApp();
    const w = fileWorld(t);
    for (const amount of ["90071992547409.92", "1e308"]) {
      const file = bankFile(w.number, "2026-11-01", "2026-11-10", { reshape: withAmounts(amount) });
      await refused(t, w, file.bytes, "Сумма");
    }
  });

  test("documents whose sum leaves the safe integers are 400 naming Сумма, not a 500 on the next export", async () => {
    const t = makeTestApp();
    const w = fileWorld(t);
    // Every document at the largest amount there is: two of one direction already overflow.
    const file = bankFile(w.number, "2026-11-01", "2026-11-10", {
      reshape: withAmounts("90071992547409.91"),
    });
    await refused(t, w, file.bytes, "Сумма");
  });

  test("the admin pages' import of the same file is refused too (400), and stores nothing", async () => {
    const t = makeTestApp();
    const w = fileWorld(t);
    const b = await signIn(t);
    const file = bankFile(w.number, "2026-11-01", "2026-11-10", {
      reshape: withAmounts("90071992547409.91"),
    });
    const form = new FormData();
    form.append("_csrf", b.csrf);
    form.append("bank_account_id", w.accountId);
    form.append("file", new Blob([file.bytes as Uint8Array<ArrayBuffer>]), "kl_to_1c.txt");
    const before = storedCounts(t);
    const res = await t.app.handle(
      new Request(`${BASE}/admin/statements/import`, {
        method: "POST",
        headers: { cookie: b.cookie, origin: BASE },
        body: form,
      }),
    );
    expect(res.status).toBe(400);
    expect(await res.text()).toContain("сумма документов слишком велика");
    expect(storedCounts(t)).toEqual(before);
  });

  test("an opening balance beyond the safe integers is 400 naming НачальныйОстаток", async () => {
    const t = makeTestApp();
    const w = fileWorld(t);
    for (const opening of ["1e308", "-90071992547409.92"]) {
      const file = bankFile(w.number, "2026-11-01", "2026-11-10", {
        reshape: (text) => text.replace(/^НачальныйОстаток=[^\r]*$/m, `НачальныйОстаток=${opening}`),
      });
      await refused(t, w, file.bytes, "НачальныйОстаток");
    }
  });

  test("an opening balance whose closing balance leaves the safe integers is 400 naming НачальныйОстаток", async () => {
    const t = makeTestApp();
    const w = fileWorld(t);
    const probe = bankFile(w.number, "2026-11-01", "2026-11-10");
    const credits = probe.operations
      .filter((op) => op.direction === "credit")
      .reduce((s, op) => s + op.amount, 0);
    const debits = probe.operations
      .filter((op) => op.direction === "debit")
      .reduce((s, op) => s + op.amount, 0);
    // Safe itself, but opening + credits − debits is not (the generator's days move money both ways).
    const opening = credits >= debits ? "90071992547409.91" : "-90071992547409.91";
    const exact = bankFile(w.number, "2026-11-01", "2026-11-10", {
      reshape: (text) =>
        text
          .replace(/^(ВсегоПоступило|ВсегоСписано|КонечныйОстаток)=[^\r]*\r\n/gm, "")
          .replace(/^НачальныйОстаток=[^\r]*$/m, `НачальныйОстаток=${opening}`),
    });
    expect(credits).not.toBe(debits);
    await refused(t, w, exact.bytes, "НачальныйОстаток");
  });
});
