// The admin API's bearer check: constant-time against SVC_ADMIN_TOKEN. With no admin token
// configured the admin API does not exist (404 everywhere). A wrong bearer counts against its
// client address's limit and is audited once per address and window (see client-limit.ts); the
// right one is never refused.
import { Elysia } from "elysia";
import type { AddressLimiter } from "../auth/address-limiter";
import { bearerValue, secretEquals } from "../auth/tokens";
import { ApiError } from "../core/errors";
import { type RefusalAudit, refusedBearer } from "./client-limit";
import { type RequestState, withRequestState } from "./request-state";

/** Where refused bearers are counted and audited. */
export interface BearerRefusals {
  limiter: AddressLimiter;
  audit?: RefusalAudit;
}

function checkAdminBearer(
  adminToken: string | null,
  authorization: string | null,
  state: RequestState,
  refusals: BearerRefusals,
): void {
  if (adminToken === null) throw new ApiError("not_found");
  const value = bearerValue(authorization);
  if (value === null) throw new ApiError("invalid_token_format", "Отсутствует заголовок Authorization");
  if (!secretEquals(value, adminToken)) throw refusedBearer(refusals.limiter, state, refusals.audit);
}

export function adminAuth(adminToken: string | null, refusals: BearerRefusals) {
  const plugin = new Elysia({ name: "admin-auth" })
    .use(withRequestState)
    .derive({ as: "scoped" }, ({ request, requestState }) => {
      checkAdminBearer(adminToken, request.headers.get("authorization"), requestState, refusals);
      return { actor: { requestId: requestState.requestId, ip: requestState.clientIp } };
    });
  // Without an admin token, every method on every path under the prefix reaches the check above
  // and is 404 (a 405 with an Allow header would reveal the routes).
  if (adminToken === null) plugin.all("/*", () => undefined, { detail: { hide: true } });
  return plugin;
}
