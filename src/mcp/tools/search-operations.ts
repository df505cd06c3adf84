import { createHash } from "node:crypto";
import { Type } from "@sinclair/typebox";
import { validationError } from "../../core/errors";
import { ruDaysGenitive } from "../../core/plural";
import {
  type OperationFilter,
  SEARCH_MAX_WORDS,
  SEARCH_MIN_CHARS,
  searchWords,
  type TotalsFilter,
} from "../../db/operation-filter";
import type { OperationTotals } from "../../db/operation-rows";
import { SearchBudgetExceeded } from "../../db/search-limits";
import { daysInclusive, isValidIsoDate } from "../../formats/dates";
import { kopecksToJsonNumber, rublesToKopecks } from "../../formats/money";
import { type CursorSigner, OperationSchema, operationView } from "../views";
import { BankAccountId, Cursor, DATE_PATTERN, UNTRUSTED } from "./common";
import type { ToolDefinition } from "./registry";
import { searchText } from "./search-text";

const SEARCH_MAX_DAYS = 90;
const SEARCH_DEFAULT_LIMIT = 50;

const Amount = (description: string) => Type.Number({ minimum: 0, description });

const input = Type.Object(
  {
    bank_account_id: BankAccountId,
    date_from: Type.String({ pattern: DATE_PATTERN, description: "YYYY-MM-DD, first document date" }),
    date_to: Type.String({
      pattern: DATE_PATTERN,
      description: "YYYY-MM-DD, last document date, inclusive; at most 90 days after date_from",
    }),
    amount_min: Type.Optional(Amount("Minimum amount in rubles, inclusive")),
    amount_max: Type.Optional(Amount("Maximum amount in rubles, inclusive")),
    counterparty_inn: Type.Optional(
      Type.String({
        pattern: "^(\\d{10}|\\d{12})$",
        description: "INN of the other party (10 or 12 digits)",
      }),
    ),
    query: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 200,
        description:
          "Words to find in purpose, counterparty names or document number; case-insensitive, " +
          "Cyrillic included, each word matches as a prefix, all words must match. At most " +
          `${SEARCH_MAX_WORDS} words; words shorter than ${SEARCH_MIN_CHARS} letters or digits are ignored ` +
          "(a query of only such words is refused)",
      }),
    ),
    direction: Type.Optional(
      Type.Union([Type.Literal("credit"), Type.Literal("debit")], {
        description: "credit = money in, debit = money out",
      }),
    ),
    limit: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 100, description: "Page size, default 50, at most 100" }),
    ),
    cursor: Type.Optional(Cursor),
  },
  { additionalProperties: false },
);
const DateRange = Type.Object({ date_from: Type.String(), date_to: Type.String() });
const CoverageSchema = Type.Object(
  {
    complete: Type.Boolean({ description: "true when no day of the period is missing or partial" }),
    covered: Type.Array(DateRange, {
      description:
        "days held by a ready statement fetched after the day ended: their operations are all here",
    }),
    partial: Type.Array(Type.Object({ date: Type.String(), as_of: Type.String() }), {
      description:
        "days held only by statements fetched before the day ended: operations after as_of may be absent",
    }),
    missing: Type.Array(DateRange, {
      description: "days no ready statement holds (days after today too): their operations are not here",
    }),
  },
  { description: "Which days of the period the stored statements hold, for this account" },
);
const Totals = Type.Object(
  {
    count: Type.Integer(),
    total_credit: Type.Number({ description: "Rubles" }),
    total_debit: Type.Number({ description: "Rubles" }),
  },
  {
    description:
      "Every stored operation matching the filters in the whole period, not only this page; the same on every page",
  },
);
const output = Type.Object({
  operations: Type.Array(OperationSchema),
  next_cursor: Type.Union([Type.String(), Type.Null()], { description: "null on the last page" }),
  coverage: CoverageSchema,
  totals: Totals,
});

function kopecks(field: string, rubles: number | undefined): number | undefined {
  if (rubles === undefined) return undefined;
  const k = rublesToKopecks(rubles);
  if (k === null) {
    throw validationError(
      field,
      `${field}: неотрицательная сумма в рублях, не больше двух знаков после точки`,
    );
  }
  return k;
}

/** What a filter asks, as a cursor holds it: totals carried by a cursor are for this filter only. */
function filterKey(f: TotalsFilter): string {
  return createHash("sha256")
    .update(
      JSON.stringify([
        f.dateFrom,
        f.dateTo,
        f.amountMinKopecks ?? null,
        f.amountMaxKopecks ?? null,
        f.counterpartyInn ?? null,
        f.direction ?? null,
        f.words ?? null,
      ]),
    )
    .digest("base64url")
    .slice(0, 8);
}

/** The next page's cursor: where the page ended, and the totals of the filter it was asked with. */
function sealCursor(
  cursors: CursorSigner,
  scope: string,
  last: { doc_date: string; operation_id: string },
  totals: OperationTotals,
  filter: TotalsFilter,
): string {
  return cursors.seal(
    [
      last.doc_date,
      last.operation_id,
      // Base 36: the cursor is in the text a model reads, where every character costs.
      totals.count.toString(36),
      totals.creditKopecks.toString(36),
      totals.debitKopecks.toString(36),
      filterKey(filter),
    ],
    scope,
  );
}

/**
 * Where the next page starts, and the totals the walk counted on its first page when the cursor
 * comes back with the same filter (another filter counts its own); null for a cursor that is not
 * this signer's for `scope`.
 */
function openCursor(
  cursors: CursorSigner,
  cursor: string,
  scope: string,
  filter: TotalsFilter,
): { after: NonNullable<OperationFilter["after"]>; totals: OperationTotals | null } | null {
  const parts = cursors.open(cursor, scope, 6);
  if (!parts) return null;
  const [docDate, operationId, count, credit, debit, key] = parts as [
    string,
    string,
    string,
    string,
    string,
    string,
  ];
  return {
    after: { doc_date: docDate, operation_id: operationId },
    totals:
      key === filterKey(filter)
        ? {
            count: Number.parseInt(count, 36),
            creditKopecks: Number.parseInt(credit, 36),
            debitKopecks: Number.parseInt(debit, 36),
          }
        : null,
  };
}

/** A search over its budget is the model's to narrow: a tool-level validation_error that says how. */
async function budgeted<T>(search: Promise<T>): Promise<T> {
  try {
    return await search;
  } catch (e) {
    if (!(e instanceof SearchBudgetExceeded)) throw e;
    throw validationError(
      "query",
      "Поиск слишком широк и остановлен: сузьте период (date_from, date_to), добавьте counterparty_inn, " +
        "direction или сумму, или уточните query более длинными словами",
      { reason: "search_budget" },
    );
  }
}

/** What search_operations is asked, amounts already in kopecks (the admin pages ask the same). */
export interface SearchAsked {
  bank_account_id: string;
  date_from: string;
  date_to: string;
  amountMinKopecks?: number;
  amountMaxKopecks?: number;
  counterparty_inn?: string;
  query?: string;
  direction?: "credit" | "debit";
}

/**
 * The search's filter, checked: real dates in order, at most 90 days, the amount range in order,
 * words to look for; else a validation_error naming the tool's field.
 */
export function searchFilterOf(args: SearchAsked): TotalsFilter {
  if (!isValidIsoDate(args.date_from)) throw validationError("date_from", "date_from: неверная дата");
  if (!isValidIsoDate(args.date_to)) throw validationError("date_to", "date_to: неверная дата");
  if (args.date_from > args.date_to) throw validationError("date_from", "date_from позже date_to");
  if (daysInclusive(args.date_from, args.date_to) > SEARCH_MAX_DAYS) {
    throw validationError("date_to", `Период поиска не длиннее ${ruDaysGenitive(SEARCH_MAX_DAYS)}`, {
      max_days: SEARCH_MAX_DAYS,
    });
  }
  const amountMin = args.amountMinKopecks;
  const amountMax = args.amountMaxKopecks;
  if (amountMin !== undefined && amountMax !== undefined && amountMin > amountMax) {
    throw validationError("amount_min", "amount_min больше amount_max");
  }
  let words: string[] | undefined;
  if (args.query !== undefined) {
    const found = searchWords(args.query);
    if (!Array.isArray(found)) {
      if (found.refused === "too_many_words") {
        throw validationError(
          "query",
          `query: не больше ${SEARCH_MAX_WORDS} слов (в запросе ${found.words})`,
          {
            max_words: SEARCH_MAX_WORDS,
          },
        );
      }
      throw validationError(
        "query",
        `query: нет слов для поиска (слова короче ${SEARCH_MIN_CHARS} букв или цифр не ищутся)`,
        { min_chars: SEARCH_MIN_CHARS },
      );
    }
    words = found;
  }
  return {
    bankAccountId: args.bank_account_id,
    dateFrom: args.date_from,
    dateTo: args.date_to,
    amountMinKopecks: amountMin,
    amountMaxKopecks: amountMax,
    counterpartyInn: args.counterparty_inn,
    direction: args.direction,
    words,
  };
}

export const searchOperationsTool: ToolDefinition<typeof input, typeof output> = {
  name: "search_operations",
  title: "Search operations of an account",
  description:
    "Searches operations already received in ready statements of one bank account (the bank is " +
    "not called; operations outside any ready statement are not found). Period date_from..date_to " +
    "of at most 90 days; optional filters: amount_min/amount_max in rubles, counterparty_inn, " +
    "direction, and query (words in purpose, counterparty names, document number; case-insensitive). " +
    "Ordered by doc_date then operation_id; default 50 per page, at most 100; pass next_cursor for " +
    "the next page. totals: count, total_credit and total_debit of every matching operation in the " +
    "whole period, not only the page: quote them for sums, never add up pages. coverage: which days " +
    "of the period svc holds statements for; operations of missing days are not here and partial " +
    "days may lack operations after as_of. When coverage is not complete, tell the user which days " +
    "have no data (the first line of the text names them) instead of reporting zero. " +
    `Amounts in rubles, account numbers masked. ${UNTRUSTED}`,
  inputSchema: input,
  outputSchema: output,
  text: searchText,
  async handler(args, { principal }, { access, read, cursors, clock }) {
    const filter = searchFilterOf({
      ...args,
      amountMinKopecks: kopecks("amount_min", args.amount_min),
      amountMaxKopecks: kopecks("amount_max", args.amount_max),
    });
    const limit = args.limit ?? SEARCH_DEFAULT_LIMIT;
    const scope = `search_operations ${principal.tokenId} ${args.bank_account_id}`;
    let after: OperationFilter["after"];
    let totals: OperationTotals | null = null;
    if (args.cursor !== undefined) {
      const next = openCursor(cursors, args.cursor, scope, filter);
      if (!next) throw validationError("cursor", "cursor: неверный курсор");
      after = next.after;
      totals = next.totals;
    }
    const account = access.account(principal, args.bank_account_id, "read_statements");
    // The first page counts them (beside the page, in another thread when there are threads); the
    // next pages carry them in their cursor (they cost a read of every match, the page only its rows).
    const [rows, counted] = await Promise.all([
      budgeted(read.searchOperations({ ...filter, after, limit: limit + 1 })),
      totals ?? budgeted(read.searchTotals(filter)),
    ]);
    totals = counted;
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    return {
      operations: page.map(operationView),
      next_cursor: rows.length > limit && last ? sealCursor(cursors, scope, last, totals, filter) : null,
      coverage: read.coverage(account.id, args.date_from, args.date_to, clock.now()),
      totals: {
        count: totals.count,
        total_credit: kopecksToJsonNumber(totals.creditKopecks),
        total_debit: kopecksToJsonNumber(totals.debitKopecks),
      },
    };
  },
};
