// An account's stored operations, browsed with the filters of the agent tool search_operations
// (period, amount range, INN, text, direction): the same checks (searchFilterOf) and the same read
// model and search (the store's, in its search threads); totals of the whole match, pages, and the
// match as CSV (the exports' CSV writer).
import { dateInZone } from "../../../core/clock";
import { ApiError, validationError } from "../../../core/errors";
import { isUuid } from "../../../core/ids";
import type { OperationFilter, TotalsFilter } from "../../../db/operation-filter";
import { SearchBudgetExceeded } from "../../../db/search-limits";
import { csvHeader, csvLine } from "../../../formats/csv";
import { searchFilterOf } from "../../../mcp/tools/search-operations";
import type { BankAccountView } from "../../model";
import { formatDate, parseRuAmount, parseRuDate } from "../format";
import { type Outcome, PAGE_SIZE, type PageKit, page, redirect } from "../kit";
import { get, type PageRoute, pageDoc } from "../page-route";
import type { AdminSession } from "../session";
import { type OperationFilters, OperationsPage } from "./view";

const DAY_MS = 86_400_000;
/** The period the page opens with: the last 30 days, today included. */
const DEFAULT_DAYS = 30;
/** Operations read at a time for the download. */
const CSV_PAGE = 500;

/** The form's fields, as typed (the address carries them). */
const FIELDS = [
  "date_from",
  "date_to",
  "amount_min",
  "amount_max",
  "counterparty_inn",
  "query",
  "direction",
] as const;

/** The form's fields as its labels name them. */
const LABELS: Record<string, string> = {
  date_from: "Дата «с»",
  date_to: "Дата «по»",
  amount_min: "Сумма «от»",
  amount_max: "Сумма «до»",
};
/** The search's own checks that can still refuse (the period's length, the words), by their field. */
const SEARCH_LABELS: Record<string, string> = { date_to: "Период", query: "Текст" };

/** The filters typed in the form (defaults filled in), and the search filter they make. */
function filtersOf(
  query: Record<string, string | undefined>,
  accountId: string,
  today: string,
): { typed: OperationFilters; filter: TotalsFilter } {
  const typed: OperationFilters = {};
  for (const name of FIELDS) {
    const value = query[name]?.trim();
    if (value) typed[name] = value;
  }
  typed.date_to ??= formatDate(today);
  typed.date_from ??= formatDate(
    new Date(Date.parse(`${today}T00:00:00Z`) - (DEFAULT_DAYS - 1) * DAY_MS).toISOString().slice(0, 10),
  );
  const date = (name: "date_from" | "date_to") => {
    const iso = parseRuDate(typed[name] ?? "");
    if (iso === null) throw validationError(name, `${LABELS[name]}: дата в виде дд.мм.гггг`);
    return iso;
  };
  const amount = (name: "amount_min" | "amount_max") => {
    const text = typed[name];
    if (text === undefined) return undefined;
    const k = parseRuAmount(text);
    if (k === null) throw validationError(name, `${LABELS[name]}: сумма в рублях, например 12 500,00`);
    return k;
  };
  const dateFrom = date("date_from");
  const dateTo = date("date_to");
  if (dateFrom > dateTo) throw validationError("date_from", "Дата «с» позже даты «по»");
  const amountMin = amount("amount_min");
  const amountMax = amount("amount_max");
  if (amountMin !== undefined && amountMax !== undefined && amountMin > amountMax)
    throw validationError("amount_min", "Сумма «от» больше суммы «до»");
  const inn = typed.counterparty_inn;
  if (inn !== undefined && !/^(\d{10}|\d{12})$/.test(inn))
    throw validationError("counterparty_inn", "ИНН контрагента: 10 или 12 цифр");
  const direction = typed.direction;
  if (direction !== undefined && direction !== "credit" && direction !== "debit")
    throw validationError("direction", "Направление: поступления или списания");
  try {
    const filter = searchFilterOf({
      bank_account_id: accountId,
      date_from: dateFrom,
      date_to: dateTo,
      amountMinKopecks: amountMin,
      amountMaxKopecks: amountMax,
      counterparty_inn: inn,
      query: typed.query,
      direction,
    });
    return { typed, filter };
  } catch (error) {
    // The tool's messages name its fields; the page's name its labels.
    if (!(error instanceof ApiError)) throw error;
    const field = String(error.details?.field ?? "");
    const label = SEARCH_LABELS[field] ?? "Условие";
    throw validationError(field, `${label}: ${error.message.replace(/^[a-z_]+: /u, "")}`);
  }
}

/** A page's cursor: where the previous page ended (admin pages carry it unsigned; it only pages). */
function cursorOf(text: string | undefined): OperationFilter["after"] {
  if (!text) return undefined;
  const [docDate, operationId] = Buffer.from(text, "base64url").toString().split("\n");
  if (!docDate || !operationId || !/^\d{4}-\d{2}-\d{2}$/.test(docDate))
    throw validationError("cursor", "Неверная ссылка на страницу: откройте поиск заново");
  return { doc_date: docDate, operation_id: operationId };
}

const cursorAfter = (op: { doc_date: string; operation_id: string }) =>
  Buffer.from(`${op.doc_date}\n${op.operation_id}`).toString("base64url");

const TOO_WIDE = "Поиск слишком широк: сократите период, добавьте ИНН, направление или сумму, уточните текст";

export function operationRoutes(kit: PageKit): PageRoute[] {
  const { accounts } = kit.deps.admin;
  const { read, clock, timezone } = kit.deps;
  const { signedInFrame, view, sessionOf, send, run } = kit;

  const accountOf = (id: string | undefined): BankAccountView => {
    if (!isUuid(id ?? "")) throw new ApiError("not_found", "Счёт не найден");
    return accounts.view(id!);
  };

  async function operationsPage(
    session: AdminSession,
    account: BankAccountView,
    query: Record<string, string | undefined>,
  ): Promise<Outcome> {
    const frame = signedInFrame(session, `Операции счёта ${account.alias}`, "accounts");
    const today = dateInZone(clock.now(), timezone);
    let typed: OperationFilters = {};
    try {
      const asked = filtersOf(query, account.bank_account_id, today);
      typed = asked.typed;
      const after = cursorOf(query.cursor);
      const [rows, totals] = await Promise.all([
        read.searchOperations({ ...asked.filter, after, limit: PAGE_SIZE + 1 }),
        read.searchTotals(asked.filter),
      ]);
      const operations = rows.slice(0, PAGE_SIZE);
      const last = operations[operations.length - 1];
      return page(
        <OperationsPage
          frame={frame}
          account={account}
          filters={typed}
          cursor={query.cursor}
          result={{
            operations,
            totals,
            nextCursor: rows.length > PAGE_SIZE && last ? cursorAfter(last) : null,
            coverage: read.coverage(
              account.bank_account_id,
              asked.filter.dateFrom,
              asked.filter.dateTo,
              clock.now(),
            ),
          }}
          error={null}
        />,
      );
    } catch (error) {
      const message =
        error instanceof SearchBudgetExceeded
          ? TOO_WIDE
          : error instanceof ApiError && error.status === 400
            ? error.message
            : null;
      if (message === null) throw error;
      for (const name of FIELDS) if (query[name]) typed[name] = query[name]!.trim();
      return page(
        <OperationsPage
          frame={frame}
          account={account}
          filters={typed}
          cursor={undefined}
          result={null}
          error={message}
        />,
        400,
      );
    }
  }

  /** Every operation of the match, in order, read a page at a time while the download goes. */
  function csvOf(filter: TotalsFilter): ReadableStream<Uint8Array> {
    const utf8 = new TextEncoder();
    let after: OperationFilter["after"];
    let started = false;
    let done = false;
    return new ReadableStream<Uint8Array>({
      async pull(controller) {
        if (!started) {
          started = true;
          // The byte order mark: spreadsheets read the file as UTF-8.
          controller.enqueue(utf8.encode(`\uFEFF${csvHeader()}`));
          return;
        }
        if (done) return controller.close();
        const rows = await read.searchOperations({ ...filter, after, limit: CSV_PAGE });
        if (rows.length < CSV_PAGE) done = true;
        const last = rows[rows.length - 1];
        if (last) after = { doc_date: last.doc_date, operation_id: last.operation_id };
        controller.enqueue(utf8.encode(rows.map(csvLine).join("")));
      },
    });
  }

  return [
    get(
      "/admin/accounts/:id/operations",
      view((session, ctx) => operationsPage(session, accountOf(ctx.params.id), ctx.query)),
      { detail: pageDoc("Admin pages: an account's operations with search_operations' filters") },
    ),
    get(
      "/admin/accounts/:id/operations/csv",
      async (ctx) => {
        const session = sessionOf(ctx);
        if (!session) return send(ctx, redirect("/admin/login"));
        try {
          const account = accountOf(ctx.params.id);
          const today = dateInZone(clock.now(), timezone);
          const { filter } = filtersOf(ctx.query, account.bank_account_id, today);
          // The first rows now: a search too wide is refused before the download starts.
          await read.searchOperations({ ...filter, limit: 1 });
          const name = `operations_${account.alias}_${filter.dateFrom}_${filter.dateTo}.csv`;
          return new Response(csvOf(filter), {
            headers: {
              "content-type": "text/csv; charset=utf-8",
              "content-disposition": `attachment; filename="${name.replace(/[^\w.-]/g, "_")}"`,
              "cache-control": "no-store",
            },
          });
        } catch (error) {
          const refusal = error instanceof SearchBudgetExceeded ? validationError("query", TOO_WIDE) : error;
          return run(ctx, session, () => {
            throw refusal;
          });
        }
      },
      { detail: pageDoc("Admin pages: the operations a search finds, as CSV") },
    ),
  ];
}
