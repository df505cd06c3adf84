// The HTTP core: small route-agnostic plugins, in the order they act — request id, client
// address, body parsing by each route's declared policy, limits per client address where routes
// declare them, the error envelope, the access log.
// Nothing here names a feature's path; a route with a new kind of body declares it.
import { Elysia } from "elysia";
import type { AddressLimiter } from "../auth/address-limiter";
import type { IpRange } from "../auth/ip";
import type { ApiError } from "../core/errors";
import type { Logger } from "../core/logger";
import type { Metrics } from "../core/metrics";
import { accessLogPlugin } from "./access-log";
import { type BodyPolicies, bodyParsing } from "./body-policy";
import { clientIpPlugin, type SocketIp } from "./client-ip";
import { type ClientLimits, clientLimiting } from "./client-limit";
import { errorEnvelopePlugin } from "./error-envelope";
import { requestIdPlugin } from "./request-id";

export interface HttpCoreDeps {
  logger: Logger;
  trustedProxies: IpRange[];
  socketIp: SocketIp;
  /** Filled once the app is built: method and path pattern of every route, for 405 answers. */
  routes: () => { method: string; path: string }[];
  /** Filled once the app is built: each route's declared body policy. */
  bodyPolicies: BodyPolicies;
  /** Filled once the app is built: each route's declared limit per client address. */
  clientLimits: ClientLimits;
  /** Counts per client address (SVC_PUBLIC_RATE_LIMIT_PER_MINUTE). */
  clientLimiter: AddressLimiter;
  metrics?: Pick<Metrics, "httpRequest">;
  /** Told of every request as it arrives (threads of long work step aside when one comes). */
  requestArrived?: () => void;
  /** See ErrorEnvelopeDeps.protocolAnswer. */
  protocolAnswer?: (request: Request, error: ApiError) => Response | null;
}

export function httpCore(deps: HttpCoreDeps) {
  const requestArrived = deps.requestArrived;
  return new Elysia({ name: "http-core" })
    .onRequest(() => requestArrived?.())
    .use(requestIdPlugin())
    .use(clientIpPlugin(deps))
    .use(bodyParsing(deps.bodyPolicies))
    .use(clientLimiting(deps.clientLimiter, deps.clientLimits))
    .use(errorEnvelopePlugin(deps))
    .use(accessLogPlugin(deps));
}
