// search_operations on SQLite against the queries that cost most: one-character words, many words,
// a word no operation of the account has (so every window is read), on an installation of several
// companies whose statements were stored interleaved; then the totals of the whole period that
// every search_operations answer carries (McpReadModel.searchTotals), per kind of filter.
// In-process, through the store's search slot (db/operation-search.ts) in this thread, as the
// search threads run it (the tool's own argument
// checks run in `searchWords`). Not part of `bun test` or `make bench`.
//
//   bun run bench/sqlite-search-worst.ts     BENCH_ACCOUNTS (8), BENCH_OPS_PER_DAY (700 per account),
//                                            BENCH_DAYS (180), BENCH_RUNS (20),
//                                            BENCH_DB (a database file kept from an earlier run)
import { existsSync } from "node:fs";
import { join } from "node:path";
import { migrate, openDatabase } from "../src/db/open";
import { type OperationFilter, searchWords, type TotalsFilter } from "../src/db/operation-filter";
import { operationTotals, searchOperations } from "../src/db/operation-search";
import { SEARCH_LIMITS, SearchBudgetExceeded } from "../src/db/search-limits";
import { sqlitePort } from "../src/db/sql-port";
import { tempDir } from "../test/helpers/server";

const ACCOUNTS = Number(process.env.BENCH_ACCOUNTS ?? 8);
const OPS_PER_DAY = Number(process.env.BENCH_OPS_PER_DAY ?? 700);
const DAYS = Number(process.env.BENCH_DAYS ?? 180);
const RUNS = Number(process.env.BENCH_RUNS ?? 20);

const path = process.env.BENCH_DB ?? join(tempDir(), "search.db");
const loaded = existsSync(path);
const opened = openDatabase(path);
if (!loaded) migrate(opened.db);
const db = opened.sqlite;

function mulberry32(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const rnd = mulberry32(31);
const pick = <T>(a: readonly T[]) => a[Math.floor(rnd() * a.length)]!;
const VERBS = ["Оплата", "Предоплата", "Возврат", "Перечисление", "Оплата по счёту"];
const OBJECTS = ["аренды офиса", "услуг связи", "поставки товара", "электроэнергии", "ремонта оборудования"];
const NAMES = ["ООО «Ромашка»", "АО «Вектор»", "ИП Иванов И.И.", "ООО «Гранит Плюс»", "ПАО «Меридиан»"];
const day = (n: number) => new Date(Date.UTC(2026, 0, 1 + n)).toISOString().slice(0, 10);
const accounts = Array.from({ length: ACCOUNTS }, (_, i) => `acc-${i}`);

const started = performance.now();
if (!loaded) load();
function load() {
  const insert = db.query(
    `INSERT INTO operations (bank_account_id, operation_id, doc_date, direction, doc_type, doc_number, amount,
     currency, purpose, counterparty_inn, payer_name, payer_inn, payer_kpp, payer_account, payer_bank_name,
     payer_bank_bik, payer_bank_corr_account, payee_name, payee_inn, payee_kpp, payee_account, payee_bank_name,
     payee_bank_bik, payee_bank_corr_account)
   VALUES (?, ?, ?, ?, 'payment_order', ?, ?, 'RUB', ?, ?, ?, ?, '', '40702810900000000001', 'ПАО СБЕРБАНК',
     '044525225', '30101810400000000225', ?, '7700000009', '', '40702810900000000002', 'АО «ТБанк»',
     '044525974', '30101810145250000974')`,
  );
  // Each company's statement of a day is stored in one go, the companies one after another: one
  // account's operations are contiguous within a day and interleaved with the others' across days.
  for (let d = 0; d < DAYS; d++) {
    db.transaction(() => {
      for (const acc of accounts) {
        for (let i = 0; i < OPS_PER_DAY; i++) {
          const n = 1 + Math.floor(rnd() * 99_999);
          const amount = 100 + Math.floor(rnd() * 10_000_000);
          const date = day(d);
          const purpose = `${pick(VERBS)} ${pick(OBJECTS)} по счёту №${n} от ${date.split("-").reverse().join(".")}, сумма ${Math.floor(amount / 100)}-${String(amount % 100).padStart(2, "0")}, в т.ч. НДС 20% ${Math.floor(amount / 600)}-00`;
          const inn = `77${String(Math.floor(rnd() * 1e8)).padStart(8, "0")}`;
          insert.run(
            acc,
            `${acc}-${d}-${i}`,
            date,
            rnd() < 0.5 ? "credit" : "debit",
            String(n),
            amount,
            purpose,
            inn,
            pick(NAMES),
            inn,
            pick(NAMES),
          );
        }
      }
    })();
  }
  const total = ACCOUNTS * OPS_PER_DAY * DAYS;
  console.log(
    `${total} operations (${ACCOUNTS} accounts × ${OPS_PER_DAY}/day × ${DAYS} days) stored in ${((performance.now() - started) / 1000).toFixed(0)} s`,
  );
  db.exec("PRAGMA optimize");
}

const port = sqlitePort(db);
const read = {
  searchOperations: (f: OperationFilter) => searchOperations(port, f, SEARCH_LIMITS),
  searchTotals: (f: TotalsFilter) => operationTotals(port, f, SEARCH_LIMITS),
};
const period = { bankAccountId: accounts[0]!, dateFrom: day(DAYS - 90), dateTo: day(DAYS - 1) };
const QUERIES: [string, string, number][] = [
  ["the issue's: twelve one-character words, limit 1", "1 2 3 4 5 6 7 8 9 0 1 2", 2],
  ["one one-character word and a word, limit 1", "1 аренды", 2],
  ["a common word, limit 50", "оплата", 51],
  ["a word of 10 letters, limit 50", "перечислен", 51],
  ["a word in no operation, limit 50", "сувенир", 51],
];
/** p50 and max of RUNS calls after two warm-up calls, and what the last call answered. */
function measure(name: string, call: () => string): void {
  const times: number[] = [];
  let outcome = "";
  for (let i = 0; i < RUNS + 2; i++) {
    const t0 = performance.now();
    try {
      outcome = call();
    } catch (e) {
      if (!(e instanceof SearchBudgetExceeded)) throw e;
      outcome = "budget exceeded (validation_error)";
    }
    if (i >= 2) times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  const p = (q: number) =>
    times[Math.min(times.length - 1, Math.floor((q / 100) * times.length))]!.toFixed(1);
  console.log(`${name}: p50 ${p(50)} ms, max ${p(100)} ms, ${outcome}`);
}

for (const [name, query, limit] of QUERIES) {
  const words = searchWords(query);
  measure(`${name} («${query}»)`, () =>
    Array.isArray(words)
      ? `${read.searchOperations({ ...period, words, limit }).length} rows`
      : `refused: ${words.refused} (validation_error)`,
  );
}

// The totals of the whole period (every match, not a page), as search_operations adds them.
const someInn = db
  .query<{ inn: string }, [string]>(
    "SELECT counterparty_inn AS inn FROM operations WHERE bank_account_id = ? LIMIT 1",
  )
  .get(period.bankAccountId)!.inn;
const TOTALS: [string, Partial<TotalsFilter> & { query?: string }][] = [
  ["no filter", {}],
  ["direction", { direction: "debit" }],
  ["amount 1k-10k ₽", { amountMinKopecks: 100_000, amountMaxKopecks: 1_000_000 }],
  ["amount from 1 ₽ (nearly all)", { amountMinKopecks: 100 }],
  ["counterparty_inn", { counterpartyInn: someInn }],
  ["a common word", { query: "оплата" }],
  ["two common words", { query: "оплата счёту" }],
  ["a word of 10 letters", { query: "перечислен" }],
  ["a word in no operation", { query: "сувенир" }],
  ["a word and a direction", { query: "оплата", direction: "credit" }],
];
for (const [name, { query, ...filter }] of TOTALS) {
  const words = query === undefined ? undefined : (searchWords(query) as string[]);
  measure(`totals, ${name}${query ? ` («${query}»)` : ""}`, () => {
    const t = read.searchTotals({ ...period, ...filter, words });
    return `count ${t.count}`;
  });
}
opened.close();
