// lanes: sqlite
// The webhook body against the bank's document (its webhooks page): the page's own incomingPayment
// example (test/fixtures/tochka-webhook-incoming-payment.jwt, verbatim) verifies with the key the
// page publishes, which is svc's default; svc reads the account from it; and every webhook the
// tests build has the example's fields and types, a check that catches a missing, misspelt or
// mistyped field.
import { describe, expect, test } from "bun:test";
import { decodeJwt } from "jose";
import { TOCHKA_WEBHOOK_KEY, TochkaWebhookVerifier } from "../../src/banks/tochka/webhook";
import { DOCUMENT_EXAMPLE, expectDocumentShape, incomingPayment, shapeOf } from "../support/tochka-webhook";

describe("Tochka's incomingPayment webhook body", () => {
  test("the document's example verifies with the published key and names the recipient's account", async () => {
    const notice = await new TochkaWebhookVerifier(TOCHKA_WEBHOOK_KEY).verify(DOCUMENT_EXAMPLE);
    expect(notice).toEqual({
      webhookType: "incomingPayment",
      account: { number: "00000000000000000000", bik: "000000000" },
      paymentId: "0000000000",
    });
  });

  test("the tests' webhooks have the document's fields and types", () => {
    const ours = incomingPayment("40702810000000000001", "044525104");
    expectDocumentShape(ours);
    const example = shapeOf(decodeJwt(DOCUMENT_EXAMPLE));
    const { paymentId: _dropped, ...missing } = ours;
    expect(shapeOf(missing)).not.toEqual(example);
    expect(shapeOf({ ...ours, amount: 1250.5 })).not.toEqual(example);
    expect(shapeOf({ ...ours, SideRecipient: { ...ours.SideRecipient, amount: 1250.5 } })).not.toEqual(
      example,
    );
  });
});
