// REST routes of the integration API for statements.
import { Elysia } from "elysia";
import type { TokenGuard } from "../auth/guard";
import { maskAccountNumber } from "../formats/mask";
import { bodyPolicyOption, MB } from "../http/body-policy";
import { refuseUnknownFields } from "../http/closed-body";
import { ACCOUNT_ERRORS, JSON_BODY, multipartBody, tokenRouteDoc } from "../http/docs";
import { fileField, readMultipart, uuidField } from "../http/multipart";
import { withRequestState } from "../http/request-state";
import { tokenAuth } from "../http/token-auth";
import { auditedStatementAction, type StatementAuditDeps } from "./audit";
import { checkedDownload, type DownloadDeps, downloadResponse } from "./export/download";
import {
  ExportFileSchema,
  ExportQuery,
  ListStatementsQuery,
  OrderStatementBody,
  StatementIdParams,
  StatementPageSchema,
  StatementSchema,
} from "./model";
import type { StatementService } from "./service";

/** A bank's statement file is at most 50 MB (decisions §11). */
const IMPORT_LIMIT = 50 * MB;

// Responses are documented from the model's schemas rather than declared with `response:`: that
// would validate every answer at run time (measured on the poll, a hot path: about 0.5 µs of 7 µs
// per request) and would replace the error responses listed here. test/contracts checks real
// responses against the same schemas instead.
const doc = tokenRouteDoc("statements");

export function statementRoutes(
  deps: { guard: TokenGuard; service: StatementService; audit: StatementAuditDeps["audit"] } & DownloadDeps,
) {
  const { service } = deps;
  const audit: StatementAuditDeps = { audit: deps.audit, now: deps.now };
  return new Elysia({ prefix: "/api/v1/integration/statements" })
    .use(withRequestState)
    .use(bodyPolicyOption)
    .use(tokenAuth(deps.guard, { purpose: "integration", scope: "read_statements" }))
    .post(
      "",
      async ({ body, principal, set, requestState }) => {
        const { created, statement } = await auditedStatementAction(
          audit,
          { principal, state: requestState },
          "statement.order",
          {
            bank_account_id: body.bank_account_id,
            external_id: body.external_id,
            date_from: body.date_from,
            date_to: body.date_to,
          },
          () => service.order(principal, body),
          (r) => ({ target: r.statement.statement_id, outcome: r.created ? "created" : "repeat" }),
        );
        set.status = created ? 201 : 200;
        return statement;
      },
      {
        bodyPolicy: JSON_BODY,
        body: OrderStatementBody,
        transform: refuseUnknownFields(OrderStatementBody),
        detail: doc(
          "Order a statement",
          ["invalid request body", "validation_error", ...ACCOUNT_ERRORS, "conflict", "bank_not_supported"],
          {
            201: { description: "Ordered (status processing)", schema: StatementSchema },
            200: { description: "Idempotent repeat: the existing statement", schema: StatementSchema },
          },
        ),
      },
    )
    .post(
      "/import",
      async ({ principal, request, set, requestState }) => {
        const form = await readMultipart(request, IMPORT_LIMIT);
        const bankAccountId = uuidField(form, "bank_account_id");
        const externalId = form.fields.get("external_id") ?? "";
        const file = fileField(form, "file", "выписка банка в формате 1C: kl_to_1c.txt");
        const { created, statement } = await auditedStatementAction(
          audit,
          { principal, state: requestState },
          "statement.import",
          {
            bank_account_id: bankAccountId,
            external_id: externalId,
            bytes: file.bytes.byteLength,
            sha256: file.sha256,
          },
          () =>
            service.importFile(principal, {
              bank_account_id: bankAccountId,
              external_id: externalId,
              file: file.bytes,
              sha256: file.sha256,
            }),
          (r) => ({ target: r.statement.statement_id, outcome: r.created ? "created" : "repeat" }),
        );
        set.status = created ? 201 : 200;
        return statement;
      },
      {
        bodyPolicy: { kind: "stream", limit: IMPORT_LIMIT },
        detail: {
          ...doc(
            "Import a statement from the bank's own 1C file",
            [
              "payload_too_large",
              "unsupported_media_type",
              "invalid request body",
              "validation_error",
              ...ACCOUNT_ERRORS,
              "conflict",
              "account_mismatch",
            ],
            {
              201: { description: "Imported: a ready statement (source import)", schema: StatementSchema },
              200: {
                description: "Idempotent repeat (same external_id, same file): the existing statement",
                schema: StatementSchema,
              },
            },
            "multipart/form-data with `bank_account_id` (uuid; an account with bank `file`), `external_id` " +
              "(idempotency key, unique per token) and `file` (1CClientBankExchange 1.02 or 1.03, " +
              "Кодировка=Windows cp1251 or DOS cp866, CRLF or LF; at most 50 MB, else 413). A file that is not a " +
              "valid exchange file is 400 validation_error with details.line; a file without this account's " +
              "СекцияРасчСчет is 422 account_mismatch; balances or turnovers that do not add up are 422 " +
              "validation_error with details.line. Nothing is stored when the file is refused.",
          ),
          requestBody: multipartBody({
            bank_account_id: { format: "uuid" },
            external_id: {},
            file: { format: "binary" },
          }),
        },
      },
    )
    .get("", ({ principal, query }) => service.list(principal, query), {
      query: ListStatementsQuery,
      detail: doc("List this token's statements, newest first", ["validation_error", ...ACCOUNT_ERRORS], {
        200: { description: "One page of statements", schema: StatementPageSchema },
      }),
    })
    .get("/:statement_id", ({ principal, params }) => service.get(principal, params.statement_id), {
      params: StatementIdParams,
      detail: doc(
        "Poll a statement",
        ["invalid request body", "not_found", "forbidden_account"],
        { 200: { description: "The statement", schema: StatementSchema } },
        "fetched_at and operations_count appear once the statement is ready. Poll at most every 5 seconds.",
      ),
    })
    .get(
      "/:statement_id/export",
      ({ principal, params, query, requestState }) =>
        auditedStatementAction(
          audit,
          { principal, state: requestState },
          "statement.export",
          {
            statement_id: params.statement_id,
            format: query.format,
            version: query.version,
            bom: query.bom,
            operation_id: query.operation_id,
          },
          () => {
            const download = checkedDownload(query);
            const { row, account } = service.owned(principal, params.statement_id);
            const response = downloadResponse(deps, row, account, download, requestState.requestId);
            return { response, account };
          },
          // The file carries the full number; its entry, like every other, only the masked one.
          ({ account }) => ({
            target: params.statement_id,
            outcome: "ok",
            arguments: {
              bank_account_id: account.id,
              account_masked: maskAccountNumber(account.accountNumber),
            },
          }),
        ).then((r) => r.response),
      {
        params: StatementIdParams,
        query: ExportQuery,
        detail: doc(
          "Download a ready statement",
          ["invalid request body", "validation_error", "not_found", "forbidden_account", "not_ready"],
          {
            200: {
              description: "The file as an attachment: 1C text (cp1251), CSV or JSON",
              schema: ExportFileSchema,
              mediaTypes: ["text/plain; charset=windows-1251", "text/csv", "application/json"],
            },
          },
        ),
      },
    );
}
