// What the HTTP core knows of one request, on its Elysia context as `requestState`: set when the
// request arrives (request id, start time, client address) and read by the error envelope, the
// access log, the audit writers and any route. A route plugin `.use(withRequestState)` to see it typed.
import { Elysia } from "elysia";

/** Headers a handler adds to its response (Elysia's `set.headers`). */
export type ResponseHeaders = Record<string, string | number>;

export interface RequestState {
  requestId: string;
  /** performance.now() at arrival. */
  startedAt: number;
  clientIp: string | null;
  /** The token the request presented, once known (the access log names it even for 403/429). */
  apiTokenId: string | null;
  /** The body could not be read as the route declared (see body-policy.ts). */
  bodyUnreadable: boolean;
}

/** Declares `requestState` on the context of the routes that use it (the core fills it in). */
export const withRequestState = new Elysia({ name: "request-state" }).decorate(
  "requestState",
  undefined as unknown as RequestState,
);
