// The HTTP methods of 1C:DirectBank's bank service at /directbank (decisions §17): Logon,
// GetSettings, SendPack, GetPackList, GetPack. Every answer is a ResultBank (errors included, also
// those of the HTTP core: see directbankProtocolAnswer), every call is audited as
// `directbank.<method>`.
import { Elysia } from "elysia";
import type { AuditLog } from "../audit/audit-log";
import { ApiError } from "../core/errors";
import { errorText, type Logger } from "../core/logger";
import { buildResultBank, type DirectBankVersion, type ResultBankBody } from "../formats/directbank";
import { bodyPolicyOption, limitedChunks } from "../http/body-policy";
import { clientLimitOption } from "../http/client-limit";
import { routeDoc } from "../http/docs";
import { type RequestState, withRequestState } from "../http/request-state";
import { asDirectBankError, DirectBankError, fromApiError, resultBankResponse } from "./errors";
import { type Caller, type DirectBankService, MAX_PACKET_BYTES } from "./service";

const DIRECTBANK_PREFIX = "/directbank";

export interface DirectBankRouteDeps {
  service: DirectBankService;
  audit: AuditLog;
  clock: { now(): Date };
  logger: Logger;
}

/** Errors of the HTTP core on DirectBank's paths (over the body limit, an unknown method) in the
 *  standard's words; null elsewhere. */
export function directbankProtocolAnswer(request: Request, error: ApiError): Response | null {
  if (!new URL(request.url).pathname.startsWith(`${DIRECTBANK_PREFIX}/`)) return null;
  const translated =
    error.code === "not_found" || error.code === "method_not_allowed"
      ? new DirectBankError("1010", "Метод не найден")
      : fromApiError(error);
  return translated.answer(request);
}

const doc = (summary: string, description: string) =>
  routeDoc("directbank", summary, [], { security: "none", description }) as Record<string, unknown>;

export function directbankRoutes(deps: DirectBankRouteDeps) {
  const { service } = deps;

  /** Runs one method: its version and caller checked, its answer a ResultBank, audited either way. */
  async function call(
    method: string,
    request: Request,
    state: RequestState,
    work: (version: DirectBankVersion) => Promise<{ body: ResultBankBody; audit?: Record<string, unknown> }>,
  ): Promise<Response> {
    const started = performance.now();
    let outcome = "ok";
    let details: Record<string, unknown> | undefined;
    try {
      const version = service.version(
        request.headers.get("apiversion"),
        request.headers.get("availableapiversion"),
      );
      const { body, audit } = await work(version);
      details = audit;
      return resultBankResponse(buildResultBank(version, body));
    } catch (e) {
      const refusal = asDirectBankError(e);
      if (!refusal) {
        outcome = "error:1010";
        throw e;
      }
      outcome = `error:${refusal.code}`;
      return refusal.answer(request);
    } finally {
      try {
        deps.audit.write({
          at: deps.clock.now(),
          actor: "token",
          apiTokenId: state.apiTokenId,
          action: `directbank.${method}`,
          target: (details?.target as string | undefined) ?? null,
          arguments: details,
          outcome,
          durationMs: Math.round(performance.now() - started),
          requestId: state.requestId,
          ip: state.clientIp,
          transport: "http",
        });
      } catch (e) {
        deps.logger.error("audit write failed", { request_id: state.requestId, error: errorText(e) });
      }
    }
  }

  const session = async (
    request: Request,
    state: RequestState,
    version: DirectBankVersion,
  ): Promise<Caller> => {
    // The audit entry and the access log name the session's token even when it is refused.
    return service.caller(request.headers.get("sid"), state.clientIp, version, (id) => {
      state.apiTokenId = id;
    });
  };

  return new Elysia({ prefix: DIRECTBANK_PREFIX })
    .use(withRequestState)
    .use(bodyPolicyOption)
    .use(clientLimitOption)
    .post(
      "/Logon",
      ({ request, requestState }) =>
        call("Logon", request, requestState, async (version) => {
          const { sid } = await service.logon(
            request.headers.get("authorization"),
            requestState.clientIp,
            version,
            (id) => {
              requestState.apiTokenId = id;
            },
          );
          return { body: { kind: "logon", sid }, audit: { version } };
        }),
      {
        clientLimit: {
          refuse: () =>
            new DirectBankError("1203", "Слишком много попыток входа с этого адреса", 429).answer(
              new Request("http://localhost"),
            ),
        },
        detail: doc(
          "DirectBank Logon",
          "Basic: the user is the token's api_token_id, the password the raw token.",
        ),
      },
    )
    .post(
      "/GetSettings",
      ({ request, requestState }) =>
        call("GetSettings", request, requestState, async (version) => {
          const caller = await session(request, requestState, version);
          const xml = service.settings(caller, request.headers.get("account"));
          const now = deps.clock.now();
          return {
            body: {
              kind: "settings",
              id: crypto.randomUUID(),
              formatVersion: version,
              creationDate: service.localTime(now),
              settingsXml: xml,
            },
            audit: { account: request.headers.get("account") },
          };
        }),
      {
        detail: doc(
          "DirectBank GetSettings",
          "The exchange settings (Settings, dockind 06) of the account named by the Account header.",
        ),
      },
    )
    .post(
      "/SendPack",
      ({ request, requestState }) =>
        call("SendPack", request, requestState, async (version) => {
          const caller = await session(request, requestState, version);
          const body = await readPacket(request);
          const { receivedId, statements } = service.sendPack(caller, body);
          return { body: { kind: "sendPacket", id: receivedId }, audit: { target: receivedId, statements } };
        }),
      {
        bodyPolicy: { kind: "json", limit: MAX_PACKET_BYTES, read: "route" },
        detail: doc("DirectBank SendPack", "A packet with StatementRequest (14) or Probe (05) documents."),
      },
    )
    .get(
      "/GetPackList",
      ({ request, requestState }) =>
        call("GetPackList", request, requestState, async (version) => {
          const caller = await session(request, requestState, version);
          const date = new URL(request.url).searchParams.get("date");
          const list = service.packList(caller, date);
          return {
            body: { kind: "packetList", ids: list.ids, timestampLastPacket: list.timestampLastPacket },
            audit: { date, packets: list.ids.length },
          };
        }),
      {
        detail: doc(
          "DirectBank GetPackList",
          "Packets ready since `date` (dd.MM.yyyy HH:mm:ss), or every one not yet taken.",
        ),
      },
    )
    .get(
      "/GetPack",
      ({ request, requestState }) =>
        call("GetPack", request, requestState, async (version) => {
          const caller = await session(request, requestState, version);
          const id = new URL(request.url).searchParams.get("id");
          const packet = service.pack(caller, id);
          return {
            body: { kind: "packet", packet },
            audit: { target: id, documents: packet.documents.map((d) => d.dockind) },
          };
        }),
      { detail: doc("DirectBank GetPack", "One packet: a StatusPacketNotice (01) or a Statement (15).") },
    );
}

/** The packet's bytes, at most MAX_PACKET_BYTES (2003 beyond, also without a Content-Length). */
async function readPacket(request: Request): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  try {
    for await (const chunk of limitedChunks(request, MAX_PACKET_BYTES)) chunks.push(chunk);
  } catch (e) {
    if (e instanceof ApiError) throw fromApiError(e);
    throw e;
  }
  return Buffer.concat(chunks);
}
