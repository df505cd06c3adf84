// lanes: sqlite postgres
// Payments to Tochka: each document goes to the bank for signing (POST /payment/v1.0/for-sign);
// the signing link is the operator's (admin pages) and never a client's; the item follows the
// bank's status until paid, canceled or rejected. And the customer's accounts seen through a login.
import { describe, expect, test } from "bun:test";
import { withAccountKey } from "../../src/formats/validators";
import { signIn } from "../helpers/admin-browser";
import { json } from "../helpers/app";
import { expectNoBankSecrets, PAYEE_ACCOUNT, PAYEE_INN, paymentFile, upload } from "../payments/support";
import { type TochkaWorld, tochkaWorlds } from "../support/tochka-world";

const worlds = tochkaWorlds();
const IMPORTS = "/api/v1/integration/payments/imports";

interface Item {
  item_id: string;
  status: string;
  error?: { code: string; message: string };
}

async function submitted(w: TochkaWorld, accountId: string, number: string) {
  // The payer's bank is Tochka (the file's own payer bank fields say so).
  const set = {
    ПлательщикБИК: "044525104",
    ПлательщикКорсчет: "30101810745374525104",
    ПлательщикБанк1: "ООО «Банк Точка»",
  };
  const docs = [
    { number: "301", amount: "1500.10", set },
    { number: "302", amount: "0.20", set },
    { number: "303", amount: "10.00", set },
  ];
  const up = await upload(w.t, w.token, accountId, paymentFile(number, docs));
  expect(up.status).toBe(201);
  const imp = await json<{ import_id: string }>(up);
  const res = await w.t.request("POST", `${IMPORTS}/${imp.import_id}/submit`, {
    token: w.token,
    body: { external_id: "batch-1" },
  });
  expect(res.status).toBe(200);
  const text = await res.text();
  expectNoBankSecrets(text);
  return { importId: imp.import_id, items: (JSON.parse(text) as { items: Item[] }).items };
}

describe("payments for signing at Tochka", () => {
  test("each document is created for signing with exact amounts; the sign link is in the admin pages only", async () => {
    const w = await worlds.start();
    const account = await w.account();
    const { importId, items } = await submitted(w, account.id, account.number);
    expect(items.map((i) => i.status)).toEqual(["submitted", "submitted", "submitted"]);

    expect(w.fake.payments.map((p) => p.document)).toEqual([
      expect.objectContaining({
        accountCode: account.number,
        bankCode: "044525104",
        counterpartyAccountNumber: PAYEE_ACCOUNT,
        counterpartyINN: PAYEE_INN,
        counterpartyBankBic: "044525593",
        paymentAmount: 1500.1,
        paymentDate: "2026-11-19",
        paymentNumber: 301,
      }),
      expect.objectContaining({ paymentAmount: 0.2, paymentNumber: 302 }),
      expect.objectContaining({ paymentAmount: 10, paymentNumber: 303 }),
    ]);
    const later = await w.t.request("GET", `${IMPORTS}/${importId}`, { token: w.token });
    expectNoBankSecrets(await later.text());

    const browser = await signIn(w.t);
    const html = await (await browser.get("/admin/payments")).text();
    for (const p of w.fake.payments) {
      expect(html).toContain(`href="${w.fake.url}/sign/${p.requestId}"`);
      expect(html).toContain(p.requestId);
    }
    expect(html).toContain("Подписать в банке");
  });

  test("the item follows the bank: paid, canceled or rejected; each change audited", async () => {
    const w = await worlds.start();
    const account = await w.account();
    const { importId } = await submitted(w, account.id, account.number);
    const poller = w.t.services.paymentStatusPoller;
    await poller.runOnce();
    const statuses = async () =>
      (await json<{ items: Item[] }>(await w.t.request("GET", `${IMPORTS}/${importId}`, { token: w.token })))
        .items;
    expect((await statuses()).map((i) => i.status)).toEqual(["submitted", "submitted", "submitted"]);

    const [first, second, third] = w.fake.payments;
    w.fake.setPaymentStatus(first!.requestId, "Paid");
    w.fake.setPaymentStatus(second!.requestId, "Rejected", [{ message: "Недостаточно средств" }]);
    w.fake.setPaymentStatus(third!.requestId, "Canceled");
    w.t.clock.advance(60_000);
    await poller.runOnce();
    const items = await statuses();
    expect(items.map((i) => i.status)).toEqual(["signed_and_paid", "rejected", "canceled"]);
    expect(items[1]!.error).toEqual({
      code: "bank_error",
      message: "Банк отклонил платёж: Недостаточно средств",
    });
    const audit = w.t.db
      .query<{ outcome: string }, []>(
        "SELECT outcome FROM audit_log WHERE action = 'payments.item.status' ORDER BY id",
      )
      .all()
      .map((r) => r.outcome);
    expect(audit).toEqual(["signed_and_paid", "rejected", "canceled"]);
    // Settled items are not asked about again.
    const calls = w.fake.requests.length;
    w.t.clock.advance(60 * 60_000);
    await poller.runOnce();
    expect(w.fake.requests.length).toBe(calls);
  });

  test("a document the bank refuses is rejected with the bank's message; the others go on", async () => {
    const w = await worlds.start();
    const account = await w.account();
    w.fake.fail({
      method: "POST",
      pathIncludes: "/for-sign",
      status: 400,
      body: {
        code: "400",
        id: "e1",
        message: "Validation error",
        Errors: [
          {
            errorCode: "Payment.Invalid",
            message: "Неверный счёт получателя",
            url: "https://enter.tochka.com",
          },
        ],
      },
    });
    const { items } = await submitted(w, account.id, account.number);
    expect(items.map((i) => i.status)).toEqual(["rejected", "submitted", "submitted"]);
    expect(items[0]!.error?.message).toBe("Банк отказал: Неверный счёт получателя");
  });
});

describe("the customer's accounts seen through a login", () => {
  test("listed with the ones already added; the chosen ones added in one step, sharing the login", async () => {
    const w = await worlds.start();
    const first = await w.account();
    // Two more accounts the customer holds at the bank, not yet in svc.
    const others = ["40702810000000000555", "40702810000000000666"];
    for (const n of others) w.fake.addAccount({ accountId: `${n}/044525104`, openingBalance: 0 });
    const listed = await w.t.admin("GET", `/banks/tochka/accounts?bank_account_id=${first.id}`);
    expect(listed.status).toBe(200);
    const { accounts } = await json<{
      accounts: { account_number: string; bank_account_id: string | null }[];
    }>(listed);
    expect(accounts.map((a) => [a.account_number, a.bank_account_id])).toEqual([
      [first.number, first.id],
      [others[0]!, null],
      [others[1]!, null],
    ]);
    expect(w.fake.requests.at(-1)?.bearer).toBe(`jwt-${first.number}`);
  });

  test("import: all or nothing; an account the bank does not show is refused; a repeat is 409", async () => {
    const w = await worlds.start();
    const first = await w.account();
    const number = withAccountKey("40702810000000000777", "044525104");
    const bankId = `${number}/044525104`;
    w.fake.addAccount({ accountId: bankId, openingBalance: 0 });
    const body = {
      bank_account_id: first.id,
      accounts: [{ account_number: number, bik: "044525104", alias: "second" }],
    };
    const added = await w.t.admin("POST", "/banks/tochka/accounts/import", body);
    expect(added.status).toBe(201);
    const view = (await json<{ bank_accounts: Record<string, unknown>[] }>(added)).bank_accounts[0]!;
    expect(view).toMatchObject({
      bank: "tochka",
      alias: "second",
      environment: "production",
      credentials_status: "active",
    });
    const accounts = w.t.services.accounts;
    expect(accounts.findById(view.bank_account_id as string)?.connectionId).toBe(
      accounts.findById(first.id)?.connectionId,
    );
    // The new account works through the same login.
    const res = await w.t.admin("POST", `/bank-accounts/${view.bank_account_id}/balance/refresh`);
    expect(res.status).toBe(200);

    expect((await w.t.admin("POST", "/banks/tochka/accounts/import", body)).status).toBe(409);
    const unknown = await w.t.admin("POST", "/banks/tochka/accounts/import", {
      bank_account_id: first.id,
      accounts: [{ account_number: "40702810000000000888", bik: "044525104" }],
    });
    expect(unknown.status).toBe(400);
    expect((await w.t.admin("GET", `/banks/sandbox/accounts?bank_account_id=${first.id}`)).status).toBe(400);

    // The entry checks of an account added by hand (decisions §19): the control key, the alias.
    const valid = withAccountKey("40702810000000000999", "044525104");
    const wrongKey = `${valid.slice(0, 8)}${(Number(valid[8]) + 1) % 10}${valid.slice(9)}`;
    for (const n of [valid, wrongKey]) w.fake.addAccount({ accountId: `${n}/044525104`, openingBalance: 0 });
    const importing = (account_number: string, alias: string) =>
      w.t.admin("POST", "/banks/tochka/accounts/import", {
        bank_account_id: first.id,
        accounts: [{ account_number, bik: "044525104", alias }],
      });
    const badKey = await json<{ error: { code: string; details: { field: string } } }>(
      await importing(wrongKey, "third"),
    );
    expect(badKey.error).toMatchObject({
      code: "validation_error",
      details: { field: "accounts[0].account_number" },
    });
    const taken = await json<{ error: { code: string; details: { field: string } } }>(
      await importing(valid, "second"),
    );
    expect(taken.error).toMatchObject({ code: "conflict", details: { field: "accounts[0].alias" } });
  });

  test("the admin pages list them and add the ticked ones", async () => {
    const w = await worlds.start();
    const first = await w.account();
    const number = "40702810000000000999";
    w.fake.addAccount({ accountId: `${number}/044525104`, openingBalance: 0 });
    const browser = await signIn(w.t);
    const page = await (await browser.get(`/admin/accounts/${first.id}/discover`)).text();
    expect(page).toContain(number);
    expect(page).toContain(`name="add_${number}_044525104"`);
    const res = await browser.post(`/admin/accounts/${first.id}/import`, {
      [`add_${number}_044525104`]: "on",
    });
    expect(res.status).toBe(303);
    expect(w.t.services.accounts.findByNumber(number, "044525104")).not.toBeNull();
  });
});
