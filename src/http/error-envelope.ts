// The one error handler: every error becomes the envelope with its status (ApiError as thrown;
// the framework's not-found, parse and validation errors mapped to the spec's codes; anything
// else 500 internal_error, logged with the request id, never a stack trace in a body). An error
// that carries its own answer (AnswersItself: an OAuth error, a refusal in a route's own words) is sent as it is.

import { Elysia } from "elysia";
import {
  type AnsweredAsApiError,
  type AnswersItself,
  ApiError,
  apiErrorOf,
  errorEnvelope,
  invalidRequestBody,
  ownAnswerOf,
  validationError,
} from "../core/errors";
import { errorText, type Logger } from "../core/logger";
import { type RequestState, withRequestState } from "./request-state";
import { withoutTrailingSlash } from "./route-path";

/** A refusal a route answers in its own protocol (an OAuth error body, a DirectBank ResultBank)
 *  rather than the envelope: thrown by a hook, sent as it is (with the request id). */
export class OwnAnswer extends Error implements AnswersItself {
  constructor(readonly response: Response) {
    super(`answered ${response.status}`);
    this.name = "OwnAnswer";
  }

  answer(): Response {
    return this.response;
  }
}

export interface ErrorEnvelopeDeps {
  logger: Logger;
  /** Filled once the app is built: method and path pattern of every route, for 405 answers. */
  routes: () => { method: string; path: string }[];
  /** Routes that answer every error in a protocol of their own (DirectBank's ResultBank): the
   *  answer for a request and its error, or null for the envelope. */
  protocolAnswer?: (request: Request, error: ApiError) => Response | null;
}

function pathPatternMatches(pattern: string, path: string): boolean {
  const a = withoutTrailingSlash(pattern).split("/");
  const b = withoutTrailingSlash(path).split("/");
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

export function errorEnvelopePlugin(deps: ErrorEnvelopeDeps) {
  return new Elysia({ name: "error-envelope" }).use(withRequestState).onError({ as: "global" }, (ctx) => {
    const { code, error, set, request } = ctx;
    const state = (ctx as unknown as { requestState?: RequestState }).requestState;
    const own = ownAnswerOf(error, request);
    if (own) {
      if (state) own.headers.set("x-request-id", state.requestId);
      set.status = own.status;
      return own;
    }
    // A body that could not be read meets the route's schema after its derive hooks, where its
    // token was checked: refused as such, before any field is judged.
    const apiError =
      state?.bodyUnreadable && code === "VALIDATION"
        ? invalidRequestBody()
        : toApiError(code, error, request, deps);
    const protocol = deps.protocolAnswer?.(request, apiError);
    if (protocol) {
      if (state) protocol.headers.set("x-request-id", state.requestId);
      set.status = protocol.status;
      return protocol;
    }
    const logAs = (error as Partial<AnsweredAsApiError> | null)?.logAs;
    if (typeof logAs === "string") {
      deps.logger.error(logAs, { request_id: state?.requestId, error: (error as Error).message });
    } else if (apiError.code === "internal_error") {
      deps.logger.error("unhandled error", {
        request_id: state?.requestId,
        error: errorText(error),
        stack: error instanceof Error ? error.stack : undefined,
      });
    }
    set.status = apiError.status;
    if (state) set.headers["x-request-id"] = state.requestId;
    set.headers["content-type"] = "application/json; charset=utf-8";
    for (const [k, v] of Object.entries(apiError.headers ?? {})) set.headers[k] = v;
    return errorEnvelope(apiError);
  });
}

function toApiError(code: unknown, error: unknown, request: Request, deps: ErrorEnvelopeDeps): ApiError {
  // Ours, or an error of a bank or the database that says how it is answered.
  const known = apiErrorOf(error);
  if (known) return known;
  // Errors thrown while parsing (our 413) arrive wrapped in Elysia's ParseError.
  const cause = (error as { cause?: unknown } | null)?.cause;
  if (cause instanceof ApiError) return cause;
  switch (code) {
    case "NOT_FOUND": {
      // The address asked for (a catch-all route would give its own pattern as the path).
      const methods = allowedMethods(deps.routes(), new URL(request.url).pathname);
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
        return fromValidation(error, request);
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
function fromValidation(error: unknown, request: Request): ApiError {
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
  // A query parameter converted to a number is checked alone, its name not given: it is the one
  // whose text is the refused value.
  const field =
    where === "property" && first.path === ""
      ? (queryParamOf(request, e.value) ?? "query")
      : fieldName(first.path);
  return validationError(field, `Неверное значение поля ${field}: ${expected(first)}`);
}

interface IssueSchema {
  type?: string;
  format?: string;
  const?: unknown;
  anyOf?: IssueSchema[];
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  maxItems?: number;
  pattern?: string;
}

/** What the field should have been, in Russian (the framework's own messages are English). */
function expected(issue: TypeboxIssue): string {
  const schema = (issue.schema ?? {}) as IssueSchema;
  const value = issue.value;
  if (/^Unexpected property/.test(issue.message)) return "неизвестное поле";
  if (value === undefined) return "обязательное поле";
  const consts = schema.anyOf?.map((s) => s.const).filter((c) => c !== undefined);
  if (consts && consts.length > 0 && consts.length === schema.anyOf?.length) {
    return `ожидается одно из: ${consts.map(String).join(", ")}`;
  }
  if (schema.const !== undefined) return `ожидается ${String(schema.const)}`;
  switch (schema.type) {
    case "string":
      if (typeof value !== "string") return "ожидается строка";
      if (schema.format === "uuid") return "ожидается UUID";
      if (schema.minLength !== undefined && value.length < schema.minLength)
        return `не короче ${schema.minLength} символов`;
      if (schema.maxLength !== undefined && value.length > schema.maxLength)
        return `не длиннее ${schema.maxLength} символов`;
      return "неверный формат";
    case "integer":
    case "number": {
      const what = schema.type === "integer" ? "целое число" : "число";
      if (typeof value !== "number" || (schema.type === "integer" && !Number.isInteger(value)))
        return `ожидается ${what}`;
      if (schema.minimum !== undefined && value < schema.minimum)
        return `ожидается ${what} не меньше ${schema.minimum}`;
      if (schema.maximum !== undefined && value > schema.maximum)
        return `ожидается ${what} не больше ${schema.maximum}`;
      return `неверное ${what}`;
    }
    case "boolean":
      return "ожидается true или false";
    case "object":
      return "ожидается объект";
    case "array":
      if (!Array.isArray(value)) return "ожидается массив";
      if (schema.maxItems !== undefined && value.length > schema.maxItems)
        return `не больше ${schema.maxItems} элементов`;
      return "неверный массив";
    default:
      return "неверное значение";
  }
}

function queryParamOf(request: Request, value: unknown): string | null {
  for (const [name, text] of new URL(request.url).searchParams) if (text === String(value)) return name;
  return null;
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
