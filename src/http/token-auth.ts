// Route-side use of the token guard: runs before body validation (so 401/403 come before 400)
// and sets the rate-limit headers. A body that could not be read is refused after it by the core.
import { Elysia } from "elysia";
import type { Principal, Requirement, TokenGuard } from "../auth/guard";
import { rateLimitHeaders } from "../auth/rate-limiter";
import { ApiError } from "../core/errors";
import { type RequestState, withRequestState } from "./request-state";

export function authenticateRequest(
  guard: TokenGuard,
  request: Request,
  state: RequestState,
  headers: Record<string, string | number>,
  need: Requirement,
): Principal {
  try {
    const { principal, rate } = guard.authenticate(
      request.headers.get("authorization"),
      state.clientIp,
      need,
      // The access log names the token even when it is refused (403, 429).
      (apiTokenId) => {
        state.apiTokenId = apiTokenId;
      },
    );
    Object.assign(headers, rateLimitHeaders(rate));
    return principal;
  } catch (e) {
    if (e instanceof ApiError && e.headers) Object.assign(headers, e.headers);
    throw e;
  }
}

export function tokenAuth(guard: TokenGuard, need: Requirement) {
  return new Elysia({ name: `token-auth:${need.purpose}:${need.scope ?? "-"}` })
    .use(withRequestState)
    .derive({ as: "scoped" }, ({ request, requestState, set }) => {
      const headers = set.headers as Record<string, string>;
      return { principal: authenticateRequest(guard, request, requestState, headers, need) };
    });
}
