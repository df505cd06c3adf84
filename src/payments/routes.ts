// REST routes of the integration API for payment files: upload (multipart, streamed), read,
// submit all drafts, submit one item. Token: purpose integration, scope send_payments, and
// allow_send_payments on the account.
import { Elysia } from "elysia";
import type { Requirement, TokenGuard } from "../auth/guard";
import { bodyPolicyOption, MB } from "../http/body-policy";
import { refuseUnknownFields } from "../http/closed-body";
import { ACCOUNT_ERRORS, JSON_BODY, tokenRouteDoc } from "../http/docs";
import { fileField, readMultipart, uuidField } from "../http/multipart";
import { type RequestState, withRequestState } from "../http/request-state";
import { authenticateRequest, tokenAuth } from "../http/token-auth";
import {
  ImportIdParams,
  ItemIdParams,
  PaymentImportSchema,
  PaymentItemSchema,
  SubmitBody,
  UploadForm,
} from "./model";
import type { PaymentService } from "./service";
import type { RequestContext } from "./submission";

const NEED: Requirement = { purpose: "integration", scope: "send_payments" };

// Responses documented from the model's schemas, not validated at run time (see statements/routes.ts).
const doc = tokenRouteDoc("payments");

const IDEMPOTENCY =
  "Idempotent by (api_token_id, external_id, payload_hash), the hash over the route, the import and the " +
  "submitted items' ids and contents: a repeat returns the first answer without calling the bank again; " +
  "the same external_id with another payload is 409 conflict. On 500 bank_error (bank unreachable) repeat " +
  "with the same external_id: items left `submitting` are re-sent under the same bank idempotency key.";

/** A payment file is at most 10 MB (decisions §2). */
const UPLOAD_LIMIT = 10 * MB;

function contextOf(state: RequestState): RequestContext {
  return { requestId: state.requestId, ip: state.clientIp };
}

export function paymentRoutes(deps: { guard: TokenGuard; service: PaymentService }) {
  const { service } = deps;
  return (
    new Elysia({ prefix: "/api/v1/integration/payments/imports" })
      .use(withRequestState)
      .use(bodyPolicyOption)
      // The upload authenticates first, then streams the body itself (10 MB, enforced while reading).
      .post(
        "",
        async ({ request, requestState, set }) => {
          const headers = set.headers as Record<string, string>;
          const principal = await authenticateRequest(deps.guard, request, requestState, headers, NEED);
          const form = await readMultipart(request, UPLOAD_LIMIT);
          const accountId = uuidField(form, "bank_account_id");
          const file = fileField(form, "file", "файл 1C, cp1251");
          const view = service.upload(
            principal,
            { bank_account_id: accountId, file: file.bytes, filename: file.filename },
            contextOf(requestState),
          );
          set.status = 201;
          return view;
        },
        {
          bodyPolicy: { kind: "stream", limit: UPLOAD_LIMIT },
          detail: {
            ...doc(
              "Upload a 1C payment file",
              [
                "payload_too_large",
                "unsupported_media_type",
                "invalid request body",
                "validation_error",
                ...ACCOUNT_ERRORS,
                "account_mismatch",
              ],
              { 201: { description: "Import created; every item is a draft", schema: PaymentImportSchema } },
              "multipart/form-data with `bank_account_id` (uuid) and `file` (1CClientBankExchange, cp1251, or " +
                "cp866 with Кодировка=DOS; at most 10 MB, else 413). A file that is not a valid exchange file, " +
                "or lacks a field required in files to the bank, or has a bad INN, account key, amount or date, " +
                "is 400 validation_error with details.line and details.field. A document whose payer account " +
                "is not bank_account_id is 422 account_mismatch and nothing is stored. Not idempotent.",
            ),
            requestBody: {
              required: true,
              content: {
                "multipart/form-data": { schema: UploadForm },
              },
            },
          },
        },
      )
      .use(tokenAuth(deps.guard, NEED))
      .get("/:import_id", ({ principal, params }) => service.get(principal, params.import_id), {
        params: ImportIdParams,
        detail: doc("An import with its items", ["invalid request body", ...ACCOUNT_ERRORS], {
          200: { description: "The import", schema: PaymentImportSchema },
        }),
      })
      .post(
        "/:import_id/submit",
        ({ principal, params, body, requestState }) =>
          service.submitImport(principal, params.import_id, body, contextOf(requestState)),
        {
          params: ImportIdParams,
          bodyPolicy: JSON_BODY,
          body: SubmitBody,
          transform: refuseUnknownFields(SubmitBody),
          detail: doc(
            "Submit every draft item of an import to the bank",
            ["invalid request body", "validation_error", ...ACCOUNT_ERRORS, "conflict", "bank_error"],
            {
              200: {
                description: "The import; items submitted, or rejected with error",
                schema: PaymentImportSchema,
              },
            },
            IDEMPOTENCY,
          ),
        },
      )
      .post(
        "/:import_id/items/:item_id/submit",
        ({ principal, params, body, requestState }) =>
          service.submitItem(principal, params.import_id, params.item_id, body, contextOf(requestState)),
        {
          params: ItemIdParams,
          bodyPolicy: JSON_BODY,
          body: SubmitBody,
          transform: refuseUnknownFields(SubmitBody),
          detail: doc(
            "Submit one item of an import to the bank",
            ["invalid request body", "validation_error", ...ACCOUNT_ERRORS, "conflict", "bank_error"],
            {
              200: {
                description: "The item: submitted, or rejected with error (unchanged when no longer a draft)",
                schema: PaymentItemSchema,
              },
            },
            IDEMPOTENCY,
          ),
        },
      )
  );
}
