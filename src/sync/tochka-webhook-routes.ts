// POST /webhooks/tochka: the bank's notices (decisions §16). Its body is a JWT the bank signed; a
// body whose signature does not verify is refused (401) and audited. An incomingPayment to a
// Tochka account that syncs runs its sync at once; anything else verified is acknowledged (200,
// or the bank sends it again 30 times) and audited.
import { Elysia } from "elysia";
import type { AuditLog } from "../audit/audit-log";
import { type TochkaWebhookVerifier, WebhookRefused } from "../banks/tochka/webhook";
import type { Clock } from "../core/clock";
import { ApiError } from "../core/errors";
import type { Logger } from "../core/logger";
import type { BankAccountRecord } from "../db/repos/accounts";
import { bodyPolicyOption } from "../http/body-policy";
import { clientLimitOption } from "../http/client-limit";
import { withRequestState } from "../http/request-state";

export interface TochkaWebhookDeps {
  verifier: TochkaWebhookVerifier;
  accountByNumber: (accountNumber: string, bik: string) => BankAccountRecord | null;
  /** Makes the account's sync run now; false when it does not sync. */
  syncNow: (bankAccountId: string) => boolean;
  audit: AuditLog;
  clock: Clock;
  logger: Logger;
}

const WEBHOOK_LIMIT = 64 * 1024;

export function tochkaWebhookRoutes(deps: TochkaWebhookDeps) {
  return new Elysia({ name: "tochka-webhooks" })
    .use(withRequestState)
    .use(bodyPolicyOption)
    .use(clientLimitOption)
    .post(
      "/webhooks/tochka",
      async ({ body, requestState }) => {
        const entry = (target: string, outcome: string, args?: Record<string, unknown>) =>
          deps.audit.write({
            at: deps.clock.now(),
            actor: "system",
            action: "tochka.webhook",
            target,
            arguments: args,
            outcome,
            requestId: requestState.requestId,
            ip: requestState.clientIp,
          });
        let notice: Awaited<ReturnType<TochkaWebhookVerifier["verify"]>>;
        try {
          notice = await deps.verifier.verify(typeof body === "string" ? body : "");
        } catch (e) {
          if (!(e instanceof WebhookRefused)) throw e;
          deps.logger.warn("tochka webhook refused", {
            request_id: requestState.requestId,
            error: e.message,
          });
          entry("tochka", "invalid_signature");
          throw new ApiError("invalid_token", "Подпись вебхука не прошла проверку ключом банка");
        }
        const account =
          notice.webhookType === "incomingPayment" && notice.account
            ? deps.accountByNumber(notice.account.number, notice.account.bik)
            : null;
        const tochkaAccount = account?.bank === "tochka" ? account : null;
        const synced = tochkaAccount ? deps.syncNow(tochkaAccount.id) : false;
        entry(tochkaAccount?.id ?? "tochka", "ok", {
          webhook_type: notice.webhookType,
          payment_id: notice.paymentId,
          sync: synced,
        });
        return { received: true, sync: synced };
      },
      {
        bodyPolicy: { kind: "text", limit: WEBHOOK_LIMIT },
        clientLimit: {},
        detail: {
          summary: "Tochka Bank's webhook (incomingPayment runs the account's sync at once)",
          tags: ["banks"],
          security: [],
          description:
            "text/plain: a JWT signed by the bank (RS256), verified with SVC_TOCHKA_WEBHOOK_KEY. A body that does not " +
            "verify is 401 invalid_token and audited (tochka.webhook, outcome invalid_signature).",
        } as never,
      },
    );
}
