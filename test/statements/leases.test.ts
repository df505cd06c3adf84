// lanes: sqlite postgres
// A statement held by another poller (another replica's lease) is neither sent to the bank nor
// polled here until the lease has passed; then this poller takes it, works, and lets it go.
import { describe, expect, test } from "bun:test";
import { makeTestApp } from "../helpers/app";

describe("statement leases", () => {
  test("a statement another poller holds is left alone until its lease passes", async () => {
    const t = makeTestApp();
    const w = t.fixtures.world();
    const now = t.clock.now().getTime();
    const { row } = t.services.statementRepo.createOrFind({
      id: "held-elsewhere",
      bank_account_id: w.account.bank_account_id,
      api_token_id: w.tokenId,
      source: "integration",
      external_id: "e-held",
      date_from: "2026-10-01",
      date_to: "2026-10-31",
      created_at: t.clock.now().toISOString(),
    });
    expect(row.lease_until_ms).toBe(0);
    t.db.query("UPDATE statements SET lease_until_ms = ? WHERE id = ?").run(now + 60_000, row.id);
    const requests = () =>
      t.services.sandboxLog.list(w.account.bank_account_id).filter((r) => r.kind === "statement_request");

    await t.services.poller.tick();
    await t.services.poller.idle();
    expect(requests()).toHaveLength(0);
    expect(t.services.statementRepo.findById(row.id)?.bank_state).toBe("pending");

    t.clock.advance(60_001);
    await t.services.poller.tick();
    await t.services.poller.idle();
    expect(requests()).toHaveLength(1);
    expect(t.services.statementRepo.findById(row.id)).toMatchObject({
      bank_state: "requested",
      lease_until_ms: 0,
    });
  });
});
