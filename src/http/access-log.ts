// One access-log line per answered request (and its count for /metrics, where kept), with the
// status of the response actually sent: a route that builds its own Response (OAuth answers, the
// agent endpoint's 202 and 4xx) sets it there, not on the context.
import { Elysia } from "elysia";
import type { Logger } from "../core/logger";
import type { Metrics } from "../core/metrics";
import { type RequestState, withRequestState } from "./request-state";

export function accessLogPlugin(deps: { logger: Logger; metrics?: Pick<Metrics, "httpRequest"> }) {
  return new Elysia({ name: "access-log" }).use(withRequestState).onAfterResponse({ as: "global" }, (ctx) => {
    const state = (ctx as unknown as { requestState?: RequestState }).requestState;
    if (!state) return;
    const { request, set, route } = ctx;
    const ms = performance.now() - state.startedAt;
    const status = sentStatus(ctx as unknown as { responseValue?: unknown }, set.status);
    deps.metrics?.httpRequest(route || "unmatched", request.method, status, ms / 1000);
    deps.logger.info("request", {
      request_id: state.requestId,
      method: request.method,
      route: route || new URL(request.url).pathname,
      status,
      duration_ms: Math.round(ms * 100) / 100,
      api_token_id: state.apiTokenId,
      ip: state.clientIp,
    });
  });
}

/** The status that went out: the route's own Response carries it; otherwise the context's. */
function sentStatus(ctx: { responseValue?: unknown }, status: number | string | undefined): number {
  const sent = ctx.responseValue;
  if (sent instanceof Response) return sent.status;
  return typeof status === "number" ? status : 200;
}
