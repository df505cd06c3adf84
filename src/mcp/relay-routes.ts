// REST paths for the stdio relay `svc-mcp` (decisions §8):
//   GET  /api/v1/mcp/tools              -> {tools: [...]} exactly as tools/list
//   POST /api/v1/mcp/tools/{name}/call  -> the tool result object exactly as tools/call
// Same token checks as the HTTP transport (purpose mcp, scope read_statements, IP, rate limit),
// the same tool registry and access policy, the same audit with transport "stdio". The relay
// sends one UUIDv4 per process in X-MCP-Session-Id; it is recorded as the audit session id.
// Order of checks: token (401/429/403) -> X-MCP-Session-Id (400) -> body (400) -> tool (404).
import { Elysia } from "elysia";
import type { TokenGuard } from "../auth/guard";
import { ApiError, invalidRequestBody, validationError } from "../core/errors";
import { isUuidV4 } from "../core/ids";
import { bodyPolicyOption, DEFAULT_BODY_POLICY, isInvalidBody, readBody } from "../http/body-policy";
import { routeDoc, TOKEN_ERRORS } from "../http/docs";
import { type RequestState, type ResponseHeaders, withRequestState } from "../http/request-state";
import { authenticateRequest } from "../http/token-auth";
import type { AgentCall, AgentDispatcher } from "./dispatch";
import { isModernProtocolVersion, isSupportedProtocolVersion } from "./protocol";
import { MCP_PATH } from "./routes";

const RELAY_TOOLS_PATH = `${MCP_PATH}/tools`;
const RELAY_SESSION_HEADER = "X-MCP-Session-Id";

export interface RelayRouteDeps {
  guard: TokenGuard;
  agents: AgentDispatcher;
}

export function relayRoutes(deps: RelayRouteDeps) {
  /** The token checks, then the relay's process id; the host's revision is audited when known. */
  async function authenticate(
    request: Request,
    state: RequestState,
    headers: ResponseHeaders,
  ): Promise<AgentCall> {
    const principal = await authenticateRequest(deps.guard, request, state, headers, {
      purpose: "mcp",
      scope: "read_statements",
    });
    const sessionId = request.headers.get(RELAY_SESSION_HEADER);
    if (sessionId === null || !isUuidV4(sessionId)) {
      throw validationError(RELAY_SESSION_HEADER, "Нужен заголовок X-MCP-Session-Id с UUIDv4");
    }
    return {
      state,
      principal,
      transport: "stdio",
      sessionId: sessionId.toLowerCase(),
      revision: hostRevision(request),
    };
  }

  /** The agent host's protocol revision as the relay passes it on (MCP-Protocol-Version), if known. */
  function hostRevision(request: Request): string | undefined {
    const version = request.headers.get("mcp-protocol-version")?.trim();
    return isSupportedProtocolVersion(version) || isModernProtocolVersion(version) ? version : undefined;
  }

  function parseArguments(body: unknown): Record<string, unknown> {
    if (isInvalidBody(body)) throw invalidRequestBody();
    if (body === undefined || body === null || body === "") return {};
    if (typeof body !== "object" || Array.isArray(body)) {
      throw validationError("body", "Тело запроса должно быть объектом {arguments}");
    }
    const args = (body as { arguments?: unknown }).arguments;
    if (args === undefined || args === null) return {};
    if (typeof args !== "object" || Array.isArray(args)) {
      throw validationError("arguments", "Поле arguments должно быть объектом");
    }
    return args as Record<string, unknown>;
  }

  return new Elysia({ name: "mcp-relay" })
    .use(withRequestState)
    .use(bodyPolicyOption)
    .get(
      RELAY_TOOLS_PATH,
      async ({ request, requestState: state, set }) => {
        const call = await authenticate(request, state, set.headers as ResponseHeaders);
        return { tools: await deps.agents.toolList(call) };
      },
      {
        detail: routeDoc(
          "agents",
          "List agent tools (stdio relay)",
          [...TOKEN_ERRORS, "validation_error", "service_unavailable"],
          { description: "The same list as tools/list. Requires X-MCP-Session-Id (UUIDv4)." },
        ),
      },
    )
    .post(
      `${RELAY_TOOLS_PATH}/:name/call`,
      async (ctx) => {
        const { request, requestState: state, set, params } = ctx;
        const call = await authenticate(request, state, set.headers as ResponseHeaders);
        // The body is read only now, for a token that passed.
        const args = parseArguments(await readBody(ctx));
        const result = await deps.agents.toolCall(call, params.name, args, "not_found");
        if (result === null) {
          throw new ApiError("not_found", `Неизвестный инструмент: ${params.name}`, { tool: params.name });
        }
        return result;
      },
      {
        // The session header is checked before an unreadable body is refused (parseArguments).
        bodyPolicy: { ...DEFAULT_BODY_POLICY, invalid: "route", read: "route" },
        detail: routeDoc(
          "agents",
          "Call an agent tool (stdio relay)",
          [...TOKEN_ERRORS, "validation_error", "not_found", "service_unavailable"],
          {
            description:
              "Body {arguments}. Answers the tool result object as tools/call does; tool-level errors " +
              "are results with isError. Unknown tool: 404 not_found. Requires X-MCP-Session-Id (UUIDv4).",
          },
        ),
      },
    );
}
