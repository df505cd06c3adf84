// Limits per client address (decisions §20). A route that needs no token declares
// `clientLimit: {}` in its options (or `{ refuse }`, to answer a refusal in its own protocol: an
// OAuth error body, a DirectBank ResultBank); every request to it is counted against
// SVC_PUBLIC_RATE_LIMIT_PER_MINUTE for its client address (the resolver's, behind trusted proxies
// the forwarded one), before its body is read. Over the limit: 429 with Retry-After. Bearers that
// are refused (a wrong admin or metrics bearer) count against the same limit through
// `refusedBearer`, and are audited once per address and window. No route path is named here.
import { Elysia } from "elysia";
import { type AddressLimiter, addressRefusal } from "../auth/address-limiter";
import { ApiError } from "../core/errors";
import { OwnAnswer } from "./error-envelope";
import { type RequestState, withRequestState } from "./request-state";

export interface ClientLimit {
  /** The route's own 429 (its body and headers); Retry-After is added. Default: the envelope's
   *  `rate_limited`. */
  refuse?: (retryAfterSeconds: number) => Response;
}

/** The limits the routes declared, by "METHOD /pattern" (filled once the app is built). */
export type ClientLimits = (method: string, route: string) => ClientLimit | undefined;

/** Where a route's declared limit is kept in its detail (the OpenAPI document shows it). */
export const CLIENT_LIMIT_DETAIL = "x-client-ip-limit";

/** The route option `clientLimit`, for route plugins to declare theirs with types. */
export const clientLimitOption = new Elysia({ name: "client-limit-option" }).macro({
  clientLimit: (limit: ClientLimit) => ({
    detail: { [CLIENT_LIMIT_DETAIL]: { per: "client address and minute", ...limit } } as Record<
      string,
      unknown
    >,
  }),
});

export function clientLimiting(limiter: AddressLimiter, limits: ClientLimits) {
  // Synchronous on purpose (no await, no returned call): the framework would otherwise make
  // every route's handler asynchronous. A refusal in the route's own words is thrown, and the
  // error envelope sends it as it is.
  return new Elysia({ name: "client-limiting" })
    .use(withRequestState)
    .onTransform({ as: "global" }, (ctx) => {
      const limit = limits(ctx.request.method, ctx.route);
      if (limit === undefined) return;
      const state = (ctx as unknown as { requestState: RequestState }).requestState;
      const decision = limiter.hit(state.clientIp);
      if (decision.allowed) return;
      if (limit.refuse === undefined) throw addressRefusal(decision);
      const answer = limit.refuse(decision.retryAfterSeconds);
      answer.headers.set("retry-after", String(decision.retryAfterSeconds));
      throw new OwnAnswer(answer);
    });
}

/** What a refused bearer is audited as (once per address and window). */
export type RefusalAudit = (outcome: "invalid_token" | "rate_limited", state: RequestState) => void;

/**
 * A bearer that was presented and is wrong: counted against the address's limit, audited when it
 * is the address's first refusal of the window and when it starts a lockout (never more often),
 * and answered 401 `invalid_token`, or 429 once the address is over its limit. A right bearer is
 * never counted nor refused: a lockout meant for guesses cannot lock the operator out.
 */
export function refusedBearer(limiter: AddressLimiter, state: RequestState, audit?: RefusalAudit): ApiError {
  const decision = limiter.hit(state.clientIp);
  if (decision.first) audit?.("invalid_token", state);
  if (decision.firstRefused) audit?.("rate_limited", state);
  return decision.allowed ? new ApiError("invalid_token") : addressRefusal(decision);
}
