import { Type } from "@sinclair/typebox";
import { validationError } from "../../core/errors";
import { StatementPageSchema } from "../../statements/model";
import { statementView } from "../../statements/views";
import { nextPageLine, oneLine, operationsCount, ruPeriod } from "../answer-text";
import { toolStatementView } from "../views";
import { BankAccountId, Cursor } from "./common";
import type { ToolDefinition } from "./registry";

const LIST_STATEMENTS_DEFAULT_LIMIT = 20;

const input = Type.Object(
  {
    bank_account_id: BankAccountId,
    status: Type.Optional(
      Type.Union([Type.Literal("processing"), Type.Literal("ready"), Type.Literal("failed")], {
        description: "Only statements in this status",
      }),
    ),
    limit: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 100, description: "Page size, default 20, at most 100" }),
    ),
    cursor: Type.Optional(Cursor),
  },
  { additionalProperties: false },
);
const output = StatementPageSchema;

export const listStatementsTool: ToolDefinition<typeof input, typeof output> = {
  name: "list_statements",
  title: "List statement orders of an account",
  description:
    "Returns the statement orders of one bank account, newest first, whoever ordered them (the " +
    "admin UI, an integration, another agent token): statement_id, status (processing, ready, " +
    "failed), period, created_at, and for ready ones fetched_at and operations_count. Default 20 " +
    "per page, at most 100; pass next_cursor to get the next page. Cannot order a statement. " +
    "Use get_statement or search_operations to read operations.",
  inputSchema: input,
  outputSchema: output,
  text(out, args) {
    const filter = args.status ? ` в статусе ${args.status}` : "";
    if (out.statements.length === 0) return `Выписок${filter} по этому счёту нет.`;
    return [
      `Выписки${filter} по счёту ${out.statements[0]!.account_number_masked}, новые первыми: ${out.statements.length} на этой странице.`,
      "statement_id | Статус | Период | Операций | Получена | Кто заказал",
      ...out.statements.map((s) =>
        [
          s.statement_id,
          s.status === "failed" && s.error
            ? `failed (${s.error.code}: ${oneLine(s.error.message)})`
            : s.status,
          ruPeriod(s.date_from, s.date_to),
          s.operations_count === undefined ? "—" : operationsCount(s.operations_count),
          s.fetched_at ?? "—",
          s.source,
        ].join(" | "),
      ),
      ...nextPageLine(out.next_cursor),
    ].join("\n");
  },
  handler(args, { principal }, { access, read, cursors }) {
    const account = access.account(principal, args.bank_account_id, "read_statements");
    const limit = args.limit ?? LIST_STATEMENTS_DEFAULT_LIMIT;
    const scope = `list_statements ${principal.tokenId} ${account.id}`;
    let before: { created_at: string; id: string } | undefined;
    if (args.cursor !== undefined) {
      const parts = cursors.open(args.cursor, scope, 2);
      if (!parts) throw validationError("cursor", "cursor: неверный курсор");
      before = { created_at: parts[0]!, id: parts[1]! };
    }
    const rows = read.statements({
      bankAccountIds: [account.id],
      status: args.status,
      before,
      limit: limit + 1,
    });
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    return {
      statements: page.map((row) => toolStatementView(statementView(row, account))),
      next_cursor: rows.length > limit && last ? cursors.seal([last.created_at, last.id], scope) : null,
    };
  },
};
