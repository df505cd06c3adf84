// lanes: sqlite postgres
// The sync section of an account's row and page in the admin pages: its state, the bank's last refusal,
// and the form that switches and tunes it (the same service and audit as the admin API).
import { describe, expect, test } from "bun:test";
import { signIn } from "../helpers/admin-browser";
import { makeTestApp } from "../helpers/app";

describe("admin pages: an account's sync", () => {
  test("switched on and tuned from the account's row; refusals and bad input are shown", async () => {
    const t = makeTestApp();
    const b = await signIn(t);
    const company = t.fixtures.company();
    const id = t.fixtures.account(company.company_id, "sandbox_failing").bank_account_id;
    const before = await (await b.get("/admin/accounts")).text();
    expect(before).toContain(`action="/admin/accounts/${id}/sync"`);
    expect(before).toContain("выключена");

    const on = await b.post(`/admin/accounts/${id}/sync`, {
      enabled: "on",
      since: "10.11.2026",
      interval_minutes: "30",
    });
    expect(on.status).toBe(303);
    await t.services.syncRunner.runOnce();
    await t.services.poller.idle();
    await t.services.poller.tick();
    await t.services.poller.idle();
    const after = await (await b.get("/admin/accounts")).text();
    expect(after).toContain("включена");
    expect(after).toContain("с 10.11.2026, каждые 30 мин");
    expect(after).toContain("ошибка банка");
    const page = await (await b.get(`/admin/accounts/${id}`)).text();
    expect(page).toContain('<section class="card" id="sync">');
    expect(page).toContain('value="10.11.2026"');
    expect(t.services.admin.audit.page({ action: "admin.account.sync" }).entries).toHaveLength(1);

    const bad = await b.post(`/admin/accounts/${id}/sync`, { enabled: "on", interval_minutes: "3" });
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain("Интервал, минут: от 5 до 1440 минут");

    expect((await b.post(`/admin/accounts/${id}/sync`, { since: "2026-11-10" })).status).toBe(303);
    expect(await (await b.get("/admin/accounts")).text()).toContain("выключена");
  });
});
