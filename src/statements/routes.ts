// REST routes of the integration API for statements.
import { Elysia, t } from "elysia";
import type { TokenGuard } from "../auth/guard";
import { dateInZone } from "../core/clock";
import { ApiError, type ErrorCode, validationError } from "../core/errors";
import type { Logger } from "../core/logger";
import { JSON_BODY, routeDoc, TOKEN_ERRORS } from "../http/docs";
import { requestState } from "../http/spine";
import { tokenAuth } from "../http/token-auth";
import { type ExportFormat, exportStatement } from "./export";
import type { ExportQueries } from "./export/queries";
import type { ExportThreads } from "./export/threads";
import type { StatementRepository } from "./repository";
import type { StatementService } from "./service";

const ACCOUNT_ERRORS: ErrorCode[] = ["not_found", "forbidden_company", "forbidden_account"];
const doc = (summary: string, errors: ErrorCode[], success?: Record<number, string>, description?: string) =>
  routeDoc("statements", summary, [...TOKEN_ERRORS, ...errors], { success, description });

export function statementRoutes(deps: {
  guard: TokenGuard;
  service: StatementService;
  repo: StatementRepository;
  exports: ExportQueries;
  exportThreads: ExportThreads;
  logger: Logger;
  timezone: string;
  now: () => Date;
}) {
  const { service } = deps;
  return new Elysia({ prefix: "/api/v1/integration/statements" })
    .use(tokenAuth(deps.guard, { purpose: "integration", scope: "read_statements" }))
    .post(
      "",
      ({ body, principal, set }) => {
        const { created, statement } = service.order(principal, body);
        set.status = created ? 201 : 200;
        return statement;
      },
      {
        parse: JSON_BODY,
        body: t.Object({
          bank_account_id: t.String({ format: "uuid" }),
          external_id: t.String({
            description: "Idempotency key: trimmed, 1–256 characters, unique per token",
          }),
          date_from: t.String({ description: "YYYY-MM-DD" }),
          date_to: t.String({ description: "YYYY-MM-DD, inclusive; at most 31 days; not after today" }),
        }),
        detail: doc(
          "Order a statement",
          ["invalid request body", "validation_error", ...ACCOUNT_ERRORS, "conflict", "bank_not_supported"],
          { 201: "Ordered (status processing)", 200: "Idempotent repeat: the existing statement" },
        ),
      },
    )
    .get("", ({ principal, query }) => service.list(principal, query), {
      query: t.Object({
        bank_account_id: t.Optional(t.String({ format: "uuid" })),
        status: t.Optional(t.Union([t.Literal("processing"), t.Literal("ready"), t.Literal("failed")])),
        limit: t.Optional(t.Integer({ minimum: 1, maximum: 100 })),
        cursor: t.Optional(t.String()),
      }),
      detail: doc("List this token's statements, newest first", ["validation_error", ...ACCOUNT_ERRORS]),
    })
    .get("/:statement_id", ({ principal, params }) => service.get(principal, params.statement_id), {
      params: t.Object({ statement_id: t.String({ format: "uuid" }) }),
      detail: doc(
        "Poll a statement",
        ["invalid request body", "not_found", "forbidden_account"],
        undefined,
        "fetched_at and operations_count appear once the statement is ready. Poll at most every 5 seconds.",
      ),
    })
    .get(
      "/:statement_id/export",
      ({ principal, params, query, request }) => {
        const format = query.format as ExportFormat;
        if (!["1c", "csv", "json"].includes(format)) {
          throw validationError("format", "format: одно из 1c, csv, json");
        }
        if (query.version !== undefined && format !== "1c") {
          throw validationError("version", "version допустим только для format=1c");
        }
        const version = query.version ?? "1.03";
        if (version !== "1.02" && version !== "1.03")
          throw validationError("version", "version: 1.02 или 1.03");
        const { row, account } = service.owned(principal, params.statement_id);
        if (row.status !== "ready") throw new ApiError("not_ready", undefined, { status: row.status });
        const now = deps.now();
        const time = new Intl.DateTimeFormat("en-GB", {
          timeZone: deps.timezone,
          hour: "2-digit",
          minute: "2-digit",
          second: "2-digit",
          hourCycle: "h23",
        }).format(now);
        const file = exportStatement(deps.exports, row, account, format, {
          version,
          created: { date: dateInZone(now, deps.timezone), time },
          pages: (job, pages, operations) => deps.exportThreads.source(job, pages, operations),
          onFailure: (error) =>
            deps.logger.error("export failed", {
              request_id: requestState(request).requestId,
              statement_id: row.id,
              format,
              error: error instanceof Error ? error.message : String(error),
            }),
        });
        return new Response(file.body, {
          headers: {
            "content-type": file.contentType,
            "content-disposition": `attachment; filename="${file.filename}"`,
          },
        });
      },
      {
        params: t.Object({ statement_id: t.String({ format: "uuid" }) }),
        query: t.Object({
          format: t.String({ description: "1c, csv or json" }),
          version: t.Optional(t.String({ description: "1.02 or 1.03 (default), only with format=1c" })),
        }),
        detail: doc("Download a ready statement", [
          "invalid request body",
          "validation_error",
          "not_found",
          "forbidden_account",
          "not_ready",
        ]),
      },
    );
}
