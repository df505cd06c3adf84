// The operator's endpoints: GET /metrics (Prometheus text; 404 unless SVC_METRICS_TOKEN is set)
// and GET /readyz (readiness; /healthz stays liveness). Requests are counted by the access log.
import { timingSafeEqual } from "node:crypto";
import { Elysia } from "elysia";
import { ApiError } from "../core/errors";
import type { BearerRefusals } from "../http/admin-auth";
import { refusedBearer } from "../http/client-limit";
import { routeDoc } from "../http/docs";
import { withRequestState } from "../http/request-state";
import type { PrometheusMetrics } from "./metrics";
import { checkReadiness, type ReadinessDeps } from "./readiness";

function sameSecret(presented: string, expected: string): boolean {
  const a = Buffer.from(presented);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

export function opsRoutes(deps: {
  metrics: PrometheusMetrics | null;
  metricsToken: string | null;
  readiness: ReadinessDeps;
  /** Wrong bearers: counted per client address and audited once per window. */
  refusals: BearerRefusals;
}) {
  return new Elysia()
    .use(withRequestState)
    .get(
      "/metrics",
      async ({ request, requestState }) => {
        if (!deps.metrics || !deps.metricsToken) throw new ApiError("not_found");
        const header = request.headers.get("authorization") ?? "";
        const match = /^Bearer (\S+)$/.exec(header);
        if (!match) throw new ApiError("invalid_token_format");
        if (!sameSecret(match[1] as string, deps.metricsToken)) {
          throw refusedBearer(deps.refusals.limiter, requestState, deps.refusals.audit);
        }
        return new Response(await deps.metrics.text(), {
          headers: { "content-type": deps.metrics.contentType },
        });
      },
      {
        detail: routeDoc(
          "service",
          "Prometheus metrics (Bearer SVC_METRICS_TOKEN); 404 when that is unset",
          ["invalid_token_format", "invalid_token", "rate_limited", "not_found"],
          { security: "none" },
        ),
      },
    )
    .get(
      "/readyz",
      async () => {
        const readiness = await checkReadiness(deps.readiness);
        if (readiness.ready) return { status: "ready", checks: readiness.checks };
        const failing = Object.entries(readiness.checks)
          .filter(([, result]) => result !== "ok")
          .map(([name]) => name);
        throw new ApiError("service_unavailable", `Сервис не готов: ${failing.join(", ")}`, {
          failing,
          checks: readiness.checks,
        });
      },
      {
        detail: routeDoc(
          "service",
          "Readiness: database writable, migrations current, poller alive, export threads can start",
          ["service_unavailable"],
          { security: "none" },
        ),
      },
    );
}
