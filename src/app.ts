// The HTTP application: the HTTP core plus every feature's routes. Tests call app.handle(request).
import { openapi } from "@elysiajs/openapi";
import { Elysia } from "elysia";
import pkg from "../package.json" with { type: "json" };
import { adminApi } from "./admin/api";
import { adminPages } from "./admin/pages";
import type { Services } from "./container";
import { errorText } from "./core/logger";
import { directbankProtocolAnswer, directbankRoutes } from "./directbank/routes";
import { apiReference } from "./http/api-reference";
import { BODY_POLICY_DETAIL, type BodyPolicy } from "./http/body-policy";
import type { SocketIp } from "./http/client-ip";
import { CLIENT_LIMIT_DETAIL, type ClientLimit } from "./http/client-limit";
import { httpCore } from "./http/core";
import { routeDoc } from "./http/docs";
import { registerFormats } from "./http/formats";
import type { RequestState } from "./http/request-state";
import { withoutTrailingSlash } from "./http/route-path";
import { agentDispatcher, mcpRoutes, relayRoutes } from "./mcp";
import { OAUTH_SCOPE } from "./oauth/protocol";
import { oauthRoutes } from "./oauth/routes";
import { homePage } from "./ops/home";
import { databaseWritableCheck } from "./ops/readiness";
import { opsRoutes } from "./ops/routes";
import { paymentRoutes } from "./payments/routes";
import { coverageRoutes } from "./statements/coverage-routes";
import { statementRoutes } from "./statements/routes";
import { tochkaWebhookRoutes } from "./sync/tochka-webhook-routes";

export interface AppOptions {
  /** How to find the socket peer address; the default asks Bun's server. */
  socketIp?: SocketIp;
  version?: string;
}

const defaultSocketIp: NonNullable<AppOptions["socketIp"]> = (request, server) =>
  server?.requestIP?.(request)?.address ?? null;

export function createApp(services: Services, options: AppOptions = {}) {
  registerFormats();
  let routeTable: { method: string; path: string }[] = [];
  const bodyPolicies = new Map<string, BodyPolicy>();
  const clientLimits = new Map<string, ClientLimit>();
  // The one agent pipeline behind /api/v1/mcp (static tokens), /mcp (OAuth) and the relay's paths.
  const agents = agentDispatcher({
    sessions: services.mcp.sessions,
    tools: services.mcp.tools,
    audit: services.agentAudit,
    now: () => services.clock.now(),
    logger: services.logger,
    version: options.version ?? pkg.version,
    metrics: services.metrics ?? undefined,
  });
  const agentEndpoint = {
    guard: services.guard,
    agents,
    allowedOrigins: services.config.mcpAllowedOrigins,
    logger: services.logger,
  };
  // Wrong admin, metrics and sign-in tokens: counted per client address, audited (and logged) for
  // an address's first refusal of a minute and the start of its lockout, never per attempt; the
  // entry names the address and the time, never what was sent. A request answers even if its
  // entry cannot be written.
  const refusals = (action: string, target: string) => ({
    limiter: services.clientLimiter,
    audit: (outcome: string, state: RequestState) => {
      services.logger.warn("bearer refused", {
        request_id: state.requestId,
        ip: state.clientIp,
        action,
        outcome,
      });
      try {
        services.admin.audit.record(
          action,
          target,
          { requestId: state.requestId, ip: state.clientIp },
          undefined,
          outcome,
        );
      } catch (e) {
        services.logger.error("audit write failed", {
          request_id: state.requestId,
          action,
          error: errorText(e),
        });
      }
    },
  });
  // Statement downloads, the same for the integration API and the admin pages.
  const download = {
    exports: services.exportQueries,
    exportThreads: services.exportThreads,
    logger: services.logger,
    timezone: services.config.timezone,
    now: () => services.clock.now(),
    metrics: services.metrics ?? undefined,
  };
  const app = new Elysia()
    .use(
      httpCore({
        logger: services.logger,
        trustedProxies: services.trustedProxies,
        socketIp: options.socketIp ?? defaultSocketIp,
        routes: () => routeTable,
        bodyPolicies: (method, route) => bodyPolicies.get(`${method} ${withoutTrailingSlash(route)}`),
        clientLimits: (method, route) => clientLimits.get(`${method} ${withoutTrailingSlash(route)}`),
        clientLimiter: services.clientLimiter,
        metrics: services.metrics ?? undefined,
        protocolAnswer: directbankProtocolAnswer,
        requestArrived: () => services.requestArrivals.arrived(),
      }),
    )
    .use(
      openapi({
        // The reference page is served by apiReference (offline, strict CSP); this serves the document.
        provider: null,
        // A path with a dot is taken for a static file and left out; the OAuth metadata
        // (/.well-known/…) must be in the document.
        exclude: { staticFile: false },
        path: "/docs",
        specPath: "/docs/json",
        documentation: {
          info: {
            title: "svc",
            version: options.version ?? pkg.version,
            description:
              "Bank statements for accounting systems (REST) and read-only bank data for AI agents (MCP). " +
              "Every error is {error: {code, message, details?}}; every response carries X-Request-Id.",
          },
          components: {
            securitySchemes: {
              bearer: { type: "http", scheme: "bearer", description: "svc_live_… or svc_test_… token" },
              adminToken: { type: "http", scheme: "bearer", description: "SVC_ADMIN_TOKEN" },
            },
          },
        },
      }),
    )
    .use(apiReference())
    .use(homePage())
    .get("/healthz", () => ({ status: "ok" }), {
      detail: routeDoc("service", "Liveness; 200 once migrations are applied", [], { security: "none" }),
    })
    .use(
      opsRoutes({
        metrics: services.metrics,
        metricsToken: services.config.metricsToken,
        refusals: refusals("metrics.refused", "metrics"),
        readiness: {
          databaseWritable: databaseWritableCheck(() => services.store.writable(), services.clock),
          clock: services.clock,
          migrations: () => services.store.migrationState(),
          poller: {
            lastPassAtMs: () => services.poller.lastPassAtMs,
            intervalMs: services.config.bankPollIntervalMs,
          },
          exportThreads: () => services.exportThreads.available(),
        },
      }),
    )
    .use(
      statementRoutes({
        guard: services.guard,
        service: services.statements,
        audit: services.audit,
        ...download,
      }),
    )
    .use(coverageRoutes({ guard: services.guard, access: services.access, coverage: services.coverage }))
    .use(
      tochkaWebhookRoutes({
        verifier: services.tochkaWebhooks,
        accountByNumber: (number, bik) => {
          const found = services.accounts.findByNumber(number, bik);
          return found ? services.accounts.findById(found.id) : null;
        },
        syncNow: (id) => {
          const due = services.syncs.trigger(id);
          if (due) services.syncRunner.kick();
          return due;
        },
        audit: services.audit,
        clock: services.clock,
        logger: services.logger,
      }),
    )
    .use(paymentRoutes({ guard: services.guard, service: services.payments }))
    .use(
      directbankRoutes({
        service: services.directbank,
        audit: services.audit,
        clock: services.clock,
        logger: services.logger,
      }),
    )
    .use(mcpRoutes(agentEndpoint))
    // The same endpoint for OAuth access tokens (agent hosts that sign in: Claude, ChatGPT, …).
    .use(
      mcpRoutes({
        ...agentEndpoint,
        path: "/mcp",
        oauth: {
          resourceMetadataUrl: `${services.config.publicUrl}/.well-known/oauth-protected-resource/mcp`,
          scope: OAUTH_SCOPE,
        },
      }),
    )
    .use(oauthRoutes(services.oauth))
    .use(relayRoutes({ guard: services.guard, agents }))
    .use(
      adminApi({
        oauth: services.oauth,
        admin: services.admin,
        statements: services.statements,
        sync: { service: services.syncs, kick: () => services.syncRunner.kick() },
        coverage: services.coverage,
        sandboxLog: services.sandboxLog,
        adminToken: services.config.adminToken,
        refusals: refusals("admin.api.refused", "admin-api"),
        directbankSettings: (id, accountId, version) =>
          services.directbank.settingsForOperator(id, accountId, version),
      }),
    )
    .use(
      adminPages({
        admin: services.admin,
        statements: services.statements,
        audit: services.audit,
        clock: services.clock,
        logger: services.logger,
        adminToken: services.config.adminToken,
        trustedProxies: services.trustedProxies,
        socketIp: options.socketIp ?? defaultSocketIp,
        signInRefusals: refusals("admin.ui.sign_in", "admin-ui"),
        banks: () => services.banks.names(),
        payments: services.payments,
        oauth: services.oauth,
        download,
        directbankSettings: (id, accountId) =>
          services.directbank.settingsForOperator(id, accountId, undefined),
        timezone: services.config.timezone,
        read: services.mcp.read,
        sync: { service: services.syncs, kick: () => services.syncRunner.kick() },
      }),
    );
  // A catch-all ("/admin/*") answers addresses no route has: it says nothing of a path's methods.
  routeTable = app.routes
    .filter((r) => !r.path.endsWith("*"))
    .map((r) => ({ method: r.method, path: r.path }));
  for (const r of app.routes) {
    const detail = (r.hooks as { detail?: Record<string, unknown> } | undefined)?.detail;
    const policy = detail?.[BODY_POLICY_DETAIL] as BodyPolicy | undefined;
    if (policy) bodyPolicies.set(`${r.method} ${withoutTrailingSlash(r.path)}`, policy);
    const limit = detail?.[CLIENT_LIMIT_DETAIL] as ClientLimit | undefined;
    if (limit) clientLimits.set(`${r.method} ${withoutTrailingSlash(r.path)}`, limit);
  }
  return app;
}

export type App = ReturnType<typeof createApp>;
