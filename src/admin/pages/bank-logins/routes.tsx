// An account's bank login in the admin pages: a new login, the bank's consent flow (and its
// callback), and the customer's accounts seen through the login, added in one step.
import { isUuid } from "../../../core/ids";
import { credentialsFromForm } from "../accounts/bank-login-form";
import { type PageKit, page } from "../kit";
import { MessagePage } from "../layout";
import { get, type PageRoute, pageDoc, post } from "../page-route";
import { ConsentPage, DiscoverPage } from "./view";

export function bankLoginRoutes(kit: PageKit): PageRoute[] {
  const { accounts, bankLogins } = kit.deps.admin;
  const { actorOf, signedInFrame, view, action, flashThen, frame, run, sessionOf } = kit;

  const accountOf = (id: string | undefined) => accounts.view(isUuid(id ?? "") ? id! : "");

  return [
    post(
      "/admin/accounts/:id/credentials",
      action(async (session, form, ctx) => {
        const current = accountOf(ctx.params.id);
        const credentials = credentialsFromForm(form, current.bank);
        if (credentials === undefined) {
          return flashThen(session, "Выберите способ доступа к банку", "/admin/accounts", "error");
        }
        const account = await bankLogins.replaceCredentials(
          current.bank_account_id,
          credentials,
          actorOf(ctx),
        );
        return flashThen(session, `Доступ к банку для счёта ${account.alias} сохранён`, "/admin/accounts");
      }),
      { detail: pageDoc("Admin pages: a new bank login for an account", "form") },
    ),
    post(
      "/admin/accounts/:id/bank-consent",
      action(async (session, _form, ctx) => {
        const account = accountOf(ctx.params.id);
        const url = await bankLogins.startConsent(account.bank_account_id, actorOf(ctx));
        return page(
          <ConsentPage
            frame={signedInFrame(session, "Подключение к банку", "accounts")}
            account={account}
            url={url}
          />,
        );
      }),
      { detail: pageDoc("Admin pages: start the bank's consent flow (a link to the bank's page)", "form") },
    ),
    // The bank sends the operator's browser back here. The single-use `state` (issued to a signed-in
    // operator a few minutes ago) is what authorises it, so it works in whatever tab comes back.
    get(
      "/admin/banks/:bank/callback",
      (ctx) => {
        const session = sessionOf(ctx);
        return run(ctx, session, async () => {
          const { accounts } = await bankLogins.finishConsent(
            ctx.params.bank ?? "",
            { state: ctx.query.state, code: ctx.query.code, error: ctx.query.error },
            actorOf(ctx),
          );
          const names = accounts.map((a) => a.alias).join(", ");
          const text = `Банк подтвердил доступ${names ? ` для счетов: ${names}` : ""}`;
          if (session) return flashThen(session, text, "/admin/accounts");
          return page(
            <MessagePage
              frame={frame(null, "Доступ подтверждён", null)}
              heading="Доступ подтверждён"
              text={text}
            />,
          );
        });
      },
      { detail: pageDoc("Admin pages: the bank's consent comes back (code and state from the bank)") },
    ),
    get(
      "/admin/accounts/:id/discover",
      view(async (session, ctx) => {
        const account = accountOf(ctx.params.id);
        const found = await bankLogins.discover(account.bank_account_id);
        return page(
          <DiscoverPage
            frame={signedInFrame(session, "Счета в банке", "accounts")}
            account={account}
            found={found.accounts}
          />,
        );
      }),
      { detail: pageDoc("Admin pages: the customer's accounts the bank shows through a login") },
    ),
    post(
      "/admin/accounts/:id/import",
      action(async (session, form, ctx) => {
        const source = accountOf(ctx.params.id);
        const chosen = Object.keys(form)
          .map((key) => /^add_(\d{20})_(\d{9})$/.exec(key))
          .filter((m): m is RegExpExecArray => m !== null && form[m[0]] === "on")
          .map((m) => ({ account_number: m[1]!, bik: m[2]! }));
        if (chosen.length === 0) {
          return flashThen(
            session,
            "Не выбрано ни одного счёта",
            `/admin/accounts/${source.bank_account_id}/discover`,
            "error",
          );
        }
        const added = await bankLogins.import(
          { bank_account_id: source.bank_account_id, accounts: chosen },
          actorOf(ctx),
        );
        return flashThen(session, `Добавлено счетов: ${added.length}`, "/admin/accounts");
      }),
      { detail: pageDoc("Admin pages: add the chosen accounts the bank shows", "form") },
    ),
  ];
}
