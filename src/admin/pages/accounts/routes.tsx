// Bank accounts: the overview and the form of a new account (its bank login typed field by
// field), one account's page, and the refresh of an account's balance.
import { BankError } from "../../../banks/adapter";
import { dateInZone } from "../../../core/clock";
import { ApiError } from "../../../core/errors";
import { isUuid } from "../../../core/ids";
import { rublesToKopecks } from "../../../formats/money";
import type { BankAccountView } from "../../model";
import { formatMoney } from "../format";
import { type FormPage, nonEmpty, type PageKit, page } from "../kit";
import { get, type PageRoute, pageDoc, post } from "../page-route";
import { credentialsFromForm } from "./bank-login-form";
import { directbankAccountRoute } from "./directbank";
import { type AccountOverview, COVERAGE_DAYS } from "./overview";
import { AccountPage, AccountsPage } from "./view";

const DAY_MS = 86_400_000;

export function accountRoutes(kit: PageKit): PageRoute[] {
  const { companies, accounts, audit } = kit.deps.admin;
  const { statements, read, clock, timezone } = kit.deps;
  const { actorOf, signedInFrame, listWithForm, view, action, flashThen } = kit;

  /** The account's balance, the coverage of the last 90 days (today included), the newest statement. */
  function overviewOf(account: BankAccountView): AccountOverview {
    const now = clock.now();
    const to = dateInZone(now, timezone);
    const from = new Date(Date.parse(`${to}T00:00:00Z`) - (COVERAGE_DAYS - 1) * DAY_MS)
      .toISOString()
      .slice(0, 10);
    const id = account.bank_account_id;
    return {
      account,
      balance: statements.balance(accounts.find(id)),
      coverage: read.coverage(id, from, to, now),
      from,
      to,
      newest: statements.page({ accountIds: [id], limit: 1 }).statements[0] ?? null,
    };
  }
  const { service: sync } = kit.deps.sync;

  // On a refused post, the page again with the service's message and what was typed.
  const accountsPage: FormPage = (session, status = 200, error = null, values = {}) =>
    page(
      <AccountsPage
        frame={signedInFrame(session, "Счета", "accounts")}
        companies={companies.list()}
        accounts={accounts.list().map(overviewOf)}
        syncOf={(id) => sync.view(id)}
        banks={kit.deps.banks()}
        error={error}
        values={values}
      />,
      status,
    );

  const accountOf = (id: string | undefined) => {
    if (!isUuid(id ?? "")) throw new ApiError("not_found", "Счёт не найден");
    return accounts.view(id!);
  };

  return [
    ...listWithForm(
      "/admin/accounts",
      accountsPage,
      (form, ctx) => {
        const ops = nonEmpty(form.ops_per_day);
        const environment = form.environment === "sandbox" ? "sandbox" : "production";
        const bank = form.bank ?? "";
        return accounts.create(
          {
            environment,
            credentials: credentialsFromForm(form, bank),
            company_id: form.company_id ?? "",
            bank,
            account_number: (form.account_number ?? "").trim(),
            bik: (form.bik ?? "").trim(),
            currency: nonEmpty(form.currency?.trim()),
            alias: nonEmpty(form.alias?.trim()),
            sandbox: ops === undefined ? undefined : { ops_per_day: Number(ops) },
          },
          actorOf(ctx),
        );
      },
      (account) => `Счёт ${account.alias} (${account.account_number_masked}) добавлен`,
      { list: "Admin pages: bank accounts", create: "Admin pages: add a bank account" },
    ),
    get(
      "/admin/accounts/:id",
      view((session, ctx) => {
        const account = accountOf(ctx.params.id);
        return page(
          <AccountPage
            frame={signedInFrame(session, `Счёт ${account.alias}`, "accounts")}
            overview={overviewOf(account)}
            company={companies.list().find((c) => c.company_id === account.company_id)}
            sync={account.bank === "file" ? null : sync.view(account.bank_account_id)}
          />,
        );
      }),
      { detail: pageDoc("Admin pages: one account (balance, coverage, newest statement, sync, bank login)") },
    ),
    post(
      "/admin/accounts/:id/balance/refresh",
      action(async (session, form, ctx) => {
        const account = accountOf(ctx.params.id);
        // Back to the overview or to the account's own page, nowhere else.
        const back =
          form.back === `/admin/accounts/${account.bank_account_id}` ? form.back : "/admin/accounts";
        try {
          const balance = await statements.refreshBalance(accounts.find(account.bank_account_id));
          audit.record("admin.balance.refresh", account.bank_account_id, actorOf(ctx));
          const kopecks =
            balance.balance === null ? null : rublesToKopecks(balance.balance, { signed: true });
          const amount =
            kopecks === null ? "банк не сообщил остаток" : formatMoney(kopecks, balance.currency);
          return flashThen(session, `Остаток счёта ${account.alias}: ${amount}`, back);
        } catch (error) {
          if (!(error instanceof BankError)) throw error;
          return flashThen(session, `Банк не ответил: ${error.message}`, back, "error");
        }
      }),
      { detail: pageDoc("Admin pages: ask the bank for an account's balance now", "form") },
    ),
    directbankAccountRoute(kit, accountsPage),
  ];
}
