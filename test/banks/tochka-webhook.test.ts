// lanes: sqlite postgres
// Tochka's incomingPayment webhook (decisions §16): a body signed by the bank (RS256) runs the
// sync of the account the money came into at once; a body whose signature does not verify is
// refused (401) and audited, and orders nothing. The webhooks are built and held to the bank's
// own example in test/support/tochka-webhook.ts.
import { describe, expect, test } from "bun:test";
import { SignJWT, UnsecuredJWT } from "jose";
import { json, makeTestApp, type TestApp } from "../helpers/app";
import { expectError } from "../helpers/envelope";
import {
  DOCUMENT_EXAMPLE,
  incomingPayment,
  signWebhook,
  type WebhookKeys,
  webhookKeys,
} from "../support/tochka-webhook";
import { tochkaWorlds } from "../support/tochka-world";

const TOCHKA_BIK = "044525104";
const worlds = tochkaWorlds();

function postWebhook(t: TestApp, body: string) {
  return t.request("POST", "/webhooks/tochka", { body, headers: { "content-type": "text/plain" } });
}

async function webhookAudit(t: TestApp) {
  const res = await t.admin("GET", "/audit-log?action=tochka.webhook");
  return (
    await json<{ entries: { actor: string; target: string; outcome: string; arguments: unknown }[] }>(res)
  ).entries;
}

const syncStatements = (t: TestApp, accountId: string) =>
  t.db
    .query<{ n: number }, [string]>(
      "SELECT count(*) AS n FROM statements WHERE bank_account_id = ? AND source = 'sync'",
    )
    .get(accountId)?.n;

async function syncingWorld(keys: WebhookKeys) {
  const w = await worlds.start({ env: { SVC_TOCHKA_WEBHOOK_KEY: keys.publicJwk } });
  const account = await w.account();
  const res = await w.t.admin("PUT", `/bank-accounts/${account.id}/sync`, {
    enabled: true,
    since: "2026-11-19",
  });
  expect(res.status).toBe(200);
  // Switching on ran the first pass: one piece, 19 to 20 November.
  await w.t.services.syncRunner.runOnce();
  await w.t.services.poller.idle();
  expect(Number(syncStatements(w.t, account.id))).toBe(1);
  // The piece is ready (fetched during today: today stays to be ordered again).
  const status = () =>
    w.t.db
      .query<{ status: string }, [string]>("SELECT status FROM statements WHERE bank_account_id = ?")
      .get(account.id)?.status;
  for (let i = 0; i < 10 && status() === "processing"; i++) {
    w.t.clock.advance(30_000);
    await w.t.services.poller.tick();
    await w.t.services.poller.idle();
  }
  expect(status()).toBe("ready");
  return { w, account };
}

describe("POST /webhooks/tochka", () => {
  test("a signed incomingPayment runs the account's sync at once", async () => {
    const keys = await webhookKeys();
    const { w, account } = await syncingWorld(keys);
    // Minutes later the next run is not due yet…
    w.t.clock.advance(5 * 60_000);
    expect(await w.t.services.syncRunner.runOnce()).toBe(0);
    const before = w.fake.requests.filter((r) => r.path === "/open-banking/v1.0/statements").length;
    // …but the bank's notice makes it so.
    const body = await signWebhook(incomingPayment(account.number, TOCHKA_BIK), keys.privateKey);
    const res = await postWebhook(w.t, body);
    expect(res.status).toBe(200);
    expect(await json(res)).toEqual({ received: true, sync: true });
    await w.t.services.syncRunner.runOnce();
    await w.t.services.poller.idle();
    expect(Number(syncStatements(w.t, account.id))).toBe(2);
    expect(w.fake.requests.filter((r) => r.path === "/open-banking/v1.0/statements").length).toBe(before + 1);
    const [entry] = await webhookAudit(w.t);
    expect(entry).toMatchObject({ actor: "system", target: account.id, outcome: "ok" });
    // A burst of notices: the next run a minute after the last began, not one per notice.
    const again = await postWebhook(
      w.t,
      await signWebhook(incomingPayment(account.number, TOCHKA_BIK), keys.privateKey),
    );
    expect(await json(again)).toEqual({ received: true, sync: true });
    expect(await w.t.services.syncRunner.runOnce()).toBe(0);
    const sync = await json<{ last_run_at: string; next_run_at: string }>(
      await w.t.admin("GET", `/bank-accounts/${account.id}/sync`),
    );
    expect(Date.parse(sync.next_run_at) - Date.parse(sync.last_run_at)).toBe(60_000);
  });

  test("a payment into an account that does not sync, or unknown to svc, is acknowledged and orders nothing", async () => {
    const keys = await webhookKeys();
    const w = await worlds.start({ env: { SVC_TOCHKA_WEBHOOK_KEY: keys.publicJwk } });
    const account = await w.account();
    for (const number of [account.number, "40702810000000000000"]) {
      const res = await postWebhook(
        w.t,
        await signWebhook(incomingPayment(number, TOCHKA_BIK), keys.privateKey),
      );
      expect(await json(res)).toEqual({ received: true, sync: false });
    }
    expect(Number(syncStatements(w.t, account.id))).toBe(0);
  });

  test("a body whose signature does not verify is 401, audited, and orders nothing", async () => {
    const keys = await webhookKeys();
    const { w, account } = await syncingWorld(keys);
    w.t.clock.advance(5 * 60_000);
    const payload = incomingPayment(account.number, TOCHKA_BIK);
    const stranger = await webhookKeys();
    const signed = await signWebhook(payload, keys.privateKey);
    const [header, , signature] = signed.split(".");
    const tampered = `${header}.${Buffer.from(JSON.stringify({ ...payload, date: "2026-11-21" })).toString("base64url")}.${signature}`;
    const bodies = [
      await signWebhook(payload, stranger.privateKey),
      tampered,
      new UnsecuredJWT(payload).encode(),
      await new SignJWT(payload)
        .setProtectedHeader({ alg: "HS256" })
        .sign(new TextEncoder().encode(keys.publicJwk)),
      "not a token",
      "",
    ];
    for (const body of bodies) await expectError(await postWebhook(w.t, body), 401, "invalid_token");
    const entries = await webhookAudit(w.t);
    expect(entries.map((e) => e.outcome)).toEqual(bodies.map(() => "invalid_signature"));
    await w.t.services.syncRunner.runOnce();
    expect(Number(syncStatements(w.t, account.id))).toBe(1);
  });

  test("by default svc believes the key the bank publishes: the bank's own example verifies", async () => {
    const t = makeTestApp();
    const res = await postWebhook(t, DOCUMENT_EXAMPLE);
    expect(res.status).toBe(200);
    expect(await json(res)).toEqual({ received: true, sync: false });
  });
});
