// Bodies: each route declares how its body is read — `bodyPolicy: { kind, limit }` in its options
// (or once for a group with `.guard`) — and this plugin reads it so: JSON (the default, 1 MB), an
// HTML form, or a stream the route reads itself (multipart uploads). No route path is named here.
//
// A body is read only once the route knows it may be (decisions §20). Before anything is read:
// over the limit is 413 (Content-Length), and a stream route that is sent anything but multipart
// is 415 unsupported_media_type. A declared body is then read after the route's derive hooks,
// where its token (or the admin bearer) is checked, and before its schema is: a request without a
// token is refused without its body ever being read or parsed. A route whose own checks come later
// (a session, a token checked in the handler) declares `read: "route"` and reads it with
// `readBody` once they pass. A body that cannot be read as declared becomes 400 "invalid request
// body", or is handed to routes that answer it themselves.
import { Elysia } from "elysia";
import { ApiError, invalidRequestBody } from "../core/errors";
import { type RequestState, withRequestState } from "./request-state";

export const MB = 1024 * 1024;

export interface BodyPolicy {
  /** json: parsed and hardened; form: application/x-www-form-urlencoded (JSON still accepted);
   *  text: the UTF-8 text as it is (a bank's signed notice); stream: left unread for the route
   *  (multipart uploads). */
  kind: "json" | "form" | "text" | "stream";
  /** Bytes. */
  limit: number;
  /** "reject" (default): a bad body is 400 after the route's derive hooks (its authentication);
   *  "route": the route sees the INVALID_BODY marker and answers itself (JSON-RPC -32700, a form page). */
  invalid?: "reject" | "route";
  /** "auth" (default): read after the route's derive hooks (its token check), before its schema;
   *  "route": left unread until the route calls `readBody` (after a session or a token it checks
   *  itself). Stream bodies are always the route's. */
  read?: "auth" | "route";
}

export const DEFAULT_BODY_POLICY: BodyPolicy = { kind: "json", limit: MB };

/** The body of a request whose body could not be read as its route declared. */
const INVALID_BODY = Object.freeze({ __invalidBody: true as const });
export type InvalidBody = typeof INVALID_BODY;

export function isInvalidBody(body: unknown): body is InvalidBody {
  return body === INVALID_BODY;
}

/** The body of a `stream` route: not read by the core. */
const STREAMED = Object.freeze({ __streamed: true as const });

/** The body of a declared route before it is read (see readBody). */
const DEFERRED = Object.freeze({ __deferred: true as const });

/** What the core knows of a body it has not read yet. */
interface PendingBody {
  policy: BodyPolicy;
  contentType: string | undefined;
}

/** Pending bodies by request (the context object is the request's own). */
const pending = new WeakMap<object, PendingBody>();

/** An HTML form post: field name to value; a repeated name keeps its last value. */
export type FormBody = Record<string, string>;

/** JSON nested deeper than this is refused like invalid JSON (no route takes more than a few levels). */
const MAX_JSON_DEPTH = 64;

const plainToPrimitive = () => "[object Object]";

/**
 * Makes a parsed body safe for the framework's validation messages, which interpolate the
 * offending value into a string: false when it nests deeper than MAX_JSON_DEPTH (the
 * interpolation recurses), and an object carrying its own "toString" or "valueOf" member (never
 * callable in JSON) gets a hidden Symbol.toPrimitive so that the interpolation cannot throw. The
 * data itself is unchanged. With `refuseNul`, false too for a NUL character (\u0000) in any string
 * or key: no field of svc holds one, and PostgreSQL's text cannot. (The agent endpoint answers its
 * own bodies: a NUL there is an argument like any other, which its tools check.)
 */
function hardenJson(value: unknown, refuseNul: boolean, depth = 0): boolean {
  if (typeof value === "string") return !(refuseNul && value.includes("\0"));
  if (typeof value !== "object" || value === null) return true;
  if (depth >= MAX_JSON_DEPTH) return false;
  if (Array.isArray(value)) return value.every((v) => hardenJson(v, refuseNul, depth + 1));
  if (refuseNul && Object.keys(value).some((k) => k.includes("\0"))) return false;
  if (Object.hasOwn(value, "toString") || Object.hasOwn(value, "valueOf")) {
    Object.defineProperty(value, Symbol.toPrimitive, { value: plainToPrimitive });
  }
  return Object.values(value).every((v) => hardenJson(v, refuseNul, depth + 1));
}

export function payloadTooLarge(limit: number): ApiError {
  // The rest of the body is never read: the connection cannot be reused, so say so and close it
  // (otherwise it lingers until the idle timeout, and a graceful shutdown waits for it).
  return new ApiError("payload_too_large", undefined, { limit_bytes: limit }, { connection: "close" });
}

/** Reads a request body up to `limit` bytes; throws 413 as soon as it is exceeded. */
async function readBodyLimited(request: Request, limit: number): Promise<Uint8Array> {
  if (!request.body) return new Uint8Array();
  // A declared length within the limit (larger ones were refused before reading) is read in one
  // go, which is much cheaper than pulling chunks; the size is still checked afterwards.
  const declared = request.headers.get("content-length");
  if (declared !== null && /^\d+$/.test(declared) && Number(declared) <= limit) {
    const bytes = new Uint8Array(await request.arrayBuffer());
    if (bytes.byteLength > limit) throw payloadTooLarge(limit);
    return bytes;
  }
  const chunks: Uint8Array[] = [];
  for await (const chunk of limitedChunks(request, limit)) chunks.push(chunk);
  return Buffer.concat(chunks);
}

/**
 * A request body's chunks as they arrive; the first chunk past `limit` cancels the body and
 * throws 413, so nothing over the limit is ever held. Stopping early (break, throw) cancels it too.
 */
export async function* limitedChunks(request: Request, limit: number): AsyncGenerator<Uint8Array> {
  const reader = request.body?.getReader();
  if (!reader) return;
  let total = 0;
  let finished = false;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) {
        finished = true;
        return;
      }
      total += value.byteLength;
      if (total > limit) throw payloadTooLarge(limit);
      yield value;
    }
  } finally {
    if (!finished) await reader.cancel().catch(() => {});
  }
}

/** The policies the routes declared, by "METHOD /pattern" (filled once the app is built). */
export type BodyPolicies = (method: string, route: string) => BodyPolicy | undefined;

/** Where a route's declared policy is kept in its detail. */
export const BODY_POLICY_DETAIL = "x-body-policy";

/** Keeps a route's parse phase where the framework would skip it (its handler names no body). */
const keepParsePhase = () => undefined;

/** The hooks a declared policy gives its route (typed as the detail alone: the framework's types
 *  do not take a parser's name from a macro; at run time it does). */
function bodyPolicyHooks(policy: BodyPolicy): { detail: Record<string, unknown> } {
  const detail = { [BODY_POLICY_DETAIL]: policy };
  if (policy.kind === "stream" || policy.read === "route") return { detail, parse: keepParsePhase } as never;
  return {
    detail,
    ...(policy.kind === "json" ? { parse: "json" } : {}),
    transform: async (ctx: { body: unknown }) => {
      await readBody(ctx);
    },
  } as never;
}

/** The route option `bodyPolicy`, for route plugins to declare theirs with types. */
export const bodyPolicyOption = new Elysia({ name: "body-policy-option" }).macro({
  // The policy is kept in the route's OpenAPI detail (`x-body-policy`: the document shows each
  // route's limit), where bodyParsing finds it through the route table. A JSON route names the
  // framework's JSON parser too, so that the document shows its schema as application/json (the
  // core's parse hook runs first and the framework's never does). A route that streams its body,
  // or reads it itself, may never name `body` in its handler, and the framework would skip
  // parsing, with the limit check in it: an empty parse hook of its own keeps the parse phase.
  // The transform hook reads the body: the framework runs a route's own hooks after the derive
  // hooks of the plugins it is in (its authentication) and before validating the body. (A route
  // inside a `.guard` that declares a policy must not declare another one: the guard's would be
  // the one kept.)
  bodyPolicy: (policy: BodyPolicy) => bodyPolicyHooks(policy),
});

/**
 * The request's body as its route declared it, read now if it was not yet (once; later calls give
 * the same value). A body that cannot be read is the INVALID_BODY marker for routes that answer it
 * themselves, else 400 "invalid request body"; over the limit is 413.
 */
export async function readBody(ctx: { body: unknown }): Promise<unknown> {
  const waiting = pending.get(ctx);
  if (ctx.body !== DEFERRED || waiting === undefined) return ctx.body;
  pending.delete(ctx);
  const { policy } = waiting;
  const request = (ctx as unknown as { request: Request }).request;
  const state = (ctx as unknown as { requestState: RequestState }).requestState;
  const body = await readAndParse(request, policy, waiting.contentType);
  ctx.body = body;
  if (isInvalidBody(body)) {
    state.bodyUnreadable = true;
    if (policy.invalid !== "route") throw invalidRequestBody();
  }
  return body;
}

/** Reads a body within its policy's limit and parses it as declared (JSON, or a form). */
async function readAndParse(
  request: Request,
  policy: BodyPolicy,
  contentType: string | undefined,
): Promise<unknown> {
  const bytes = await readBodyLimited(request, policy.limit);
  if (bytes.byteLength === 0) return null;
  try {
    const text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes);
    if (policy.kind === "text") return text;
    if (policy.kind === "form" && contentType?.startsWith("application/x-www-form-urlencoded")) {
      return Object.fromEntries(new URLSearchParams(text)) as FormBody;
    }
    const value = JSON.parse(text) as unknown;
    return hardenJson(value, policy.invalid !== "route") ? value : INVALID_BODY;
  } catch {
    return INVALID_BODY;
  }
}

export function bodyParsing(policies: BodyPolicies) {
  const policyOf = (method: string, route: string) => policies(method, route) ?? DEFAULT_BODY_POLICY;
  return (
    new Elysia({ name: "body-parsing" })
      .use(bodyPolicyOption)
      .use(withRequestState)
      .onParse({ as: "global" }, async (ctx) => {
        const { request, contentType, route } = ctx;
        const state = (ctx as unknown as { requestState: RequestState }).requestState;
        const declared = policies(request.method, route);
        const policy = declared ?? DEFAULT_BODY_POLICY;
        // Over-limit bodies are refused before anything reads them.
        const length = request.headers.get("content-length");
        if (length !== null && Number(length) > policy.limit) throw payloadTooLarge(policy.limit);
        const multipart = contentType?.startsWith("multipart/form-data") ?? false;
        if (policy.kind === "stream") {
          if (multipart) return STREAMED;
          // An upload route takes multipart only: anything else is refused unread (decisions §20).
          throw new ApiError("unsupported_media_type", undefined, {
            expected: "multipart/form-data",
          });
        }
        // A multipart body where none is read: left to the framework it would become fields
        // JSON-decoded without the checks of readBody.
        if (multipart) {
          state.bodyUnreadable = true;
          return INVALID_BODY;
        }
        if (declared !== undefined) {
          pending.set(ctx, { policy, contentType });
          return DEFERRED;
        }
        // A route that declares nothing (none of svc's takes a body so) is read at once.
        const body = await readAndParse(request, policy, contentType);
        if (isInvalidBody(body)) state.bodyUnreadable = true;
        return body;
      })
      // A route whose handler never reads its body is not parsed at all (the framework sees that):
      // its limit is still enforced, before its derive hooks check the token.
      .onTransform({ as: "global" }, ({ request, route }) => {
        const length = request.headers.get("content-length");
        if (length === null || request.method === "GET") return;
        const limit = policyOf(request.method, route).limit;
        if (Number(length) > limit) throw payloadTooLarge(limit);
      })
      // Runs after the routes' derive hooks, where their tokens are checked: 401/403 come first. A
      // route with a body schema meets it earlier, in validation: the error envelope refuses it there.
      .onBeforeHandle({ as: "global" }, (ctx) => {
        const state = (ctx as unknown as { requestState: RequestState }).requestState;
        if (state.bodyUnreadable && policyOf(ctx.request.method, ctx.route).invalid !== "route") {
          throw invalidRequestBody();
        }
      })
  );
}
