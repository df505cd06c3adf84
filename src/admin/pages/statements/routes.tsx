// Statements of every source: the list, ordering one, importing the bank's file, downloading.
import { ApiError } from "../../../core/errors";
import { isUuid } from "../../../core/ids";
import { maskAccountNumber } from "../../../formats/mask";
import { MB } from "../../../http/body-policy";
import { checkedDownload, downloadResponse } from "../../../statements/export/download";
import type { StatementStatus } from "../../../statements/repository";
import type { StatementView } from "../../../statements/service";
import { STATUS_LABEL } from "../accounts/overview";
import { formatPeriod, parseRuDate } from "../format";
import { attempt, nonEmpty, type Outcome, PAGE_SIZE, type PageKit, page, redirect } from "../kit";
import type { FormValues } from "../layout";
import { operatorMessage } from "../messages";
import { get, type PageRoute, pageDoc, post, type RouteContext } from "../page-route";
import type { AdminSession } from "../session";
import { StatementsPage } from "./view";

/** A date typed as дд.мм.гггг as YYYY-MM-DD; anything else as typed. */
const isoDateOf = (text: string | undefined) => parseRuDate(text ?? "") ?? (text ?? "").trim();

/** The bank's statement file, as the integration API takes it (decisions §11). */
const STATEMENT_FILE_LIMIT = 50 * MB;
const STATUSES: StatementStatus[] = ["processing", "ready", "failed"];

export function statementRoutes(kit: PageKit): PageRoute[] {
  const { admin, statements } = kit.deps;
  const deps = kit.deps;
  const { actorOf, sessionOf, signedInFrame, send, run, view, action, uploadAction, flashThen } = kit;

  /** A statement made from the statements page (ordered or imported): audited, then the list again. */
  function statementAction(
    session: AdminSession,
    ctx: RouteContext,
    action: string,
    input: Record<string, unknown>,
    make: () => StatementView,
    done: (view: StatementView) => string,
    values: FormValues,
  ): Outcome {
    const result = attempt(() =>
      admin.audit.audited(action, actorOf(ctx), input, make, (view) => view.statement_id),
    );
    if ("error" in result)
      return statementsPage(session, {}, result.error.status, result.error.message, values);
    return flashThen(session, done(result.ok), "/admin/statements");
  }

  function statementsPage(
    session: AdminSession,
    query: Record<string, string | undefined>,
    status = 200,
    error: string | null = null,
    values: FormValues = {},
  ): Outcome {
    const accounts = admin.accounts.list();
    const filters = {
      bank_account_id: nonEmpty(query.bank_account_id),
      status: STATUSES.find((s) => s === query.status),
      cursor: nonEmpty(query.cursor),
    };
    let listed: {
      statements: Parameters<typeof StatementsPage>[0]["statements"];
      next_cursor: string | null;
    } = {
      statements: [],
      next_cursor: null,
    };
    const result = attempt(() =>
      statements.page({
        accountIds: filters.bank_account_id
          ? accounts
              .filter((a) => a.bank_account_id === filters.bank_account_id)
              .map((a) => a.bank_account_id)
          : accounts.map((a) => a.bank_account_id),
        status: filters.status,
        limit: PAGE_SIZE,
        cursor: filters.cursor,
      }),
    );
    if ("error" in result) {
      status = result.error.status;
      error = result.error.message;
    } else listed = result.ok;
    return page(
      <StatementsPage
        frame={signedInFrame(session, "Выписки", "statements")}
        accounts={accounts}
        statements={listed.statements}
        nextCursor={listed.next_cursor}
        filters={filters}
        error={error}
        values={values}
        today={statements.today()}
        companies={admin.companies.list()}
      />,
      status,
    );
  }

  return [
    post(
      "/admin/statements/import",
      uploadAction(STATEMENT_FILE_LIMIT, async (session, form, files, ctx) => {
        const input = { bank_account_id: form.bank_account_id ?? "" };
        const file = files.get("file");
        const refused = (error: ApiError) =>
          statementsPage(session, {}, error.status, operatorMessage(error.message), input);
        if (!file || file.bytes.byteLength === 0) {
          return refused(
            new ApiError("validation_error", "Выберите файл выписки (kl_to_1c.txt)", { field: "file" }),
          );
        }
        // Parsed and stored off the server's thread; the audit entry follows the stored statement.
        let imported: { created: boolean; statement: StatementView };
        try {
          imported = await statements.importFileFromUi(input.bank_account_id, file.bytes, file.sha256);
        } catch (error) {
          if (error instanceof ApiError) return refused(error);
          throw error;
        }
        const view = imported.statement;
        admin.audit.record(
          "admin.statement.import",
          view.statement_id,
          actorOf(ctx),
          { ...input, filename: file.filename, bytes: file.bytes.byteLength },
          imported.created ? "ok" : "repeat",
        );
        const period = `${formatPeriod(view.date_from, view.date_to)}, операций: ${view.operations_count ?? 0}`;
        return flashThen(
          session,
          imported.created
            ? `Выписка загружена: ${period}`
            : `Этот файл уже загружен на этот счёт: выписка ${period}; новая не создана`,
          "/admin/statements",
        );
      }),
      {
        bodyPolicy: { kind: "stream", limit: STATEMENT_FILE_LIMIT },
        detail: pageDoc("Admin pages: import a statement from the bank's 1C file", "form"),
      },
    ),
    get(
      "/admin/statements",
      view((session, ctx) => statementsPage(session, ctx.query)),
      { detail: pageDoc("Admin pages: statements of every source") },
    ),
    post(
      "/admin/statements",
      action((session, form, ctx) => {
        // Dates typed as дд.мм.гггг; anything else goes to the service's own check as typed.
        const input = {
          bank_account_id: form.bank_account_id ?? "",
          date_from: isoDateOf(form.date_from),
          date_to: isoDateOf(form.date_to),
        };
        return statementAction(
          session,
          ctx,
          "admin.statement.order",
          input,
          () => statements.orderFromUi(input.bank_account_id, input.date_from, input.date_to),
          (v) => `Выписка заказана: ${formatPeriod(v.date_from, v.date_to)}, ${STATUS_LABEL[v.status]}`,
          form,
        );
      }),
      { detail: pageDoc("Admin pages: order a statement via the UI", "form") },
    ),
    get(
      "/admin/statements/:id/export",
      (ctx) => {
        const session = sessionOf(ctx);
        if (!session) return send(ctx, redirect("/admin/login"));
        const id = ctx.params.id ?? "";
        try {
          if (!isUuid(id)) throw new ApiError("not_found", "Выписка не найдена");
          const download = checkedDownload({
            format: ctx.query.format ?? "",
            version: ctx.query.version,
            bom: ctx.query.bom,
            operation_id: ctx.query.operation_id,
          });
          const { row, account } = statements.forOperator(id);
          const response = downloadResponse(
            deps.download,
            row,
            account,
            download,
            ctx.requestState.requestId,
          );
          // The file carries the full number; its entry, like every other, only the masked one.
          admin.audit.record("admin.statement.export", id, actorOf(ctx), {
            format: download.format,
            bank_account_id: account.id,
            account_masked: maskAccountNumber(account.accountNumber),
          });
          return response;
        } catch (error) {
          return run(ctx, session, () => {
            throw error;
          });
        }
      },
      { detail: pageDoc("Admin pages: download a ready statement (1C, CSV or JSON)") },
    ),
  ];
}
