import { Type } from "@sinclair/typebox";
import { ApiError } from "../../core/errors";
import { UUID_PATTERN } from "../../core/ids";
import { kopecksToJsonNumber } from "../../formats/money";
import { StatementSchema } from "../../statements/model";
import { statementView } from "../../statements/views";
import { OperationSchema, operationView, toolStatementView } from "../views";
import { UNTRUSTED } from "./common";
import type { ToolDefinition } from "./registry";

/** Above this many operations get_statement answers with a summary instead. */
const MAX_INLINE_OPERATIONS = 500;

const input = Type.Object(
  { statement_id: Type.String({ pattern: UUID_PATTERN, description: "statement_id from list_statements" }) },
  { additionalProperties: false },
);
const output = Type.Object({
  statement: StatementSchema,
  operations: Type.Optional(
    Type.Array(OperationSchema, { description: "Present with up to 500 operations" }),
  ),
  summary: Type.Optional(
    Type.Object(
      {
        operations_count: Type.Integer(),
        total_credit: Type.Number(),
        total_debit: Type.Number(),
        first_doc_date: Type.Union([Type.String(), Type.Null()]),
        last_doc_date: Type.Union([Type.String(), Type.Null()]),
      },
      { description: "Present instead of operations when there are more than 500" },
    ),
  ),
  hint: Type.Optional(Type.String()),
});

export const getStatementTool: ToolDefinition<typeof input, typeof output> = {
  name: "get_statement",
  title: "Get a statement with its operations",
  description:
    "Returns one statement of an account the token may read, with its operations (amounts in rubles, " +
    "account numbers masked). With more than 500 operations it returns a summary (count, total " +
    "credit and debit, first and last document date) and a hint instead: then use search_operations " +
    "with filters and paging. A statement still processing gives the error not_ready (try again " +
    `later); an unknown or unreadable one gives not_found. ${UNTRUSTED}`,
  inputSchema: input,
  outputSchema: output,
  handler(args, { principal }, { access, read }) {
    const row = read.statement(args.statement_id);
    if (!row) throw new ApiError("not_found", "Выписка не найдена");
    let account: ReturnType<typeof access.account>;
    try {
      account = access.account(principal, row.bank_account_id, "read_statements");
    } catch (e) {
      // A statement on an account the token cannot read is deliberately indistinguishable from none.
      if (e instanceof ApiError) throw new ApiError("not_found", "Выписка не найдена");
      throw e;
    }
    const statement = toolStatementView(statementView(row, account));
    if (row.status === "processing") {
      throw new ApiError("not_ready", "Выписка ещё не готова; повторите позже");
    }
    if (row.status === "failed") return { statement, operations: [] };
    const count = row.operations_count ?? 0;
    if (count <= MAX_INLINE_OPERATIONS) {
      return {
        statement,
        operations: read.statementOperations(row, MAX_INLINE_OPERATIONS).map(operationView),
      };
    }
    const range = read.statementDateRange(row);
    return {
      statement,
      summary: {
        operations_count: count,
        total_credit: kopecksToJsonNumber(row.total_credit ?? 0),
        total_debit: kopecksToJsonNumber(row.total_debit ?? 0),
        first_doc_date: range.first,
        last_doc_date: range.last,
      },
      hint:
        `This statement has ${count} operations, more than ${MAX_INLINE_OPERATIONS}: call search_operations ` +
        `with bank_account_id "${row.bank_account_id}", date_from "${row.date_from}", date_to "${row.date_to}" ` +
        "and filters (query, counterparty_inn, amount_min, amount_max, direction), following next_cursor.",
    };
  },
};
