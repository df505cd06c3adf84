// The 2026-07-28 revision of the agent protocol: no initialize and no session; every request
// carries its protocol version and the client's capabilities in `_meta`, and routing headers
// (MCP-Protocol-Version, Mcp-Method, Mcp-Name) that must agree with the body. Errors are
// JSON-RPC errors with HTTP statuses of their own; results say `resultType` and carry the
// server's identity in `_meta`, and lists say how long they may be cached and by whom.
import {
  ADVERTISED_PROTOCOL_VERSIONS,
  isModernProtocolVersion,
  isPlainObject,
  MODERN_PROTOCOL_VERSIONS,
  RPC_HEADER_MISMATCH,
  RPC_INVALID_PARAMS,
  RPC_UNSUPPORTED_VERSION,
  RpcError,
  type RpcRequest,
} from "./protocol";

const META_PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion";
const META_CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities";
const META_CLIENT_INFO = "io.modelcontextprotocol/clientInfo";
const META_SERVER_INFO = "io.modelcontextprotocol/serverInfo";

/** How long a client may keep tools/list and server/discover answers (they change with releases). */
export const LIST_TTL_MS = 300_000;

function metaOf(body: unknown): Record<string, unknown> | null {
  if (!isPlainObject(body) || !isPlainObject(body.params)) return null;
  return isPlainObject(body.params._meta) ? body.params._meta : null;
}

/**
 * Whether a request is in the stateless revision: its `_meta` names a protocol version, or (a
 * request that forgot its `_meta`) its MCP-Protocol-Version header names the modern revision.
 * Everything else is a session request, handled exactly as before.
 */
export function isModernRequest(body: unknown, headerVersion: string | null): boolean {
  const meta = metaOf(body);
  if (meta !== null && META_PROTOCOL_VERSION in meta) return true;
  return isModernProtocolVersion(headerVersion?.trim());
}

/** A JSON-RPC error of the revision, with its HTTP status. */
export class ModernRpcError extends RpcError {
  constructor(
    readonly httpStatus: number,
    ...args: ConstructorParameters<typeof RpcError>
  ) {
    super(...args);
  }
}

/** A header value, trimmed; `=?base64?…?=` (how a client sends a value that is not plain ASCII) decoded. */
function headerValue(headers: Headers, name: string): string | null {
  const raw = headers.get(name);
  if (raw === null) return null;
  const value = raw.trim();
  const wrapped = /^=\?base64\?([A-Za-z0-9+/=]*)\?=$/i.exec(value);
  if (!wrapped) return value;
  return Buffer.from(wrapped[1]!, "base64").toString("utf8");
}

export interface ModernCall {
  version: string;
  clientInfo: unknown;
}

/**
 * The revision's own checks, in its order: the `_meta` fields (-32602), the routing headers
 * against the body (-32020; HTTP only: stdio has no headers), then the version (-32022). Throws
 * ModernRpcError (HTTP 400).
 */
export function checkModernRequest(message: RpcRequest, headers: Headers | null): ModernCall {
  const meta = metaOf(message);
  const version = meta?.[META_PROTOCOL_VERSION];
  if (typeof version !== "string" || version === "") {
    throw new ModernRpcError(
      400,
      RPC_INVALID_PARAMS,
      `Invalid params: missing _meta["${META_PROTOCOL_VERSION}"]`,
    );
  }
  if (!isPlainObject(meta?.[META_CLIENT_CAPABILITIES])) {
    throw new ModernRpcError(
      400,
      RPC_INVALID_PARAMS,
      `Invalid params: missing _meta["${META_CLIENT_CAPABILITIES}"]`,
    );
  }
  if (headers !== null) checkRoutingHeaders(message, version, headers);
  if (!(MODERN_PROTOCOL_VERSIONS as readonly string[]).includes(version)) {
    throw new ModernRpcError(400, RPC_UNSUPPORTED_VERSION, "Unsupported protocol version", {
      supported: [...ADVERTISED_PROTOCOL_VERSIONS],
      requested: version,
    });
  }
  return { version, clientInfo: meta?.[META_CLIENT_INFO] };
}

function checkRoutingHeaders(message: RpcRequest, version: string, headers: Headers): void {
  const mismatch = (header: string, got: string | null, body: string) =>
    new ModernRpcError(
      400,
      RPC_HEADER_MISMATCH,
      got === null
        ? `Header mismatch: ${header} header is missing (body value '${body}')`
        : `Header mismatch: ${header} header value '${got}' does not match body value '${body}'`,
    );
  const headerVersion = headerValue(headers, "mcp-protocol-version");
  if (headerVersion !== version) throw mismatch("MCP-Protocol-Version", headerVersion, version);
  const headerMethod = headerValue(headers, "mcp-method");
  if (headerMethod !== message.method) throw mismatch("Mcp-Method", headerMethod, message.method);
  if (message.method === "tools/call") {
    const name =
      isPlainObject(message.params) && typeof message.params.name === "string" ? message.params.name : "";
    const headerName = headerValue(headers, "mcp-name");
    if (headerName !== name) throw mismatch("Mcp-Name", headerName, name);
  }
}

/** What server/discover answers (the same over HTTP and over the stdio relay). */
export function discoverResult(instructions: string): Record<string, unknown> {
  return { supportedVersions: [...ADVERTISED_PROTOCOL_VERSIONS], capabilities: { tools: {} }, instructions };
}

export interface ServerInfo {
  name: string;
  version: string;
}

/** A result of the revision: `resultType`, the server's identity in `_meta` (kept beside what the
 *  result carries there already), and for lists the caching hints. What a caller sees depends on
 *  its token, so nothing is ever shared between callers (`cacheScope: "private"`). */
export function modernResult(
  result: Record<string, unknown>,
  server: ServerInfo,
  cache: { ttlMs: number } | null = null,
): Record<string, unknown> {
  const meta = isPlainObject(result._meta) ? result._meta : {};
  return {
    resultType: "complete",
    ...result,
    ...(cache ? { ttlMs: cache.ttlMs, cacheScope: "private" } : {}),
    _meta: { ...meta, [META_SERVER_INFO]: server },
  };
}
