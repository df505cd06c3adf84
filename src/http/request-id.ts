// The request id: a client's X-Request-Id of at most 128 printable ASCII characters is kept,
// anything else replaced by a UUID; every response carries it.
import { Elysia } from "elysia";
import { newId } from "../core/clock";
import { type RequestState, withRequestState } from "./request-state";

const REQUEST_ID_RE = /^[\x20-\x7e]{1,128}$/;

export function requestIdPlugin() {
  return new Elysia({ name: "request-id" }).use(withRequestState).onRequest((ctx) => {
    const incoming = ctx.request.headers.get("x-request-id");
    const requestId = incoming && REQUEST_ID_RE.test(incoming) ? incoming : newId();
    (ctx as { requestState: RequestState }).requestState = {
      requestId,
      startedAt: performance.now(),
      clientIp: null,
      apiTokenId: null,
      bodyUnreadable: false,
    };
    ctx.set.headers["x-request-id"] = requestId;
  });
}
