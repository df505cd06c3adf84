// JSON-RPC 2.0 and MCP protocol constants for the agent endpoint. Wire errors (JSON-RPC codes,
// answered with HTTP 200) are kept apart from the HTTP envelope errors (ApiError).

/** Newest first: a supported requested version is echoed, anything else gets the newest. */
export const SUPPORTED_PROTOCOL_VERSIONS = ["2025-11-25", "2025-06-18", "2025-03-26"] as const;
export type ProtocolVersion = (typeof SUPPORTED_PROTOCOL_VERSIONS)[number];
const LATEST_PROTOCOL_VERSION: ProtocolVersion = SUPPORTED_PROTOCOL_VERSIONS[0];

export function isSupportedProtocolVersion(value: unknown): value is ProtocolVersion {
  return typeof value === "string" && (SUPPORTED_PROTOCOL_VERSIONS as readonly string[]).includes(value);
}

export function negotiateProtocolVersion(requested: unknown): ProtocolVersion {
  return isSupportedProtocolVersion(requested) ? requested : LATEST_PROTOCOL_VERSION;
}

/** The stateless revision: every request carries its version and capabilities in `_meta`. */
export const MODERN_PROTOCOL_VERSIONS = ["2026-07-28"] as const;
/** What server/discover and the -32022 error list: the modern revision and the newest session one. */
export const ADVERTISED_PROTOCOL_VERSIONS = [...MODERN_PROTOCOL_VERSIONS, LATEST_PROTOCOL_VERSION];

export function isModernProtocolVersion(value: unknown): boolean {
  return typeof value === "string" && (MODERN_PROTOCOL_VERSIONS as readonly string[]).includes(value);
}

export const RPC_PARSE_ERROR = -32700;
export const RPC_INVALID_REQUEST = -32600;
export const RPC_METHOD_NOT_FOUND = -32601;
export const RPC_INVALID_PARAMS = -32602;
export const RPC_INTERNAL_ERROR = -32603;
/** 2026-07-28: a routing header (MCP-Protocol-Version, Mcp-Method, Mcp-Name) differs from the body. */
export const RPC_HEADER_MISMATCH = -32020;
/** 2026-07-28: the request needs a client capability the request did not declare. */
const RPC_MISSING_CAPABILITY = -32021;
/** 2026-07-28: the protocol version in `_meta` is not one this server speaks. */
export const RPC_UNSUPPORTED_VERSION = -32022;

export type RpcErrorCode =
  | typeof RPC_HEADER_MISMATCH
  | typeof RPC_MISSING_CAPABILITY
  | typeof RPC_UNSUPPORTED_VERSION
  | typeof RPC_PARSE_ERROR
  | typeof RPC_INVALID_REQUEST
  | typeof RPC_METHOD_NOT_FOUND
  | typeof RPC_INVALID_PARAMS
  | typeof RPC_INTERNAL_ERROR;

export type RpcId = string | number | null;

/** A JSON-RPC error, answered in the body (HTTP 200 in sessions; the 2026-07-28 revision gives
 *  some of them an HTTP status of their own, see modern.ts). */
export class RpcError extends Error {
  constructor(
    readonly code: RpcErrorCode,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
    this.name = "RpcError";
  }
}

export interface RpcRequest {
  jsonrpc: "2.0";
  id?: RpcId;
  method: string;
  params?: unknown;
}

export interface RpcSuccess {
  jsonrpc: "2.0";
  id: RpcId;
  result: unknown;
}

export interface RpcFailure {
  jsonrpc: "2.0";
  id: RpcId;
  error: { code: RpcErrorCode; message: string; data?: unknown };
}

export function rpcResult(id: RpcId, result: unknown): RpcSuccess {
  return { jsonrpc: "2.0", id, result };
}

export function rpcFailure(id: RpcId, error: RpcError): RpcFailure {
  const body: RpcFailure = { jsonrpc: "2.0", id, error: { code: error.code, message: error.message } };
  if (error.data !== undefined) body.error.data = error.data;
  return body;
}

/** A JSON object (not an array, not null). */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isValidId(value: unknown): value is RpcId {
  return typeof value === "string" || (typeof value === "number" && Number.isFinite(value)) || value === null;
}

/** The id to answer with even when the message is invalid: the message's own id if it has a usable one. */
export function salvageId(message: unknown): RpcId {
  if (isPlainObject(message) && "id" in message && isValidId(message.id)) return message.id;
  return null;
}

/**
 * Checks the JSON-RPC envelope of one message. Batches (arrays) are not supported (-32600);
 * a message without an `id` member is a notification.
 */
export function parseRpcMessage(message: unknown): RpcRequest {
  if (Array.isArray(message)) {
    throw new RpcError(RPC_INVALID_REQUEST, "Invalid Request: batch requests are not supported");
  }
  if (!isPlainObject(message)) throw new RpcError(RPC_INVALID_REQUEST, "Invalid Request: expected an object");
  if (message.jsonrpc !== "2.0") {
    throw new RpcError(RPC_INVALID_REQUEST, 'Invalid Request: "jsonrpc" must be "2.0"');
  }
  if ("id" in message && !isValidId(message.id)) {
    throw new RpcError(RPC_INVALID_REQUEST, 'Invalid Request: "id" must be a string or a number');
  }
  if (typeof message.method !== "string" || message.method.length === 0) {
    throw new RpcError(RPC_INVALID_REQUEST, 'Invalid Request: "method" must be a non-empty string');
  }
  if ("params" in message && message.params !== undefined && typeof message.params !== "object") {
    throw new RpcError(RPC_INVALID_REQUEST, 'Invalid Request: "params" must be an object');
  }
  const request: RpcRequest = { jsonrpc: "2.0", method: message.method, params: message.params };
  if ("id" in message) request.id = message.id as RpcId;
  return request;
}

export function isNotification(request: RpcRequest): boolean {
  return !("id" in request);
}

/** The params of tools/call; a malformed params object is -32602 (bad tool arguments are not). */
export function parseToolCallParams(params: unknown): { name: string; arguments: Record<string, unknown> } {
  if (!isPlainObject(params)) throw new RpcError(RPC_INVALID_PARAMS, "Invalid params: expected an object");
  if (typeof params.name !== "string" || params.name.length === 0) {
    throw new RpcError(RPC_INVALID_PARAMS, 'Invalid params: "name" must be a non-empty string');
  }
  const args = params.arguments;
  if (args !== undefined && args !== null && !isPlainObject(args)) {
    throw new RpcError(RPC_INVALID_PARAMS, 'Invalid params: "arguments" must be an object');
  }
  return { name: params.name, arguments: (args as Record<string, unknown> | undefined) ?? {} };
}
