// Route-side use of the token guard: runs before body validation (so 401/403 come before 400),
// sets the rate-limit headers, and rejects an unparseable JSON body once the caller is known.
import { Elysia } from "elysia";
import type { Principal, Requirement, TokenGuard } from "../auth/guard";
import { rateLimitHeaders } from "../auth/rate-limiter";
import { ApiError, invalidRequestBody } from "../core/errors";
import { isInvalidJson, requestState } from "./spine";

export function authenticateRequest(
  guard: TokenGuard,
  request: Request,
  headers: Record<string, string | number>,
  need: Requirement,
): Principal {
  const state = requestState(request);
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
  return new Elysia({ name: `token-auth:${need.purpose}:${need.scope ?? "-"}` }).derive(
    { as: "scoped" },
    ({ request, set, body }) => {
      const principal = authenticateRequest(guard, request, set.headers as Record<string, string>, need);
      if (isInvalidJson(body)) throw invalidRequestBody();
      return { principal };
    },
  );
}
