import { type Static, Type } from "@sinclair/typebox";
import { ApiError } from "../../core/errors";
import { UUID_PATTERN } from "../../core/ids";
import { kopecksToJsonNumber } from "../../formats/money";
import { StatementSchema } from "../../statements/model";
import { statementView } from "../../statements/views";
import {
  OPERATION_COLUMNS,
  oneLine,
  operationLine,
  operationsCount,
  rubles,
  ruPeriod,
  signed,
} from "../answer-text";
import { OperationSchema, operationView, toolStatementView } from "../views";
import { UNTRUSTED } from "./common";
import type { ToolDefinition } from "./registry";

/** Above this many operations get_statement answers with a summary instead. */
const MAX_INLINE_OPERATIONS = 500;

const input = Type.Object(
  { statement_id: Type.String({ pattern: UUID_PATTERN, description: "statement_id from list_statements" }) },
  { additionalProperties: false },
);
const Rubles = (description: string) =>
  Type.Union([Type.Number(), Type.Null()], { description: `${description}; null when the bank gave none` });

const SummarySchema = Type.Object(
  {
    operations_count: Type.Integer(),
    total_credit: Type.Number({ description: "Money in, rubles" }),
    total_debit: Type.Number({ description: "Money out, rubles" }),
    opening_balance: Rubles("Balance at the start of the period, rubles"),
    closing_balance: Rubles("Balance at the end of the period, rubles"),
    first_doc_date: Type.Union([Type.String(), Type.Null()]),
    last_doc_date: Type.Union([Type.String(), Type.Null()]),
  },
  { description: "The statement's balances and turnovers, as its 1C export has them" },
);

const output = Type.Object({
  statement: StatementSchema,
  summary: Type.Optional(SummarySchema),
  operations: Type.Optional(
    Type.Array(OperationSchema, { description: "Present with up to 500 operations" }),
  ),
  hint: Type.Optional(Type.String()),
});
type Output = Static<typeof output>;

export const getStatementTool: ToolDefinition<typeof input, typeof output> = {
  name: "get_statement",
  title: "Get a statement with its operations",
  description:
    "Returns one statement of an account the token may read: its summary (operations count, total " +
    "credit and debit, opening and closing balance, first and last document date) and, with up to " +
    "500 operations, the operations themselves (amounts in rubles, account numbers masked; the text " +
    "has one line per operation: date | signed amount | counterparty | INN | document number | " +
    "purpose). With more than 500 operations it returns the summary and a hint instead: then use " +
    "search_operations with filters and paging. Quote the summary's totals rather than adding up " +
    "lines. A statement still processing gives the error not_ready (try again later); an unknown " +
    `or unreadable one gives not_found. ${UNTRUSTED}`,
  inputSchema: input,
  outputSchema: output,
  text: statementText,
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
    const money = (k: number | null) => (k === null ? null : kopecksToJsonNumber(k));
    const summary = (range: { first: string | null; last: string | null }) => ({
      operations_count: count,
      total_credit: kopecksToJsonNumber(row.total_credit ?? 0),
      total_debit: kopecksToJsonNumber(row.total_debit ?? 0),
      opening_balance: money(row.opening_balance),
      closing_balance: money(row.closing_balance),
      first_doc_date: range.first,
      last_doc_date: range.last,
    });
    if (count <= MAX_INLINE_OPERATIONS) {
      const operations = read.statementOperations(row, MAX_INLINE_OPERATIONS).map(operationView);
      // Operations come in the bank's order: the dates' range is their least and greatest.
      let first: string | null = null;
      let last: string | null = null;
      for (const op of operations) {
        if (first === null || op.doc_date < first) first = op.doc_date;
        if (last === null || op.doc_date > last) last = op.doc_date;
      }
      return { statement, summary: summary({ first, last }), operations };
    }
    return {
      statement,
      summary: summary(read.statementDateRange(row)),
      hint:
        `This statement has ${count} operations, more than ${MAX_INLINE_OPERATIONS}: call search_operations ` +
        `with bank_account_id "${row.bank_account_id}", date_from "${row.date_from}", date_to "${row.date_to}" ` +
        "and filters (query, counterparty_inn, amount_min, amount_max, direction), following next_cursor.",
    };
  },
};

/** The first line: which statement, its period, and its totals and balances in words. */
function statementText(out: Output): string {
  const { statement, summary } = out;
  const head = `Выписка по счёту ${statement.account_number_masked} за ${ruPeriod(statement.date_from, statement.date_to)}`;
  if (statement.status === "failed") {
    const error = statement.error;
    return `${head}: банк её не выдал (${error ? `${error.code}: ${oneLine(error.message)}` : "ошибка"}).`;
  }
  if (!summary) return `${head}.`;
  const balances =
    summary.opening_balance === null || summary.closing_balance === null
      ? "остатков банк не сообщил"
      : `остаток на начало ${rubles(summary.opening_balance)}, на конец ${rubles(summary.closing_balance)}`;
  const lines = [
    `${head}, получена ${statement.fetched_at ?? "—"}: ${operationsCount(summary.operations_count)}, ` +
      `поступления ${signed("credit", summary.total_credit)}, списания ${signed("debit", summary.total_debit)}; ${balances}.`,
  ];
  if (out.operations && out.operations.length > 0) {
    lines.push(OPERATION_COLUMNS, ...out.operations.map(operationLine));
  }
  if (out.hint) {
    lines.push(
      `Операций больше ${MAX_INLINE_OPERATIONS}, построчно они не приведены: вызовите search_operations ` +
        `с bank_account_id "${statement.bank_account_id}", date_from "${statement.date_from}", ` +
        `date_to "${statement.date_to}" и фильтрами, следуя next_cursor.`,
    );
  }
  return lines.join("\n");
}
