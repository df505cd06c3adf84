// The statements contract: request and response schemas of the integration REST API, and the
// statement and balance objects that the agent tools show as well. The service's input and view
// types are derived from these schemas, so a field changes in one place.
// Request schemas use Elysia's `t` (it coerces query strings to numbers); the response objects use
// plain TypeBox, which is what the agent tools publish as output schemas.
import { type Static, Type } from "@sinclair/typebox";
import { t } from "elysia";
import { closed } from "../http/closed-body";

const StatementStatusSchema = Type.Union([
  Type.Literal("processing"),
  Type.Literal("ready"),
  Type.Literal("failed"),
]);

const StatementSourceSchema = Type.Union([
  Type.Literal("integration"),
  Type.Literal("ui"),
  Type.Literal("import"),
  Type.Literal("sync"),
]);

/** The statement object: REST responses and (with free text masked) the agent tools' results. */
export const StatementSchema = Type.Object({
  statement_id: Type.String(),
  status: StatementStatusSchema,
  bank_account_id: Type.String(),
  account_number_masked: Type.String(),
  external_id: Type.Union([Type.String(), Type.Null()]),
  source: StatementSourceSchema,
  date_from: Type.String(),
  date_to: Type.String(),
  created_at: Type.String(),
  fetched_at: Type.Optional(Type.String()),
  operations_count: Type.Optional(Type.Integer()),
  error: Type.Optional(
    Type.Object({
      code: Type.String(),
      message: Type.String(),
      details: Type.Optional(
        Type.Object({ bank_code: Type.String({ description: "The bank's own error code" }) }),
      ),
    }),
  ),
});
export type StatementView = Static<typeof StatementSchema>;

export const StatementPageSchema = Type.Object({
  statements: Type.Array(StatementSchema),
  next_cursor: Type.Union([Type.String(), Type.Null()], { description: "null on the last page" }),
});
export type StatementPage = Static<typeof StatementPageSchema>;

/** An account's cached balance, as the admin API and the get_balance tool show it. */
export const BalanceSchema = Type.Object({
  bank_account_id: Type.String(),
  balance: Type.Union([Type.Number(), Type.Null()], { description: "Rubles; null when nothing is cached" }),
  currency: Type.String(),
  as_of: Type.Union([Type.String(), Type.Null()]),
  stale: Type.Boolean(),
});
export type BalanceView = Static<typeof BalanceSchema>;

const uuid = t.String({ format: "uuid" });
const externalId = t.String({ description: "Idempotency key: trimmed, 1–256 characters, unique per token" });

export const OrderStatementBody = closed(
  t.Object({
    bank_account_id: uuid,
    external_id: externalId,
    date_from: t.String({ description: "YYYY-MM-DD" }),
    date_to: t.String({ description: "YYYY-MM-DD, inclusive; at most 31 days; not after today" }),
  }),
);
export type OrderInput = Static<typeof OrderStatementBody>;

export const ListStatementsQuery = t.Object({
  bank_account_id: t.Optional(uuid),
  status: t.Optional(StatementStatusSchema),
  limit: t.Optional(t.Integer({ minimum: 1, maximum: 100 })),
  cursor: t.Optional(t.String()),
});
export type ListStatementsInput = Static<typeof ListStatementsQuery>;

export const StatementIdParams = t.Object({ statement_id: uuid });

export const ExportQuery = t.Object({
  format: t.String({ description: "1c, csv or json" }),
  version: t.Optional(t.String({ description: "1.02 or 1.03 (default), only with format=1c" })),
  bom: t.Optional(
    t.String({
      description:
        "1: the csv starts with the UTF-8 byte order mark (for Excel in a Russian locale); 0 (default): without",
    }),
  ),
  operation_id: t.Optional(
    t.String({
      description:
        "1: the csv gets a 13th column, operation_id, after the specification's 12 (to merge overlapping " +
        "statements: one operation has one operation_id in every statement); 0 (default): the 12 columns only",
    }),
  ),
});

/** The export answers with a file, not JSON: 1C text (cp1251), CSV or JSON, as an attachment. */
export const ExportFileSchema = t.String({ format: "binary" });
