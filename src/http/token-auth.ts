// Route-side use of the token guard: runs before body validation (so 401/403 come before 400)
// and sets the rate-limit headers. A body that could not be read is refused after it by the core.
import { Elysia } from "elysia";
import type { Authenticated, Principal, Requirement, TokenGuard } from "../auth/guard";
import { rateLimitHeaders } from "../auth/rate-limiter";
import { ApiError } from "../core/errors";
import { type RequestState, type ResponseHeaders, withRequestState } from "./request-state";

/** The principal, or a promise of it when the guard's limiter is a shared store. */
export function authenticateRequest(
  guard: TokenGuard,
  request: Request,
  state: RequestState,
  headers: ResponseHeaders,
  need: Requirement,
): Principal | Promise<Principal> {
  let authenticated: Authenticated | Promise<Authenticated>;
  try {
    authenticated = guard.authenticate(
      request.headers.get("authorization"),
      state.clientIp,
      need,
      // The access log names the token even when it is refused (403, 429).
      (apiTokenId) => {
        state.apiTokenId = apiTokenId;
      },
    );
  } catch (e) {
    throw withHeadersOf(e, headers);
  }
  if (authenticated instanceof Promise) {
    return authenticated.then(
      (a) => admitted(a, headers),
      (e: unknown) => {
        throw withHeadersOf(e, headers);
      },
    );
  }
  return admitted(authenticated, headers);
}

function admitted({ principal, rate }: Authenticated, headers: Record<string, string | number>): Principal {
  Object.assign(headers, rateLimitHeaders(rate));
  return principal;
}

/** A refusal's own headers (rate limit, Retry-After) go out with it. */
function withHeadersOf(e: unknown, headers: Record<string, string | number>): unknown {
  if (e instanceof ApiError && e.headers) Object.assign(headers, e.headers);
  return e;
}

export function tokenAuth(guard: TokenGuard, need: Requirement) {
  const plugin = new Elysia({ name: `token-auth:${need.purpose}:${need.scope ?? "-"}` }).use(
    withRequestState,
  );
  // Elysia decides once, from the function itself, whether to wait for a derive: the in-process
  // limiter gets one that never waits.
  if (guard.answersAtOnce) {
    return plugin.derive({ as: "scoped" }, ({ request, requestState, set }) => {
      const headers = set.headers as Record<string, string>;
      return { principal: authenticateRequest(guard, request, requestState, headers, need) as Principal };
    });
  }
  return plugin.derive({ as: "scoped" }, async ({ request, requestState, set }) => {
    const headers = set.headers as Record<string, string>;
    return { principal: await authenticateRequest(guard, request, requestState, headers, need) };
  });
}
