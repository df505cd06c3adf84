// lanes: sqlite postgres
// Text that storage would change is refused, never merged (docs/security.md, "Decided and left as
// they are"): UTF-8 cannot hold a lone surrogate, so "\ud800", "\ud801" and "\udc00" would all be
// stored as U+FFFD and three idempotency keys would name one statement. Every external_id (orders,
// imports, payment submissions) and the admin API's names answer 400 validation_error instead.
import { describe, expect, test } from "bun:test";
import { json, makeTestApp } from "./helpers/app";
import { expectError } from "./helpers/envelope";
import { bodyOf, paymentFile, paymentTableCounts, upload } from "./payments/support";
import { bankFile, importFile, storedCounts } from "./statements/import-support";

const LONE = ["\ud800", "a\ud801", "\udc00b"];
const STATEMENTS = "/api/v1/integration/statements";

async function refusedAt(res: Response, field: string): Promise<void> {
  const details = await expectError(res, 400, "validation_error");
  expect(details.field).toBe(field);
}

describe("external_id with a lone surrogate or U+FFFD", () => {
  test("statement orders: three ids that storage would make one are each refused; a surrogate pair is fine", async () => {
    const t = makeTestApp();
    const w = t.fixtures.world();
    const order = (external_id: string) =>
      t.request("POST", STATEMENTS, {
        token: w.token,
        body: {
          bank_account_id: w.account.bank_account_id,
          external_id,
          date_from: "2026-11-01",
          date_to: "2026-11-10",
        },
      });
    const before = storedCounts(t).statements;
    for (const id of [...LONE, "\uFFFD"]) await refusedAt(await order(id), "external_id");
    expect(storedCounts(t).statements).toBe(before);

    // Characters outside the BMP (a well-formed pair) are ordinary text: two ids, two statements.
    const a = await json<{ statement_id: string; external_id: string }>(await order("счёт-𝟘"));
    const b = await json<{ statement_id: string; external_id: string }>(await order("счёт-𝟙"));
    expect(a.external_id).toBe("счёт-𝟘");
    expect(a.statement_id).not.toBe(b.statement_id);
  });

  test("statement imports: an external_id that arrives as U+FFFD is refused and nothing is stored", async () => {
    const t = makeTestApp();
    const company = t.fixtures.company();
    const account = t.fixtures.account(company.company_id, "file");
    const token = t.fixtures.token(company.company_id, {
      mode: "live",
      accounts: [{ bank_account_id: account.bank_account_id, allow_read_statements: true }],
    });
    const number = t.services.accounts.findById(account.bank_account_id)?.accountNumber as string;
    const file = bankFile(number, "2026-11-01", "2026-11-10");
    const before = storedCounts(t);
    // A multipart field is UTF-8 bytes: a lone surrogate is sent (and arrives) as U+FFFD.
    for (const id of [...LONE, "\uFFFD"]) {
      await refusedAt(
        await importFile(t, token.token, account.bank_account_id, id, file.bytes),
        "external_id",
      );
    }
    expect(storedCounts(t)).toEqual(before);
  });

  test("payment submissions: an import and an item submitted with such a key are refused and nothing is sent", async () => {
    const t = makeTestApp();
    const w = t.fixtures.world({ send: true });
    const accountId = w.account.bank_account_id;
    const number = t.services.accounts.findById(accountId)?.accountNumber as string;
    const imp = await bodyOf<{ import_id: string; items: { item_id: string }[] }>(
      await upload(t, w.token, accountId, paymentFile(number, [{ number: "201" }])),
    );
    const path = `/api/v1/integration/payments/imports/${imp.import_id}`;
    const before = paymentTableCounts(t);
    for (const id of [...LONE, "\uFFFD"]) {
      const body = { external_id: id };
      await refusedAt(await t.request("POST", `${path}/submit`, { token: w.token, body }), "external_id");
      const item = `${path}/items/${imp.items[0]!.item_id}/submit`;
      await refusedAt(await t.request("POST", item, { token: w.token, body }), "external_id");
    }
    expect(paymentTableCounts(t)).toEqual(before);
  });
});

describe("admin API names with a lone surrogate", () => {
  test("a company's and a token's name are refused naming the field", async () => {
    const t = makeTestApp();
    for (const name of LONE) {
      await refusedAt(await t.admin("POST", "/companies", { name, inn: "7719617469" }), "name");
    }
    const company = t.fixtures.company();
    const create = (name: string) =>
      t.admin("POST", "/tokens", { company_id: company.company_id, name, purpose: "integration" });
    for (const name of LONE) await refusedAt(await create(name), "name");
    const token = await json<{ api_token_id: string }>(await create("ok"));
    await refusedAt(await t.admin("PATCH", `/tokens/${token.api_token_id}`, { name: "\ud83d" }), "name");
    // U+FFFD and pairs are ordinary text in a name.
    expect((await t.admin("POST", "/companies", { name: "ООО «�» 😀", inn: "7719617469" })).status).toBe(201);
  });
});
