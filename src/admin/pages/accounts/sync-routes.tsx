// An account's sync (decisions §16) switched and tuned from its row on the accounts page, through
// the same service and audit entry as the admin API.
import { parseRuDate } from "../format";
import { nonEmpty, type PageKit } from "../kit";
import { type PageRoute, pageDoc, post } from "../page-route";

export function accountSyncRoutes(kit: PageKit): PageRoute[] {
  const { accounts, audit } = kit.deps.admin;
  const { service: sync, kick } = kit.deps.sync;
  const { actorOf, action, flashThen } = kit;
  return [
    post(
      "/admin/accounts/:id/sync",
      action((session, form, ctx) => {
        const interval = nonEmpty(form.interval_minutes?.trim());
        // Typed as дд.мм.гггг; anything else goes to the service's own check as it was typed.
        const since = nonEmpty(form.since?.trim());
        const settings = {
          enabled: form.enabled === "on",
          since: since === undefined ? undefined : (parseRuDate(since) ?? since),
          interval_minutes: interval === undefined ? undefined : Number(interval),
        };
        const view = audit.audited(
          "admin.account.sync",
          actorOf(ctx),
          settings,
          () => sync.configure(accounts.find(ctx.params.id ?? "").id, settings),
          (v) => v.bank_account_id,
        );
        if (view.enabled) kick();
        const text = view.enabled ? "Синхронизация включена" : "Синхронизация выключена";
        return flashThen(session, text, "/admin/accounts");
      }),
      { detail: pageDoc("Admin pages: switch and tune an account's sync", "form") },
    ),
  ];
}
