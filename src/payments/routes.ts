// REST routes of the integration API for payment files: upload (multipart, streamed), read,
// submit all drafts, submit one item. Token: purpose integration, scope send_payments, and
// allow_send_payments on the account.
import { Elysia } from "elysia";
import type { Requirement, TokenGuard } from "../auth/guard";
import { type ErrorCode, invalidRequestBody, validationError } from "../core/errors";
import { JSON_BODY, routeDoc, type SuccessDoc, TOKEN_ERRORS } from "../http/docs";
import { BODY_LIMITS, requestState } from "../http/spine";
import { authenticateRequest, tokenAuth } from "../http/token-auth";
import {
  ImportIdParams,
  ItemIdParams,
  PaymentImportSchema,
  PaymentItemSchema,
  SubmitBody,
  UploadForm,
} from "./model";
import { readMultipart } from "./multipart";
import type { PaymentService, RequestContext } from "./service";

const NEED: Requirement = { purpose: "integration", scope: "send_payments" };
const ACCOUNT_ERRORS: ErrorCode[] = ["not_found", "forbidden_company", "forbidden_account"];
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** Marks a multipart body left unread for the route to stream. */
const STREAMED = Object.freeze({ __streamed: true as const });

// Responses documented from the model's schemas, not validated at run time (see statements/routes.ts).
const doc = (
  summary: string,
  errors: ErrorCode[],
  success: Record<number, string | SuccessDoc>,
  description?: string,
) => routeDoc("payments", summary, [...TOKEN_ERRORS, ...errors], { success, description });

const IDEMPOTENCY =
  "Idempotent by (api_token_id, external_id, payload_hash), the hash over the route, the import and the " +
  "submitted items' ids and contents: a repeat returns the first answer without calling the bank again; " +
  "the same external_id with another payload is 409 conflict. On 500 bank_error (bank unreachable) repeat " +
  "with the same external_id: items left `submitting` are re-sent under the same bank idempotency key.";

function contextOf(request: Request): RequestContext {
  const state = requestState(request);
  return { requestId: state.requestId, ip: state.clientIp };
}

export function paymentRoutes(deps: { guard: TokenGuard; service: PaymentService }) {
  const { service } = deps;
  return (
    new Elysia({ prefix: "/api/v1/integration/payments/imports" })
      // The upload authenticates first, then streams the body itself (10 MB, enforced while reading).
      .post(
        "",
        async ({ request, set }) => {
          const principal = authenticateRequest(
            deps.guard,
            request,
            set.headers as Record<string, string>,
            NEED,
          );
          const form = await readMultipart(request, BODY_LIMITS.paymentUpload);
          const accountId = form.fields.get("bank_account_id")?.trim();
          if (accountId !== undefined && accountId !== "" && !UUID_RE.test(accountId)) {
            throw invalidRequestBody({ field: "bank_account_id" });
          }
          if (accountId === undefined || accountId === "") {
            throw validationError("bank_account_id", "Поле bank_account_id обязательно");
          }
          const file = form.files.get("file");
          if (file === undefined) throw validationError("file", "Поле file (файл 1C, cp1251) обязательно");
          const view = service.upload(
            principal,
            { bank_account_id: accountId.toLowerCase(), file: file.bytes, filename: file.filename },
            contextOf(request),
          );
          set.status = 201;
          return view;
        },
        {
          // Leaves a multipart body unread (the global parser skips it; this stops the default one).
          parse: ({ contentType }) => (contentType?.startsWith("multipart/form-data") ? STREAMED : undefined),
          detail: {
            ...doc(
              "Upload a 1C payment file",
              [
                "payload_too_large",
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
        ({ principal, params, body, request }) =>
          service.submitImport(principal, params.import_id, body, contextOf(request)),
        {
          params: ImportIdParams,
          parse: JSON_BODY,
          body: SubmitBody,
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
        ({ principal, params, body, request }) =>
          service.submitItem(principal, params.import_id, params.item_id, body, contextOf(request)),
        {
          params: ItemIdParams,
          parse: JSON_BODY,
          body: SubmitBody,
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
