// Tochka Bank behind the BankAdapter seam (bank "tochka"): statements (init, poll until Ready,
// every page), balances, payments for signing and their status, and account discovery, on the
// production base with the customer's login or on the sandbox base with its fixed bearer.
// Checked against the bank's published OpenAPI document (test/fixtures/tochka-openapi.json).
import type { Clock } from "../../core/clock";
import type { Logger } from "../../core/logger";
import { kopecksToJsonNumber, rublesToKopecks } from "../../formats/money";
import {
  type BalanceResult,
  type BankAccountRef,
  type BankAdapter,
  BankError,
  type ConnectionStore,
  type DiscoveredAccount,
  type PaymentOrder,
  type PaymentStatusResult,
  type PaymentSubmitResult,
  type StatementPeriod,
  type StatementPollResult,
} from "../adapter";
import { tochkaConsentFlow } from "./consent";
import { checkLogin, TochkaBearers } from "./credentials";
import { TochkaHttp, TochkaRefused, type TochkaSettings } from "./http";
import { readyStatement, rejectedResult, StatementRejected, type TochkaStatement } from "./statement";

export interface TochkaDeps {
  settings: TochkaSettings;
  connections: ConnectionStore;
  clock: Clock;
  logger: Logger;
  fetch?: typeof fetch;
}

interface Envelope<T> {
  Data: T;
  Links?: { self?: string; next?: string };
  Meta?: { totalPages?: number };
}

/** Pages of one statement svc follows at most (a guard against a bank that never ends). */
const MAX_PAGES = 1000;

/** The bank's account id: "{number}/{BIK}". */
function accountIdOf(ref: BankAccountRef): string {
  return `${ref.account_number}/${ref.bik}`;
}

function statementPath(ref: BankAccountRef, statementId: string): string {
  return `/open-banking/v1.0/accounts/${accountIdOf(ref)}/statements/${encodeURIComponent(statementId)}`;
}

export function createTochkaAdapter(deps: TochkaDeps): BankAdapter & {
  readonly http: TochkaHttp;
} {
  const http = new TochkaHttp(deps.settings, deps.logger, deps.fetch);
  const bearers = new TochkaBearers(http, deps.connections, deps.clock);

  /** The bearer for the next call; a login the bank refuses to renew needs the operator. */
  async function bearerFor(ref: BankAccountRef, stale?: string): Promise<string> {
    try {
      return await bearers.bearer(ref, stale);
    } catch (e) {
      if (e instanceof TochkaRefused) throw bearers.refused(ref, e);
      throw e;
    }
  }

  /** One API call with the account's bearer; an OAuth access token the bank refuses is renewed once. */
  async function call<T>(
    ref: BankAccountRef,
    method: "GET" | "POST",
    url: string,
    body?: unknown,
  ): Promise<T> {
    const bearer = await bearerFor(ref);
    try {
      return await http.api<T>(ref.environment, bearer, method, url, body);
    } catch (e) {
      if (!(e instanceof TochkaRefused)) throw e;
      if (e.status !== 401 || !bearers.renewable(ref)) throw bearers.refused(ref, e);
      const renewed = await bearerFor(ref, bearer);
      try {
        return await http.api<T>(ref.environment, renewed, method, url, body);
      } catch (again) {
        if (again instanceof TochkaRefused) throw bearers.refused(ref, again);
        throw again;
      }
    }
  }

  async function statementPages(ref: BankAccountRef, first: Envelope<{ Statement: TochkaStatement[] }>) {
    const pages = [first.Data.Statement[0]!];
    const total = first.Meta?.totalPages ?? 1;
    let next = first.Links?.next;
    while (next && pages.length < Math.min(total, MAX_PAGES)) {
      const page = await call<Envelope<{ Statement: TochkaStatement[] }>>(ref, "GET", next);
      const statement = page.Data.Statement[0];
      if (!statement) break;
      pages.push(statement);
      next = page.Links?.next;
    }
    if (pages.length < total) {
      throw new StatementRejected(
        "statement_incomplete",
        `Банк отдал ${pages.length} из ${total} страниц выписки; выписка не сохранена`,
      );
    }
    return pages;
  }

  return {
    bank: "tochka",
    http,
    supportsStatements: true,
    environments: ["production", "sandbox"],
    // The bank publishes limits of a few requests per second per client.
    minIntervalMs: 100,

    checkCredentials: checkLogin,
    consent: tochkaConsentFlow(http, deps.clock),

    async requestStatement(ref: BankAccountRef, period: StatementPeriod) {
      const answer = await call<Envelope<{ Statement: { statementId?: string } }>>(
        ref,
        "POST",
        "/open-banking/v1.0/statements",
        {
          Data: {
            Statement: {
              accountId: accountIdOf(ref),
              startDateTime: period.date_from,
              endDateTime: period.date_to,
            },
          },
        },
      );
      const id = answer.Data?.Statement?.statementId;
      if (!id) throw new BankError("bank_error", "Банк не сообщил номер заказанной выписки");
      return { bank_request_id: id };
    },

    async pollStatement(ref: BankAccountRef, bankRequestId: string): Promise<StatementPollResult> {
      const answer = await call<Envelope<{ Statement: TochkaStatement[] }>>(
        ref,
        "GET",
        statementPath(ref, bankRequestId),
      );
      const statement = answer.Data?.Statement?.[0];
      if (!statement) throw new BankError("bank_error", "Банк не вернул выписку");
      if (statement.status === "Created" || statement.status === "Processing")
        return { status: "processing" };
      if (statement.status === "Error") {
        return {
          status: "failed",
          error: { code: "bank_error", message: "Банк не смог сформировать выписку (статус Error)" },
        };
      }
      try {
        return readyStatement(accountIdOf(ref), await statementPages(ref, answer));
      } catch (e) {
        if (e instanceof StatementRejected) return rejectedResult(e);
        throw e;
      }
    },

    async getBalance(ref: BankAccountRef): Promise<BalanceResult> {
      const answer = await call<
        Envelope<{
          Balance: {
            type: string;
            dateTime: string;
            creditDebitIndicator: string;
            Amount: { amount: number };
          }[];
        }>
      >(ref, "GET", `/open-banking/v1.0/accounts/${accountIdOf(ref)}/balances`);
      const closing = answer.Data?.Balance?.find((b) => b.type === "ClosingAvailable");
      if (!closing) throw new BankError("bank_error", "Банк не сообщил доступный остаток");
      const amount = rublesToKopecks(closing.Amount.amount, { signed: true });
      if (amount === null)
        throw new BankError("bank_error", `Остаток не в копейках: ${String(closing.Amount.amount)}`);
      const signed = closing.creditDebitIndicator === "Debit" ? -Math.abs(amount) : amount;
      const asOf = new Date(closing.dateTime);
      return { balance: signed, as_of: Number.isNaN(asOf.getTime()) ? deps.clock.now() : asOf };
    },

    async submitPayment(ref: BankAccountRef, payment: PaymentOrder): Promise<PaymentSubmitResult> {
      const number = Number.parseInt(payment.doc_number, 10);
      try {
        const answer = await call<Envelope<{ requestId: string; redirectURL: string }>>(
          ref,
          "POST",
          "/payment/v1.0/for-sign",
          {
            Data: {
              accountCode: ref.account_number,
              bankCode: ref.bik,
              ...(ref.holder?.inn ? { payerINN: ref.holder.inn } : {}),
              ...(ref.holder?.kpp ? { payerKPP: ref.holder.kpp } : {}),
              counterpartyBankBic: payment.payee.bank_bik,
              counterpartyAccountNumber: payment.payee.account,
              ...(payment.payee.inn ? { counterpartyINN: payment.payee.inn } : {}),
              ...(payment.payee.kpp ? { counterpartyKPP: payment.payee.kpp } : {}),
              counterpartyName: payment.payee.name,
              paymentAmount: kopecksToJsonNumber(payment.amount),
              paymentDate: payment.doc_date,
              ...(number > 0 && number < 1_000_000 ? { paymentNumber: number } : {}),
              paymentPurpose: payment.purpose.slice(0, 210),
            },
          },
        );
        if (!answer.Data?.requestId || !answer.Data?.redirectURL) {
          throw new BankError("bank_error", "Банк не вернул ссылку на подписание платежа");
        }
        return {
          status: "accepted",
          bank_reference: answer.Data.requestId,
          sign_url: answer.Data.redirectURL,
        };
      } catch (e) {
        if (e instanceof BankError && !e.retryable) {
          return {
            status: "rejected",
            error: {
              code: "bank_error",
              message: e.message,
              ...(e.bankCode ? { bank_code: e.bankCode } : {}),
            },
          };
        }
        throw e;
      }
    },

    async paymentStatus(ref: BankAccountRef, bankReference: string): Promise<PaymentStatusResult> {
      const answer = await call<Envelope<{ status: string; errors?: unknown[] }>>(
        ref,
        "GET",
        `/payment/v1.0/status/${encodeURIComponent(bankReference)}`,
      );
      switch (answer.Data?.status) {
        case "Paid":
          return { status: "signed_and_paid" };
        case "Canceled":
          return { status: "canceled" };
        case "Rejected":
          return {
            status: "rejected",
            error: { code: "bank_error", message: rejectionText(answer.Data.errors) },
          };
        default:
          return { status: "pending" };
      }
    },

    async listAccounts(ref: BankAccountRef): Promise<DiscoveredAccount[]> {
      const answer = await call<
        Envelope<{ Account: { accountId: string; currency: string; status: string }[] }>
      >(ref, "GET", "/open-banking/v1.0/accounts");
      const out: DiscoveredAccount[] = [];
      for (const a of answer.Data?.Account ?? []) {
        const m = /^(\d{20})\/(\d{9})$/.exec(a.accountId);
        if (!m) continue;
        out.push({ account_number: m[1]!, bik: m[2]!, currency: a.currency, status: a.status });
      }
      return out;
    },
  };
}

function rejectionText(errors: unknown[] | undefined): string {
  const first = errors?.[0];
  const detail =
    typeof first === "string"
      ? first
      : typeof first === "object" &&
          first !== null &&
          typeof (first as { message?: unknown }).message === "string"
        ? (first as { message: string }).message
        : null;
  return detail ? `Банк отклонил платёж: ${detail}` : "Банк отклонил платёж";
}
