// The request id: a client's X-Request-Id of 1 to 128 characters from [A-Za-z0-9._:-] is kept,
// anything else replaced by a UUID; every response carries it. The id lands in the access log,
// the audit log and its CSV export: nothing that a spreadsheet or a log reader could take for a
// formula, a quote or a field separator is passed through.
import { Elysia } from "elysia";
import { newId } from "../core/clock";
import { type RequestState, withRequestState } from "./request-state";

const REQUEST_ID_RE = /^[A-Za-z0-9._:-]{1,128}$/;

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
