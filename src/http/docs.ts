// OpenAPI documentation helpers: every route lists the error codes it can answer with, each
// with the envelope schema. Documentation only; nothing here validates at run time.
import type { TSchema } from "@sinclair/typebox";
import { ERROR_STATUS, type ErrorCode, ErrorEnvelopeSchema } from "../core/errors";

export const TOKEN_ERRORS: ErrorCode[] = [
  "invalid_token_format",
  "rate_limited",
  "invalid_token",
  "forbidden_ip",
  "forbidden_purpose",
  "forbidden_scope",
  // On PostgreSQL: the shared rate limits or the database did not answer in time.
  "service_unavailable",
];

import type { DocumentDecoration } from "elysia";
import { type BodyPolicy, DEFAULT_BODY_POLICY } from "./body-policy";

export type RouteDoc = DocumentDecoration;
type Responses = Record<string, { description: string; content?: Record<string, { schema: object }> }>;
/** A success response: its description, and the body's schema (JSON unless `mediaTypes` say otherwise). */
export type SuccessDoc = { description: string; schema: TSchema; mediaTypes?: string[] };

export function routeDoc(
  tag: string,
  summary: string,
  errors: ErrorCode[],
  opts: {
    description?: string;
    success?: Record<number, string | SuccessDoc>;
    security?: "bearer" | "admin" | "none";
  } = {},
): RouteDoc {
  const responses: Responses = {};
  for (const [status, success] of Object.entries(opts.success ?? { 200: "OK" })) {
    responses[status] =
      typeof success === "string"
        ? { description: success }
        : {
            description: success.description,
            content: Object.fromEntries(
              (success.mediaTypes ?? ["application/json"]).map((type) => [type, { schema: success.schema }]),
            ),
          };
  }
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of [...errors, "internal_error" as const]) {
    const status = ERROR_STATUS[code];
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  for (const [status, codes] of byStatus) {
    responses[String(status)] = {
      description: `error.code: ${[...new Set(codes)].join(", ")}`,
      content: { "application/json": { schema: ErrorEnvelopeSchema } },
    };
  }
  const security =
    opts.security === "none" ? [] : [{ [opts.security === "admin" ? "adminToken" : "bearer"]: [] }];
  return { summary, tags: [tag], description: opts.description, responses, security } as RouteDoc;
}

/**
 * The body policy of a JSON route (`bodyPolicy: JSON_BODY`): 1 MB, read by the HTTP core once the
 * route's token has passed; the OpenAPI document shows its schema under application/json.
 */
export const JSON_BODY: BodyPolicy = DEFAULT_BODY_POLICY;

/** The OpenAPI request body of an upload route: multipart fields (strings; `file` a binary part). */
export function multipartBody(fields: Record<string, { format?: string }>) {
  const properties: Record<string, { type: "string"; format?: string }> = {};
  for (const [name, f] of Object.entries(fields)) properties[name] = { type: "string", ...f };
  return {
    required: true,
    content: {
      "multipart/form-data": {
        schema: { type: "object" as const, required: Object.keys(fields), properties },
      },
    },
  };
}

/** The documentation helper of a feature's token-guarded routes: the token errors come first. */
export function tokenRouteDoc(tag: string) {
  return (
    summary: string,
    errors: ErrorCode[],
    success: Record<number, string | SuccessDoc>,
    description?: string,
  ) => routeDoc(tag, summary, [...TOKEN_ERRORS, ...errors], { success, description });
}

/** The per-account errors every account-scoped route can answer. */
export const ACCOUNT_ERRORS: ErrorCode[] = ["not_found", "forbidden_company", "forbidden_account"];
