// The agent endpoint over Streamable HTTP: POST /api/v1/mcp (JSON-RPC 2.0, one message per
// request, answered with application/json, never SSE) and DELETE /api/v1/mcp (end a session).
// GET is not registered, so the HTTP core answers 405 with `Allow: POST, DELETE`.
//
// Order of checks on both methods, first failure wins (HTTP envelopes):
//   token format (401) -> rate limit (429) -> token known (401) -> IP (403 forbidden_ip)
//   -> Origin (403 forbidden_origin) -> purpose (403 forbidden_purpose) -> scope (403 forbidden_scope)
//   -> MCP-Protocol-Version header (400 validation_error) -> session store reachable (503).
// Origin sits after the IP check so that every request that reaches a token is counted and
// rate limited like any other, and before purpose so that a browser page holding some token
// learns nothing about what that token may do. Then JSON-RPC: parse (-32700), envelope (-32600),
// session (-32600), method (-32601), params (-32602); tool-level errors are results with isError.
import { Elysia } from "elysia";
import type { Principal, TokenGuard } from "../auth/guard";
import { ApiError, apiErrorOf, validationError } from "../core/errors";
import { errorText, type Logger } from "../core/logger";
import { bodyPolicyOption, readBody } from "../http/body-policy";
import { routeDoc, TOKEN_ERRORS } from "../http/docs";
import { type RequestState, type ResponseHeaders, withRequestState } from "../http/request-state";
import { authenticateRequest } from "../http/token-auth";
import type { AgentCall, AgentDispatcher } from "./dispatch";
import { isModernRequest } from "./modern";
import { createOriginPolicy } from "./origin";
import {
  isSupportedProtocolVersion,
  RPC_INTERNAL_ERROR,
  RpcError,
  rpcFailure,
  SUPPORTED_PROTOCOL_VERSIONS,
  salvageId,
} from "./protocol";

export const MCP_PATH = "/api/v1/mcp";

export interface McpRouteDeps {
  guard: TokenGuard;
  agents: AgentDispatcher;
  allowedOrigins: string[];
  logger: Logger;
  /** Where the endpoint is served; /api/v1/mcp (static tokens) unless given. */
  path?: string;
  /** An endpoint for OAuth access tokens (/mcp): how a refused caller learns where to sign in. */
  oauth?: { resourceMetadataUrl: string; scope: string };
}

/** Agent requests are small JSON-RPC messages (decisions §2). */
const AGENT_BODY_LIMIT = 16 * 1024;

export function mcpRoutes(deps: McpRouteDeps) {
  const originAllowed = createOriginPolicy(deps.allowedOrigins);

  /** The token checks, with Origin placed between IP and purpose (see the header comment). */
  async function authenticate(
    request: Request,
    state: RequestState,
    headers: ResponseHeaders,
  ): Promise<AgentCall> {
    const checkOrigin = () => {
      if (!originAllowed(request.headers.get("origin"))) throw new ApiError("forbidden_origin");
    };
    let principal: Principal;
    try {
      principal = await authenticateRequest(deps.guard, request, state, headers, {
        purpose: "mcp",
        scope: "read_statements",
        oauth: deps.oauth !== undefined,
      });
    } catch (e) {
      // The guard got past format, rate limit, token and IP: Origin comes before purpose and scope.
      if (e instanceof ApiError && (e.code === "forbidden_purpose" || e.code === "forbidden_scope"))
        checkOrigin();
      throw deps.oauth ? oauthChallenge(e, deps.oauth) : e;
    }
    checkOrigin();
    return { state, principal, transport: "http", sessionId: null };
  }

  /** A session request's MCP-Protocol-Version header, if any, must name a session revision. */
  function checkSessionVersionHeader(request: Request): void {
    const version = request.headers.get("mcp-protocol-version");
    if (version !== null && !isSupportedProtocolVersion(version)) {
      throw validationError(
        "MCP-Protocol-Version",
        `Неподдерживаемая версия протокола MCP; поддерживаются: ${SUPPORTED_PROTOCOL_VERSIONS.join(", ")}`,
        { supported: [...SUPPORTED_PROTOCOL_VERSIONS] },
      );
    }
  }

  async function handle(
    request: Request,
    state: RequestState,
    readMessage: () => Promise<unknown>,
    headers: ResponseHeaders,
  ) {
    const call = await authenticate(request, state, headers);
    // The body is read only now, for a token that passed.
    const body = await readMessage();
    if (isModernRequest(body, request.headers.get("mcp-protocol-version"))) {
      return deps.agents.modernRequest(call, body, request.headers);
    }
    checkSessionVersionHeader(request);
    return deps.agents.sessionRequest(call, body, request.headers.get("mcp-session-id"), headers);
  }

  const path = deps.path ?? MCP_PATH;
  return new Elysia({ name: `mcp-endpoint:${path}` })
    .use(withRequestState)
    .use(bodyPolicyOption)
    .post(
      path,
      async (ctx) => {
        const { request, requestState: state, set } = ctx;
        const headers = set.headers as ResponseHeaders;
        try {
          return await handle(request, state, () => readBody(ctx), headers);
        } catch (e) {
          // Ours, or an error that says how it is answered (the shared database not answering:
          // the envelope's 503, as on REST, never a JSON-RPC internal error).
          if (apiErrorOf(e)) throw e;
          const id = salvageId(ctx.body);
          deps.logger.error("agent request failed", {
            request_id: state.requestId,
            error: errorText(e),
            stack: e instanceof Error ? e.stack : undefined,
          });
          return rpcFailure(
            id,
            new RpcError(RPC_INTERNAL_ERROR, `Internal error; request id ${state.requestId}`),
          );
        }
      },
      {
        // Read by the handler once the token checks passed; an unreadable body is answered in
        // JSON-RPC (-32700).
        bodyPolicy: { kind: "json", limit: AGENT_BODY_LIMIT, invalid: "route", read: "route" },
        detail: routeDoc(
          "agents",
          "Agent endpoint (MCP Streamable HTTP, JSON-RPC 2.0)",
          [
            ...TOKEN_ERRORS,
            "forbidden_origin",
            "validation_error",
            "payload_too_large",
            "service_unavailable",
          ],
          {
            description:
              "One JSON-RPC message per request, in either revision. Sessions (2025-11-25 and earlier): " +
              "initialize, notifications, ping, tools/list, tools/call; JSON-RPC errors come with HTTP 200; " +
              "Mcp-Session-Id is required on everything but initialize. Stateless (2026-07-28): every request " +
              'carries _meta["io.modelcontextprotocol/protocolVersion"] and clientCapabilities, and the ' +
              "MCP-Protocol-Version, Mcp-Method (and for tools/call Mcp-Name) headers; server/discover, " +
              "tools/list, tools/call; its errors carry HTTP 400 or 404. Notifications get 202 with an empty body.",
          },
        ),
      },
    )
    .delete(
      path,
      async ({ request, requestState: state, set }) => {
        const call = await authenticate(request, state, set.headers as ResponseHeaders);
        checkSessionVersionHeader(request);
        const sessionId = request.headers.get("mcp-session-id");
        if (!sessionId) throw validationError("Mcp-Session-Id", "Нужен заголовок Mcp-Session-Id");
        await deps.agents.endSession(call, sessionId);
        return new Response(null, { status: 204 });
      },
      {
        detail: routeDoc(
          "agents",
          "End an agent session",
          [...TOKEN_ERRORS, "forbidden_origin", "validation_error", "service_unavailable"],
          {
            success: { 204: "Session ended (also for an unknown session)" },
            description:
              "Idempotent. Another token's session id is answered 204 and that session stays alive.",
          },
        ),
      },
    );
}

/**
 * On the OAuth endpoint a refused token says where to sign in (RFC 9728 §5.1, RFC 6750 §3): 401
 * names the resource metadata and the scope; a token without the scope is 403 insufficient_scope,
 * which lets a client ask for it (step-up).
 */
function oauthChallenge(e: unknown, oauth: { resourceMetadataUrl: string; scope: string }): unknown {
  if (!(e instanceof ApiError)) return e;
  const base = `resource_metadata="${oauth.resourceMetadataUrl}", scope="${oauth.scope}"`;
  if (e.code === "invalid_token_format" || e.code === "invalid_token") {
    const error = e.code === "invalid_token" ? ', error="invalid_token"' : "";
    return new ApiError(e.code, e.message, e.details, {
      ...e.headers,
      "www-authenticate": `Bearer ${base}${error}`,
    });
  }
  if (e.code === "forbidden_scope") {
    return new ApiError(
      "insufficient_scope",
      undefined,
      { scope: oauth.scope },
      {
        ...e.headers,
        "www-authenticate": `Bearer error="insufficient_scope", ${base}`,
      },
    );
  }
  return e;
}
