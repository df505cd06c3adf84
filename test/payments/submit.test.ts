// lanes: sqlite postgres
// Submitting imports and items: results, idempotent repeats (one bank call), 409 on another
// payload, rejections by sandbox_failing, and recovery of a submission cut off mid-way.
import { describe, expect, test } from "bun:test";
import type { BankAdapter } from "../../src/banks/adapter";
import { BankError } from "../../src/banks/adapter";
import { makeTestApp, type TestApp } from "../helpers/app";
import { expectError } from "../helpers/envelope";
import {
  bodyOf,
  expectNoBankSecrets,
  paymentFile,
  paymentSubmits,
  recordResponses,
  seenBodies,
  upload,
} from "./support";

interface Item {
  item_id: string;
  status: string;
  doc_number: string;
  error?: { code: string; message: string };
  submitted_at?: string;
}
interface Import {
  import_id: string;
  status: string;
  items: Item[];
}

const BASE_PATH = "/api/v1/integration/payments/imports";

async function setup(opts: { bank?: string; docs?: number } = {}) {
  const t = makeTestApp();
  recordResponses(t);
  const w = t.fixtures.world({ send: true, bank: opts.bank });
  const accountId = w.account.bank_account_id;
  const accountNumber = t.services.accounts.findById(accountId)!.accountNumber;
  const docs = Array.from({ length: opts.docs ?? 2 }, (_, i) => ({ number: String(201 + i) }));
  const res = await upload(t, w.token, accountId, paymentFile(accountNumber, docs));
  expect(res.status).toBe(201);
  const imp = await bodyOf<Import>(res);
  const submitImport = (externalId: unknown, token = w.token, id = imp.import_id) =>
    t.request("POST", `${BASE_PATH}/${id}/submit`, { token, body: { external_id: externalId } });
  const submitItem = (itemId: string, externalId: unknown, token = w.token) =>
    t.request("POST", `${BASE_PATH}/${imp.import_id}/items/${itemId}/submit`, {
      token,
      body: { external_id: externalId },
    });
  const get = () => t.request("GET", `${BASE_PATH}/${imp.import_id}`, { token: w.token });
  return { t, ...w, accountId, accountNumber, imp, submitImport, submitItem, get };
}

function itemRows(t: TestApp) {
  return t.db
    .query<
      {
        id: string;
        status: string;
        bank_reference: string | null;
        sign_url: string | null;
        bank_idempotency_key: string;
      },
      []
    >("SELECT id, status, bank_reference, sign_url, bank_idempotency_key FROM payment_items ORDER BY seq")
    .all();
}

describe("submit an import", () => {
  test("submits every draft; a repeat returns the first result with no second bank call", async () => {
    const { t, accountId, imp, submitImport, get } = await setup();
    const res = await submitImport("  batch-1  ");
    expect(res.status).toBe(200);
    const first = await bodyOf<Import>(res);
    expect(first.import_id).toBe(imp.import_id);
    expect(first.status).toBe("submitted");
    expect(first.items.map((i) => i.status)).toEqual(["submitted", "submitted"]);
    expect(first.items[0]!.submitted_at).toBe("2026-11-20T09:00:00.000Z");
    expect(paymentSubmits(t, accountId)).toHaveLength(2);

    // The bank's reference and signing URL are stored, never returned.
    const rows = itemRows(t);
    expect(
      rows.every((r) => r.bank_reference?.startsWith("SBX-") && r.sign_url?.includes(r.bank_reference)),
    ).toBe(true);
    // The bank saw each item under its own stable idempotency key.
    expect(paymentSubmits(t, accountId).map((e) => e.client_ref)).toEqual(
      rows.map((r) => r.bank_idempotency_key),
    );

    t.clock.advance(60_000);
    const again = await submitImport("batch-1");
    expect(again.status).toBe(200);
    expect(await bodyOf(again)).toEqual(first as never);
    expect(paymentSubmits(t, accountId)).toHaveLength(2);

    expect((await bodyOf<Import>(await get())).items.map((i) => i.status)).toEqual([
      "submitted",
      "submitted",
    ]);
    const audit = t.services.audit.query({ action: "payments.import.submit", limit: 10 });
    expect(audit.map((e) => e.outcome).sort()).toEqual(["completed", "replayed"]);
    expect(audit.every((e) => e.actor === "token" && e.target === imp.import_id)).toBe(true);
  });

  test("a new external_id after everything is submitted calls the bank for nothing", async () => {
    const { t, accountId, submitImport } = await setup();
    await submitImport("a");
    const res = await submitImport("b");
    expect(res.status).toBe(200);
    expect((await bodyOf<Import>(res)).items.map((i) => i.status)).toEqual(["submitted", "submitted"]);
    expect(paymentSubmits(t, accountId)).toHaveLength(2);
  });

  test("the same external_id for another import is 409 conflict", async () => {
    const { t, token, accountId, accountNumber, submitImport } = await setup();
    await submitImport("shared");
    const other = await bodyOf<Import>(await upload(t, token, accountId, paymentFile(accountNumber)));
    await expectError(await submitImport("shared", token, other.import_id), 409, "conflict");
    expect(paymentSubmits(t, accountId)).toHaveLength(2);
  });

  test("sandbox_failing rejects: items rejected with error", async () => {
    const { t, accountId, submitImport } = await setup({ bank: "sandbox_failing" });
    const res = await submitImport("f-1");
    expect(res.status).toBe(200);
    const body = await bodyOf<Import>(res);
    expect(body.status).toBe("submitted");
    for (const item of body.items) {
      expect(item.status).toBe("rejected");
      expect(item.error?.code).toBe("bank_error");
      expect(typeof item.error?.message).toBe("string");
    }
    expect(itemRows(t).every((r) => r.bank_reference === null && r.sign_url === null)).toBe(true);
    expect(await bodyOf(await submitImport("f-1"))).toEqual(body as never);
    expect(paymentSubmits(t, accountId)).toHaveLength(2);
  });

  test("external_id rules: trimmed, 1..256", async () => {
    const { submitImport } = await setup();
    for (const bad of ["", "   ", "x".repeat(257)]) {
      expect((await expectError(await submitImport(bad), 400, "validation_error")).field).toBe("external_id");
    }
    await expectError(await submitImport(12), 400, "validation_error");
    expect((await submitImport("x".repeat(256))).status).toBe(200);
  });

  test("unknown ids, other tokens' imports and malformed ids", async () => {
    const { t, company, accountId, submitImport, imp } = await setup();
    const sibling = t.fixtures.token(company.company_id, {
      send: true,
      accounts: [{ bank_account_id: accountId, allow_send_payments: true }],
    }).token;
    await expectError(
      await t.request("GET", `${BASE_PATH}/${imp.import_id}`, { token: sibling }),
      404,
      "not_found",
    );
    await expectError(await submitImport("s", sibling), 404, "not_found");
    await expectError(
      await submitImport("s", undefined, "00000000-0000-4000-8000-000000000000"),
      404,
      "not_found",
    );
    await expectError(await submitImport("s", undefined, "nope"), 400, "invalid request body");
    await expectError(
      await t.request("POST", `${BASE_PATH}/${imp.import_id}/submit`, {
        token: sibling,
        body: "{not json",
      }),
      400,
      "invalid request body",
    );
  });
});

describe("submit one item", () => {
  test("submits the item; repeat replays; the same key for another item is 409", async () => {
    const { t, accountId, imp, submitItem, get } = await setup({ docs: 3 });
    const [a, b] = imp.items;
    const res = await submitItem(a!.item_id, "item-1");
    expect(res.status).toBe(200);
    const first = await bodyOf<Item>(res);
    expect(first).toMatchObject({ item_id: a!.item_id, status: "submitted", doc_number: "201" });
    expect(paymentSubmits(t, accountId)).toHaveLength(1);

    expect(await bodyOf(await submitItem(a!.item_id, "item-1"))).toEqual(first as never);
    expect(paymentSubmits(t, accountId)).toHaveLength(1);

    await expectError(await submitItem(b!.item_id, "item-1"), 409, "conflict");
    expect(paymentSubmits(t, accountId)).toHaveLength(1);

    const view = await bodyOf<Import>(await get());
    expect(view.status).toBe("partially_submitted");
    expect(view.items.map((i) => i.status)).toEqual(["submitted", "draft", "draft"]);
    const audit = t.services.audit.query({ action: "payments.item.submit", limit: 10 });
    expect(audit.map((e) => e.outcome).sort()).toEqual(["completed", "conflict", "replayed"]);
  });

  test("an item already submitted is returned as it is, without a bank call", async () => {
    const { t, accountId, imp, submitItem, submitImport } = await setup();
    await submitImport("all");
    const res = await submitItem(imp.items[1]!.item_id, "late");
    expect((await bodyOf<Item>(res)).status).toBe("submitted");
    expect(paymentSubmits(t, accountId)).toHaveLength(2);
  });

  test("then the import submit sends only the remaining drafts", async () => {
    const { t, accountId, imp, submitItem, submitImport } = await setup({ docs: 3 });
    await submitItem(imp.items[0]!.item_id, "one");
    const body = await bodyOf<Import>(await submitImport("rest"));
    expect(body.items.map((i) => i.status)).toEqual(["submitted", "submitted", "submitted"]);
    expect(paymentSubmits(t, accountId)).toHaveLength(3);
    expect(new Set(paymentSubmits(t, accountId).map((e) => e.client_ref)).size).toBe(3);
  });

  test("sandbox_failing rejects the item with error", async () => {
    const { imp, submitItem } = await setup({ bank: "sandbox_failing" });
    const body = await bodyOf<Item>(await submitItem(imp.items[0]!.item_id, "x"));
    expect(body.status).toBe("rejected");
    expect(body.error?.code).toBe("bank_error");
  });

  test("an item of another import is 404", async () => {
    const { t, token, accountId, accountNumber, submitItem } = await setup();
    const other = await bodyOf<Import>(await upload(t, token, accountId, paymentFile(accountNumber)));
    await expectError(await submitItem(other.items[0]!.item_id, "x"), 404, "not_found");
    await expectError(await submitItem("bad-id", "x"), 400, "invalid request body");
  });
});

describe("crash safety", () => {
  function sandbox(t: TestApp): BankAdapter {
    return t.services.banks.get("sandbox");
  }

  test("an unreachable bank leaves the item submitting; a repeat re-sends it with the same key", async () => {
    const { t, accountId, imp, submitImport, get } = await setup();
    const adapter = sandbox(t);
    const original = adapter.submitPayment.bind(adapter);
    let calls = 0;
    (adapter as { submitPayment: BankAdapter["submitPayment"] }).submitPayment = async (
      account,
      payment,
      key,
    ) => {
      calls += 1;
      const answer = await original(account, payment, key);
      // The bank got the second payment, but the answer is lost on the way back.
      if (calls === 2) throw new BankError("timeout", "bank did not answer in time");
      return answer;
    };
    const details = await expectError(await submitImport("net-1"), 500, "bank_error");
    expect(details).toMatchObject({ bank_code: "timeout", retry_with_same_external_id: true });
    const mid = await bodyOf<Import>(await get());
    expect(mid.status).toBe("submitting");
    expect(mid.items.map((i) => i.status)).toEqual(["submitted", "submitting"]);

    const done = await bodyOf<Import>(await submitImport("net-1"));
    expect(done.items.map((i) => i.status)).toEqual(["submitted", "submitted"]);
    const keys = paymentSubmits(t, accountId).map((e) => e.client_ref);
    // First item once; the second twice under the same key (the bank dedupes by key).
    expect(keys).toHaveLength(3);
    expect(keys[1]).toBe(keys[2]!);
    expect(keys[2]).toBe(imp.items[1]!.item_id);
    // And now it is complete: a further repeat calls nothing.
    expect(await bodyOf(await submitImport("net-1"))).toEqual(done as never);
    expect(paymentSubmits(t, accountId)).toHaveLength(3);
  });

  test("a submission claimed before a stop is visible and finished by resumeInterrupted()", async () => {
    const { t, tokenId, accountId, imp, get, submitImport } = await setup();
    // What a process leaves behind when it stops after committing the claim, before the bank call.
    t.services.paymentRepo.claim(
      {
        id: "11111111-1111-4111-8111-111111111111",
        api_token_id: tokenId,
        external_id: "stopped",
        payload_hash: "irrelevant-for-resume",
        kind: "import",
        import_id: imp.import_id,
        item_id: null,
        created_at: t.clock.now().toISOString(),
      },
      imp.items.map((i) => i.item_id),
      (id) => id,
    );
    const stuck = await bodyOf<Import>(await get());
    expect(stuck.items.map((i) => i.status)).toEqual(["submitting", "submitting"]);
    // Another key cannot take items that are being submitted.
    const other = await bodyOf<Import>(await submitImport("another"));
    expect(other.items.map((i) => i.status)).toEqual(["submitting", "submitting"]);
    expect(paymentSubmits(t, accountId)).toHaveLength(0);

    expect(await t.services.payments.resumeInterrupted()).toEqual({ resumed: 1, failed: 0 });
    expect((await bodyOf<Import>(await get())).items.map((i) => i.status)).toEqual([
      "submitted",
      "submitted",
    ]);
    expect(paymentSubmits(t, accountId).map((e) => e.client_ref)).toEqual(imp.items.map((i) => i.item_id));
    expect(await t.services.payments.resumeInterrupted()).toEqual({ resumed: 0, failed: 0 });
  });

  test("a client's repeat after a stop resumes with the same keys", async () => {
    const { t, tokenId, accountId, imp, submitItem } = await setup();
    const item = imp.items[0]!;
    const { payloadHash } = await import("../../src/payments/submission");
    const row = t.services.paymentRepo.findItem(item.item_id)!;
    t.services.paymentRepo.claim(
      {
        id: "22222222-2222-4222-8222-222222222222",
        api_token_id: tokenId,
        external_id: "item-stopped",
        payload_hash: payloadHash("item", imp.import_id, [row]),
        kind: "item",
        import_id: imp.import_id,
        item_id: item.item_id,
        created_at: t.clock.now().toISOString(),
      },
      [item.item_id],
      (id) => id,
    );
    const res = await bodyOf<Item>(await submitItem(item.item_id, "item-stopped"));
    expect(res.status).toBe("submitted");
    expect(paymentSubmits(t, accountId).map((e) => e.client_ref)).toEqual([item.item_id]);
  });

  test("concurrent repeats of one key make one bank call per item", async () => {
    const { t, accountId, submitImport } = await setup({ docs: 3 });
    const results = await Promise.all([submitImport("race"), submitImport("race"), submitImport("race")]);
    const bodies = await Promise.all(results.map((r) => bodyOf<Import>(r)));
    expect(results.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(bodies[1]).toEqual(bodies[0]!);
    expect(bodies[2]).toEqual(bodies[0]!);
    expect(paymentSubmits(t, accountId)).toHaveLength(3);
  });
});

test("no response of this file carries a bank reference or signing URL", () => {
  expect(seenBodies.length).toBeGreaterThan(20);
  for (const text of seenBodies) expectNoBankSecrets(text);
});
