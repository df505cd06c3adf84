// Compile-time ties between the hand-written row types (what the prepared statements return,
// snake_case as the columns are named) and the tables of db/schema.ts: a column added, removed,
// renamed or retyped in one and not the other fails `tsc` here. Nothing in this file runs.
// It sits at the top of src/ because db/ never imports a feature folder.
import type { Same } from "./core/same-type";
import type { BankAccountRecord } from "./db/repos/accounts";
import type { TokenAuthRecord } from "./db/repos/tokens";
import type {
  apiTokens,
  balances,
  bankAccounts,
  paymentImports,
  paymentItems,
  paymentSubmissions,
  statements,
} from "./db/schema";
import type { ImportRow, ItemRow, SubmissionRow } from "./payments/repository";
import type { BalanceRow, StatementRow } from "./statements/repository";

type Snake<S extends string> = S extends `${infer Head}${infer Tail}`
  ? `${Head extends Uppercase<Head> ? (Head extends Lowercase<Head> ? Head : `_${Lowercase<Head>}`) : Head}${Snake<Tail>}`
  : S;
/** A table's row as SQL returns it: column names in snake_case. */
type SqlRow<T extends { $inferSelect: object }> = {
  [K in keyof T["$inferSelect"] as Snake<K & string>]: T["$inferSelect"][K];
};

export const rowTypesMatchTables: [
  Same<StatementRow, SqlRow<typeof statements>>,
  Same<BalanceRow, Omit<SqlRow<typeof balances>, "bank_account_id">>,
  Same<ImportRow, SqlRow<typeof paymentImports>>,
  Same<ItemRow, SqlRow<typeof paymentItems>>,
  Same<SubmissionRow, SqlRow<typeof paymentSubmissions>>,
  Same<BankAccountRecord, (typeof bankAccounts)["$inferSelect"]>,
  Same<
    TokenAuthRecord,
    Pick<
      (typeof apiTokens)["$inferSelect"],
      | "id"
      | "companyId"
      | "purpose"
      | "mode"
      | "scopeReadStatements"
      | "scopeSendPayments"
      | "allowedIps"
      | "rateLimitPerMinute"
      | "expiresAt"
      | "revokedAt"
      | "oauthGrantId"
    >
  >,
] = [true, true, true, true, true, true, true];
