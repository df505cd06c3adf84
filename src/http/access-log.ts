// One access-log line per answered request (and its count for /metrics, where kept).
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
    const status = typeof set.status === "number" ? set.status : 200;
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
