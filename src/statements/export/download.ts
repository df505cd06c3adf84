// A statement download as a Response, for the integration API and the admin pages alike: the
// query checked, the statement's state checked, the file streamed.
import { dateInZone } from "../../core/clock";
import { ApiError, validationError } from "../../core/errors";
import type { Logger } from "../../core/logger";
import type { Metrics } from "../../core/metrics";
import type { ExportReads } from "../../db/export-reads";
import type { StatementRow } from "../queries";
import { type ExportFormat, exportStatement } from ".";
import type { ExportThreads } from "./threads";

export interface DownloadDeps {
  exports: ExportReads;
  exportThreads: ExportThreads;
  logger: Logger;
  timezone: string;
  now: () => Date;
  metrics?: Metrics;
}

export interface DownloadQuery {
  format: string;
  version?: string;
  bom?: string;
  operation_id?: string;
}

/** The query's format, version and byte order mark, or validation_error naming the parameter. */
export function checkedDownload(query: DownloadQuery): {
  format: ExportFormat;
  version: "1.02" | "1.03";
  bom: boolean;
  operationId: boolean;
} {
  const format = query.format as ExportFormat;
  if (!["1c", "csv", "json"].includes(format))
    throw validationError("format", "format: одно из 1c, csv, json");
  if (query.version !== undefined && format !== "1c") {
    throw validationError("version", "version допустим только для format=1c");
  }
  const version = query.version ?? "1.03";
  if (version !== "1.02" && version !== "1.03") throw validationError("version", "version: 1.02 или 1.03");
  if (query.bom !== undefined && format !== "csv")
    throw validationError("bom", "bom допустим только для format=csv");
  if (query.bom !== undefined && query.bom !== "0" && query.bom !== "1") {
    throw validationError("bom", "bom: 1 (с меткой порядка байтов UTF-8) или 0");
  }
  if (query.operation_id !== undefined && format !== "csv")
    throw validationError("operation_id", "operation_id допустим только для format=csv");
  if (query.operation_id !== undefined && query.operation_id !== "0" && query.operation_id !== "1") {
    throw validationError("operation_id", "operation_id: 1 (добавить столбец operation_id последним) или 0");
  }
  return { format, version, bom: query.bom === "1", operationId: query.operation_id === "1" };
}

/** A ready statement's file; not_ready otherwise (saying plainly when it failed and never will be). */
export function downloadResponse(
  deps: DownloadDeps,
  row: StatementRow,
  account: { accountNumber: string; alias: string },
  query: ReturnType<typeof checkedDownload>,
  requestId: string,
): Response {
  if (row.status === "failed") {
    // The spec's code, but plainly: a failed statement never becomes ready; retrying is useless.
    // An order with an external_id answers the same failed statement when repeated: a new order
    // needs a new external_id.
    const again =
      row.external_id !== null
        ? `Закажите новую выписку с другим external_id (с тем же external_id вернётся эта же выписка «${row.external_id}»)`
        : "Закажите выписку заново";
    throw new ApiError(
      "not_ready",
      `Выписка не будет готова: банк ответил ошибкой (${row.error_code ?? "bank_error"}). ${again}`,
      {
        status: "failed",
        error: { code: row.error_code ?? "bank_error", message: row.error_message ?? "Ошибка банка" },
      },
    );
  }
  if (row.status !== "ready") throw new ApiError("not_ready", undefined, { status: row.status });
  const now = deps.now();
  const time = new Intl.DateTimeFormat("en-GB", {
    timeZone: deps.timezone,
    hour: "2-digit",
    minute: "2-digit",
    second: "2-digit",
    hourCycle: "h23",
  }).format(now);
  const { format } = query;
  const file = exportStatement(deps.exports, row, account, format, {
    version: query.version,
    bom: query.bom,
    operationId: query.operationId,
    created: { date: dateInZone(now, deps.timezone), time },
    pages: (job, pages, operations) => deps.exportThreads.source(job, pages, operations),
    onFailure: (error) =>
      deps.logger.error("export failed", {
        request_id: requestId,
        statement_id: row.id,
        format,
        error: error instanceof Error ? error.message : String(error),
      }),
    onBytes: deps.metrics && ((bytes) => deps.metrics?.exportBytes(format, bytes)),
  });
  return new Response(file.body, {
    headers: {
      "content-type": file.contentType,
      "content-disposition": `attachment; filename="${file.filename}"`,
    },
  });
}
