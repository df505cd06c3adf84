// A page route as an area lists it (`get`/`post`), with its OpenAPI entry; index.tsx mounts them.
import type { BodyPolicy } from "../../http/body-policy";
import type { RouteDoc } from "../../http/docs";
import type { RequestState } from "../../http/request-state";

/** What Elysia hands a route; only these parts are used. */
export interface RouteContext {
  request: Request;
  requestState: RequestState;
  body: unknown;
  params: Record<string, string>;
  query: Record<string, string | undefined>;
  set: { status?: number | string; headers: Record<string, string | number> };
  server: unknown;
}

/** A page route, as an area lists it. */
export interface PageRoute {
  method: "GET" | "POST";
  path: string;
  handler: (ctx: RouteContext) => unknown;
  detail: RouteDoc;
  /** Set where a page's body differs from the pages' forms (the file upload, the sign-in). */
  bodyPolicy?: BodyPolicy;
}
type RouteOptions = { detail: RouteDoc; bodyPolicy?: BodyPolicy };
export const get = (path: string, handler: PageRoute["handler"], options: RouteOptions): PageRoute => ({
  method: "GET",
  path,
  handler,
  ...options,
});
export const post = (path: string, handler: PageRoute["handler"], options: RouteOptions): PageRoute => ({
  method: "POST",
  path,
  handler,
  ...options,
});

/** OpenAPI entry of a page: browsers only, documented so that the route list stays complete. */
export function pageDoc(summary: string, kind: "page" | "form" | "asset" = "page"): RouteDoc {
  const html = { "text/html": { schema: { type: "string" } } };
  const responses: Record<string, { description: string; content?: object }> =
    kind === "asset"
      ? { 200: { description: "Static file" } }
      : {
          200: { description: "HTML page", content: html },
          303: { description: "Redirect: to /admin/login without a session; after a successful form" },
        };
  if (kind === "form") {
    responses[400] = { description: "The form again, with the service's validation message", content: html };
    responses[403] = {
      description: "Refused: missing or wrong CSRF token, or another origin",
      content: html,
    };
  }
  return {
    summary,
    tags: ["admin pages"],
    description: "Server-rendered HTML for browsers (session cookie from the sign-in form); not an API.",
    responses,
    security: [],
  } as RouteDoc;
}
