// The admin API's bearer check: constant-time against SVC_ADMIN_TOKEN. With no admin token
// configured the admin API does not exist (404 everywhere).
import { Elysia } from "elysia";
import { bearerValue, secretEquals } from "../auth/tokens";
import { ApiError } from "../core/errors";
import { withRequestState } from "./request-state";

function checkAdminBearer(adminToken: string | null, authorization: string | null): void {
  if (adminToken === null) throw new ApiError("not_found");
  const value = bearerValue(authorization);
  if (value === null) throw new ApiError("invalid_token_format", "Отсутствует заголовок Authorization");
  if (!secretEquals(value, adminToken)) throw new ApiError("invalid_token");
}

export function adminAuth(adminToken: string | null) {
  const plugin = new Elysia({ name: "admin-auth" })
    .use(withRequestState)
    .derive({ as: "scoped" }, ({ request, requestState }) => {
      checkAdminBearer(adminToken, request.headers.get("authorization"));
      return { actor: { requestId: requestState.requestId, ip: requestState.clientIp } };
    });
  // Without an admin token, every method on every path under the prefix reaches the check above
  // and is 404 (a 405 with an Allow header would reveal the routes).
  if (adminToken === null) plugin.all("/*", () => undefined, { detail: { hide: true } });
  return plugin;
}
