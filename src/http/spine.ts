// Cross-cutting HTTP behaviour for every route: request id, body limits, JSON parsing (and form
// parsing for the admin pages), the one
// error handler that builds the envelope, 404/405, and one access-log line per request.
import { Elysia } from "elysia";
import type { IpRange } from "../auth/ip";
import { newId } from "../core/clock";
import { ApiError, errorEnvelope, invalidRequestBody, validationError } from "../core/errors";
import type { Logger } from "../core/logger";
import type { Metrics } from "../core/metrics";
import { resolveClientIp } from "./client-ip";

export interface RequestState {
  requestId: string;
  startedAt: number;
  clientIp: string | null;
  apiTokenId: string | null;
}

const states = new WeakMap<Request, RequestState>();

export function requestState(request: Request): RequestState {
  let state = states.get(request);
  if (!state) {
    // Only reachable for requests that bypassed onRequest (should not happen); keep a valid id.
    state = { requestId: newId(), startedAt: performance.now(), clientIp: null, apiTokenId: null };
    states.set(request, state);
  }
  return state;
}

/** Marks a body that is not valid JSON; JSON routes turn it into 400 "invalid request body" after auth,
 *  the agent endpoint into JSON-RPC -32700. */
export const INVALID_JSON = Object.freeze({ __invalidJson: true as const });
export type InvalidJson = typeof INVALID_JSON;

export function isInvalidJson(body: unknown): body is InvalidJson {
  return body === INVALID_JSON;
}

/** JSON nested deeper than this is refused like invalid JSON (no route takes more than a few levels). */
export const MAX_JSON_DEPTH = 64;

const plainToPrimitive = () => "[object Object]";

/**
 * Makes a parsed body safe for the framework's validation messages, which interpolate the
 * offending value into a string: false when it nests deeper than MAX_JSON_DEPTH (the
 * interpolation recurses), and an object carrying its own "toString" or "valueOf" member (never
 * callable in JSON) gets a hidden Symbol.toPrimitive so that the interpolation cannot throw. The
 * data itself is unchanged.
 */
export function hardenJson(value: unknown, depth = 0): boolean {
  if (typeof value !== "object" || value === null) return true;
  if (depth >= MAX_JSON_DEPTH) return false;
  if (Array.isArray(value)) return value.every((v) => hardenJson(v, depth + 1));
  if (Object.hasOwn(value, "toString") || Object.hasOwn(value, "valueOf")) {
    Object.defineProperty(value, Symbol.toPrimitive, { value: plainToPrimitive });
  }
  return Object.values(value).every((v) => hardenJson(v, depth + 1));
}

// The router ignores one trailing slash ("/x/" and "/x" are the same route); so do the body
// limits and the 405 answers.
const trimSlash = (p: string) => (p.length > 1 && p.endsWith("/") ? p.slice(0, -1) : p);

/** An HTML form post (`application/x-www-form-urlencoded`): field name to value; a repeated
 *  name keeps its last value. */
export type FormBody = Record<string, string>;

/** Only the admin pages take HTML form posts; every API path (the admin API included) accepts
 *  JSON alone, so a form body there stays "invalid request body" as before. */
export function acceptsFormBody(rawPath: string): boolean {
  const path = trimSlash(rawPath);
  if (path === "/admin/api" || path.startsWith("/admin/api/")) return false;
  return path === "/admin" || path.startsWith("/admin/");
}

export const MB = 1024 * 1024;
export const BODY_LIMITS = {
  agent: 16 * 1024,
  paymentUpload: 10 * MB,
  statementImport: 50 * MB,
  default: 1 * MB,
};

/** Routes that read a multipart body themselves, and their limits. */
const MULTIPART_UPLOADS = new Map([
  ["/api/v1/integration/payments/imports", BODY_LIMITS.paymentUpload],
  ["/api/v1/integration/statements/import", BODY_LIMITS.statementImport],
  ["/admin/statements/import", BODY_LIMITS.statementImport],
]);

export function streamsMultipart(method: string, rawPath: string): boolean {
  return method === "POST" && MULTIPART_UPLOADS.has(trimSlash(rawPath));
}

export function bodyLimitFor(method: string, rawPath: string): number {
  const path = trimSlash(rawPath);
  if (path === "/api/v1/mcp") return BODY_LIMITS.agent;
  if (method === "POST") return MULTIPART_UPLOADS.get(path) ?? BODY_LIMITS.default;
  return BODY_LIMITS.default;
}

const REQUEST_ID_RE = /^[\x20-\x7e]{1,128}$/;

export interface SpineDeps {
  logger: Logger;
  trustedProxies: IpRange[];
  /** The socket peer address; under app.handle() (tests) there is no socket. */
  socketIp: (
    request: Request,
    server: { requestIP?(r: Request): { address: string } | null } | null,
  ) => string | null;
  /** Filled once the app is built: method and path pattern of every route, for 405 answers. */
  routes: () => { method: string; path: string }[];
  /** Counts every answered request (by route pattern; "unmatched" for paths no route has). */
  metrics?: Pick<Metrics, "httpRequest">;
}

/** Reads a request body up to `limit` bytes; throws 413 as soon as it is exceeded. */
export async function readBodyLimited(request: Request, limit: number): Promise<Uint8Array> {
  if (!request.body) return new Uint8Array();
  // A declared length within the limit (larger ones were refused before reading) is read in one
  // go, which is much cheaper than pulling chunks; the size is still checked afterwards.
  const declared = request.headers.get("content-length");
  if (declared !== null && /^\d+$/.test(declared) && Number(declared) <= limit) {
    const bytes = new Uint8Array(await request.arrayBuffer());
    if (bytes.byteLength > limit) throw payloadTooLarge(limit);
    return bytes;
  }
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > limit) {
      await reader.cancel().catch(() => {});
      throw payloadTooLarge(limit);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}

export function payloadTooLarge(limit: number): ApiError {
  // The rest of the body is never read: the connection cannot be reused, so say so and close it
  // (otherwise it lingers until the idle timeout, and a graceful shutdown waits for it).
  return new ApiError("payload_too_large", undefined, { limit_bytes: limit }, { connection: "close" });
}

function pathPatternMatches(pattern: string, path: string): boolean {
  const a = trimSlash(pattern).split("/");
  const b = trimSlash(path).split("/");
  if (a.length !== b.length) return a[a.length - 1] === "*" && b.length >= a.length - 1;
  return a.every((seg, i) => seg.startsWith(":") || seg === "*" || seg === b[i]);
}

function allowedMethods(routes: { method: string; path: string }[], path: string): string[] {
  const methods = new Set<string>();
  for (const r of routes) {
    if (r.method !== "ALL" && pathPatternMatches(r.path, path)) methods.add(r.method);
  }
  return [...methods];
}

export function httpSpine(deps: SpineDeps) {
  return new Elysia({ name: "http-spine" })
    .onRequest(({ request, set, server }) => {
      const incoming = request.headers.get("x-request-id");
      const requestId = incoming && REQUEST_ID_RE.test(incoming) ? incoming : newId();
      const clientIp = resolveClientIp(
        deps.socketIp(request, server as never),
        request.headers.get("x-forwarded-for"),
        deps.trustedProxies,
      );
      states.set(request, { requestId, startedAt: performance.now(), clientIp, apiTokenId: null });
      set.headers["x-request-id"] = requestId;

      // Over-limit bodies are refused before anything reads them.
      const length = request.headers.get("content-length");
      if (length !== null && request.method !== "GET") {
        const limit = bodyLimitFor(request.method, new URL(request.url).pathname);
        if (Number(length) > limit) throw payloadTooLarge(limit);
      }
    })
    .onParse({ as: "global" }, async ({ request, contentType }) => {
      // Multipart uploads are streamed by their own route. Anywhere else a multipart body is not
      // JSON: left to the framework it would become fields JSON-decoded without the checks below.
      if (contentType?.startsWith("multipart/form-data")) {
        return streamsMultipart(request.method, new URL(request.url).pathname) ? undefined : INVALID_JSON;
      }
      const path = new URL(request.url).pathname;
      const limit = bodyLimitFor(request.method, path);
      const bytes = await readBodyLimited(request, limit);
      if (bytes.byteLength === 0) return null;
      try {
        const text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes);
        if (contentType?.startsWith("application/x-www-form-urlencoded") && acceptsFormBody(path)) {
          return Object.fromEntries(new URLSearchParams(text)) as FormBody;
        }
        const value = JSON.parse(text) as unknown;
        return hardenJson(value) ? value : INVALID_JSON;
      } catch {
        return INVALID_JSON;
      }
    })
    .onError({ as: "global" }, ({ code, error, set, request, path }) => {
      const state = requestState(request);
      const apiError = toApiError(code, error, request, path, deps);
      if (apiError.code === "internal_error") {
        deps.logger.error("unhandled error", {
          request_id: state.requestId,
          error: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
          stack: error instanceof Error ? error.stack : undefined,
        });
      }
      set.status = apiError.status;
      set.headers["x-request-id"] = state.requestId;
      set.headers["content-type"] = "application/json; charset=utf-8";
      for (const [k, v] of Object.entries(apiError.headers ?? {})) set.headers[k] = v;
      return errorEnvelope(apiError);
    })
    .onAfterResponse({ as: "global" }, ({ request, set, route }) => {
      const state = states.get(request);
      if (!state) return;
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

function toApiError(
  code: unknown,
  error: unknown,
  request: Request,
  path: string,
  deps: SpineDeps,
): ApiError {
  if (error instanceof ApiError) return error;
  // Errors thrown while parsing (our 413) arrive wrapped in Elysia's ParseError.
  const cause = (error as { cause?: unknown } | null)?.cause;
  if (cause instanceof ApiError) return cause;
  switch (code) {
    case "NOT_FOUND": {
      const methods = allowedMethods(deps.routes(), path);
      if (methods.length > 0 && !methods.includes(request.method)) {
        return new ApiError(
          "method_not_allowed",
          undefined,
          { allow: methods },
          { allow: methods.join(", ") },
        );
      }
      return new ApiError("not_found");
    }
    case "PARSE":
      return invalidRequestBody();
    case "VALIDATION":
      try {
        return fromValidation(error);
      } catch {
        // Describing the failure failed (an odd value in the message): still the client's mistake.
        return validationError("body", "Ошибка валидации запроса");
      }
    default:
      return new ApiError("internal_error");
  }
}

interface TypeboxIssue {
  path: string;
  message: string;
  schema?: { format?: string };
  value?: unknown;
}

// Elysia's validation errors carry TypeBox issues. A malformed UUID in the body or the path is
// "invalid request body" (before field validation); anything else is validation_error naming the field.
function fromValidation(error: unknown): ApiError {
  const e = error as { type?: string; all?: TypeboxIssue[]; value?: unknown };
  const issues = (e.all ?? []).filter((i) => typeof i.path === "string");
  const where = e.type ?? "body";
  if ((where === "body" || where === "params") && (e.value === undefined || e.value === null)) {
    return invalidRequestBody();
  }
  if (where === "body" || where === "params") {
    const badUuid = issues.find((i) => i.schema?.format === "uuid" && typeof i.value === "string");
    if (badUuid) return invalidRequestBody({ field: fieldName(badUuid.path) });
  }
  const first = issues[0];
  if (!first) return validationError(where, "Ошибка валидации запроса");
  const field = fieldName(first.path);
  return validationError(field, `Неверное значение поля ${field}: ${first.message}`);
}

function fieldName(pointer: string): string {
  return (
    pointer
      .replace(/^\//, "")
      .split("/")
      .map((seg) => (/^\d+$/.test(seg) ? `[${seg}]` : seg))
      .join(".")
      .replace(/\.\[/g, "[") || "body"
  );
}
