// search_operations on PostgreSQL over 1M operations of one account (two years; 450k of them in the
// last 90 days, the searched period): p50/p99 of sequential calls per query class, first page and
// a page after a cursor in the middle of the period, then the totals of the whole period that
// every answer carries (operationTotals), through the synchronous port the service uses
// (PgSyncClient). Not part of `bun test` or `make bench`.
//
//   bun run bench/pg-search.ts              starts a throwaway server (scripts/pg-test.sh)
//   SVC_TEST_DATABASE_URL=… bun run bench/pg-search.ts   uses that server, in a database of its own
// Knobs: BENCH_RUNS (200 per class), BENCH_TOTALS_RUNS (20 per class), BENCH_KEEP (keep the database and the server; its URL is
// printed), BENCH_LOADED_URL (measure again on a database kept from an earlier run), BENCH_CLASSES
// (a regular expression: only the query classes whose name it matches).
import { loadavg } from "node:os";
import { join } from "node:path";
import postgres from "postgres";
import { searchWords } from "../src/db/operation-filter";
import { operationTotals, type PgOperationFilter, searchOperations } from "../src/db/pg/operations-search";
import { postgresPort } from "../src/db/pg/port";
import { PgSyncClient } from "../src/db/pg/sync-client";
import type { SqlPort } from "../src/db/sql-port";
import { type OwnDatabase, ownDatabase } from "../test/helpers/pg";
import { ROOT, tempDir } from "../test/helpers/server";
import { describeMachine } from "./lib/machine";

const RUNS = Number(process.env.BENCH_RUNS ?? 200);
const TOTALS_RUNS = Number(process.env.BENCH_TOTALS_RUNS ?? 20);
const WARMUP = 10;
const ACCOUNT = "acc-1";
const PERIOD = { dateFrom: "2024-10-02", dateTo: "2024-12-30" };
const MIDDLE = { doc_date: "2024-11-15", operation_id: "8" };
// The page search_operations asks for: 50 and one more to know whether a next page exists.
const LIMIT = 51;
// Counterparty 1 of 3000 (counterparties are skewed): about 8k operations in the period.
const INN = "7700007919";

/** One-character words as svc searched them before it left them out (the tool now refuses these). */
const ONE_CHARACTER_WORDS = ["1", "2", "3", "4", "5", "6", "7", "8", "9", "0", "1", "2"];

// `text`: as the tool takes a query (searchWords); `words`: given to the store as they are.
const CLASSES: [name: string, filter: Partial<PgOperationFilter> & { text?: string }][] = [
  [
    "twelve one-character words, limit 1 (as searched before they were left out)",
    { words: ONE_CHARACTER_WORDS, limit: 2 },
  ],
  ["one-character word + «аренд», limit 1 (as searched before)", { words: ["1", "аренд"], limit: 2 }],
  ["«1 аренд» as the tool takes it now, limit 1", { text: "1 аренд", limit: 2 }],
  ["common word «опл» (~60%)", { text: "опл" }],
  ["two-letter word «по»", { text: "по" }],
  ["two common words «оплата счёт»", { text: "оплата счёт" }],
  ["medium word «аренд» (~5%)", { text: "аренд" }],
  ["rarer word «рекл» (~0.5%)", { text: "рекл" }],
  ["rare word «неусто» (~0.03%)", { text: "неусто" }],
  ["very rare word «юбилей» (~0.002%)", { text: "юбилей" }],
  ["absent word «сувенир» (10% of 2023, none in the period)", { text: "сувенир" }],
  ["word only in the period's last month «декабр» (~35% there)", { text: "декабр" }],
  ["phrase «счёт-фактуре»", { text: "счёт-фактуре" }],
  ["rare pair «аренд ромаш»", { text: "аренд ромаш" }],
  ["INN only", { counterpartyInn: INN }],
  ["INN + «опл»", { counterpartyInn: INN, text: "опл" }],
  ["INN + «рекл»", { counterpartyInn: INN, text: "рекл" }],
  ["amount 10k-50k ₽ only", { amountMinKopecks: 1_000_000, amountMaxKopecks: 5_000_000 }],
  ["amount 100-500 ₽ + «рекл»", { amountMinKopecks: 10_000, amountMaxKopecks: 50_000, text: "рекл" }],
  // The generator gives «рекл» only to amounts under 1000 ₽: every day of the period is read.
  [
    "amount 10k-50k ₽ + «рекл» (none has both)",
    { amountMinKopecks: 1_000_000, amountMaxKopecks: 5_000_000, text: "рекл" },
  ],
  ["debit + «аренд»", { direction: "debit", text: "аренд" }],
  ["amount from 1k ₽ + «аренд»", { amountMinKopecks: 100_000, text: "аренд" }],
];

// The spike's generator (docs/performance.md, "Search on PostgreSQL"): 3000 counterparties with a
// skewed share, purposes from a verb, one of 20 objects, rarer words at known rates, and VAT text.
const GENERATE = `
CREATE TEMP TABLE cp AS
SELECT k,
  (ARRAY['ООО','ООО','ООО','АО','ПАО','ИП'])[1 + k % 6] || ' «' ||
  (ARRAY['Ромашка','Лютик','Василёк','Вектор','Альфа','Гранит','Стройсервис','Техноснаб','Северный ветер','Ёлочка',
         'Орион','Меридиан','Спутник','Берёзка','Прогресс','Сфера','Капитал','Логистик','Импульс','Феникс',
         'Восток','Квант','Электрон','Мегаполис','Энергия','Агрокомплекс','Пищекомбинат','Теремок','Сибирь','Урал',
         'Волга','Дельта','Омега','Гамма','Лидер','Надёжность','Созвездие','Полюс','Атлант','Стандарт'])[1 + (k / 6) % 40]
  || (ARRAY['','',' Плюс',' Трейд',' Групп',' Сервис',' Холдинг',' Юг',' Север',' М',' Строй',' Снаб'])[1 + (k / 240) % 12]
  || '»' AS name,
  lpad(((7700000000 + k * 7919) % 10000000000)::text, 10, '0') AS inn
FROM generate_series(0, 2999) k;
CREATE TEMP TABLE r AS
SELECT i,
  (date '2023-01-01' + CASE WHEN i <= 550000 THEN ((i - 1) * 640 / 550000) ELSE 640 + ((i - 550001) * 90 / 450000) END)::date AS d,
  floor(3000 * random() ^ 3)::int AS c, random() AS r1, random() AS r2, random() AS r3, random() AS r4, random() AS r5
FROM generate_series(1, 1000000) i;
INSERT INTO operations (bank_account_id, operation_id, doc_date, direction, doc_type, doc_number, amount, currency,
  purpose, counterparty_inn, payer_name, payer_inn, payer_kpp, payer_account, payer_bank_name, payer_bank_bik,
  payer_bank_corr_account, payee_name, payee_inn, payee_kpp, payee_account, payee_bank_name, payee_bank_bik,
  payee_bank_corr_account)
SELECT '${ACCOUNT}', md5(i::text), to_char(d, 'YYYY-MM-DD'), dir, 'payment_order', (1 + floor(r4 * 99999))::text, amt, 'RUB',
  replace(replace(replace(replace(
  (CASE WHEN r1 < 0.55 THEN 'Оплата' WHEN r1 < 0.60 THEN 'Предоплата' WHEN r1 < 0.63 THEN 'Доплата'
        WHEN r1 < 0.67 THEN 'Возврат' WHEN r1 < 0.72 THEN 'Перечисление' WHEN r1 < 0.80 THEN 'Поступление'
        WHEN r1 < 0.85 THEN 'Зачисление' WHEN r1 < 0.88 THEN 'Погашение' WHEN r1 < 0.92 THEN 'Списание'
        WHEN r1 < 0.95 THEN 'Выплата' ELSE 'Оплачено' END)
  || (ARRAY[' по счёту №%n от %d',' по счету №%n от %d',' по счёт-фактуре №%n от %d',' по договору №%n/%y от %d',
            ' за поставку товара по счёту №%n',' за услуги связи за %m',' аренды помещения за %m',' заработной платы за %m',
            ' по акту сверки от %d',' за транспортные услуги по договору №%n',' за оказанные услуги по счету №%n',
            ' по договору поставки №%n от %d',' за электроэнергию за %m',' лизинговых платежей по договору №%n',
            ' по кредитному договору №%n',' комиссии банка за %m',' НДФЛ за %m',' страховых взносов за %m',
            ' за материалы по накладной №%n',' за ремонт оборудования по счёту №%n'])[1 + floor(r2 * 20)::int]
  || CASE WHEN i <= 300000 AND r5 > 0.9 THEN ' сувенирной продукции' WHEN r5 < 0.00002 THEN ' юбилейного вечера'
          WHEN r5 < 0.0003 THEN ' неустойки по претензии' WHEN r5 < 0.0053 THEN ' рекламных материалов' ELSE '' END
  || CASE WHEN r3 < 0.70 THEN '. В т.ч. НДС 20% - ' || to_char(amt / 600.0, 'FM999999990.00') || ' руб.'
          WHEN r3 < 0.90 THEN '. НДС не облагается' ELSE '. Без НДС' END,
  '%n', (1 + floor(r4 * 9999))::text), '%d', to_char(d - floor(r2 * 30)::int, 'DD.MM.YYYY')),
  '%y', to_char(d, 'YY')),
  '%m', (ARRAY['январь','февраль','март','апрель','май','июнь','июль','август','сентябрь','октябрь','ноябрь','декабрь'])[extract(month FROM d)::int] || ' ' || extract(year FROM d)),
  cp.inn,
  CASE WHEN dir = 'credit' THEN cp.name ELSE 'ООО «Светлёнок»' END, CASE WHEN dir = 'credit' THEN cp.inn ELSE '7701234567' END, '',
  '40702810' || lpad((c * 104729 % 1000000000000)::text, 12, '0'), 'ПАО СБЕРБАНК', '044525225', '30101810400000000225',
  CASE WHEN dir = 'credit' THEN 'ООО «Светлёнок»' ELSE cp.name END, CASE WHEN dir = 'credit' THEN '7701234567' ELSE cp.inn END, '',
  '40702810900000012345', 'АО «ТБанк» г. Москва', '044525974', '30101810145250000974'
FROM (SELECT r.*, CASE WHEN r3 * 7 - floor(r3 * 7) < 0.45 THEN 'credit' ELSE 'debit' END AS dir,
             (100 * exp(r4 * 9.2 * (0.5 + r5)))::bigint * 10 AS amt FROM r) r
JOIN cp ON cp.k = r.c
ORDER BY i`;

const pct = (sorted: number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;

let serverDir: string | null = null;
let url = process.env.SVC_TEST_DATABASE_URL;
if (!url) {
  serverDir = tempDir();
  const started = Bun.spawnSync(["bash", join(ROOT, "scripts/pg-test.sh"), "start", serverDir], {
    stderr: "inherit",
  });
  if (started.exitCode !== 0) throw new Error("pg-test.sh start failed");
  url = (await Bun.file(join(serverDir, "url")).text()).trim();
}
const loaded = process.env.BENCH_LOADED_URL;
const db = loaded ? null : await ownDatabase(url, "svc_bench_search", 1);
const sql = db?.sql ?? postgres(loaded!, { max: 1, onnotice: () => {} });
const [name] = await sql<{ db: string }[]>`SELECT current_database() AS db`;
const dbUrl = loaded ?? url.replace(/\/[^/]*$/, `/${name!.db}`);
// Searched as the service searches: through the synchronous port, on a connection of its own.
const client = new PgSyncClient(dbUrl, { timeoutMs: 60_000 });
try {
  console.log(JSON.stringify(describeMachine()));
  if (db) await load(db);
  measure(postgresPort(client));
  measureTotals(postgresPort(client));
} finally {
  client.close();
  if (!process.env.BENCH_KEEP) {
    await (db ? db.drop() : sql.end());
    if (serverDir) Bun.spawnSync(["bash", join(ROOT, "scripts/pg-test.sh"), "stop", serverDir]);
  } else if (db) {
    console.log(`kept: BENCH_LOADED_URL=${dbUrl}`);
    await db.keep();
  }
}

async function load(db: OwnDatabase): Promise<void> {
  let t = performance.now();
  await db.migrate();
  // A GIN index is built far faster at once than row by row: the same definition, made after the load.
  const [gin] = await db.sql<{ indexdef: string }[]>`
    SELECT indexdef FROM pg_indexes WHERE indexname = 'operations_search_account_days_idx'`;
  await db.sql`DROP INDEX operations_search_account_days_idx`;
  await db.sql.begin(async (tx) => {
    await tx`SELECT setseed(0.42)`;
    await tx.unsafe(GENERATE);
  });
  console.log(`loaded 1M operations in ${((performance.now() - t) / 1000).toFixed(0)} s`);
  t = performance.now();
  await db.sql`SET maintenance_work_mem = '512MB'`;
  await db.sql.unsafe(gin!.indexdef);
  await db.sql`VACUUM ANALYZE operations`;
  const [size] = await db.sql<{ table: string; gin: string }[]>`
    SELECT pg_size_pretty(pg_table_size('operations')) AS table,
           pg_size_pretty(pg_relation_size('operations_search_account_days_idx')) AS gin`;
  console.log(
    `GIN index and ANALYZE in ${((performance.now() - t) / 1000).toFixed(0)} s; table ${size!.table}, GIN ${size!.gin}`,
  );
}

function measure(port: SqlPort): void {
  console.log(`load average ${loadavg()[0]!.toFixed(2)}; ${RUNS} runs per row after ${WARMUP} warm-up calls`);
  console.log("| query class | page | rows | p50 ms | p99 ms | max ms |");
  console.log("|---|---|---|---|---|---|");
  const only = process.env.BENCH_CLASSES ? new RegExp(process.env.BENCH_CLASSES) : null;
  for (const [name, { text, ...rest }] of CLASSES) {
    if (only && !only.test(name)) continue;
    for (const page of ["first", "later"] as const) {
      const f: PgOperationFilter = {
        bankAccountId: ACCOUNT,
        ...PERIOD,
        limit: LIMIT,
        ...rest,
        words: text === undefined ? rest.words : (searchWords(text) as string[]),
        after: page === "later" ? MIDDLE : undefined,
      };
      // Without a budget: what the search itself costs (the service stops it at its budget).
      const search = () => searchOperations(port, f, undefined, 600_000);
      let rows = 0;
      for (let i = 0; i < WARMUP; i++) rows = search().length;
      const times: number[] = [];
      for (let i = 0; i < RUNS; i++) {
        const start = performance.now();
        search();
        times.push(performance.now() - start);
      }
      times.sort((a, b) => a - b);
      console.log(
        `| ${name} | ${page} | ${rows} | ${pct(times, 0.5).toFixed(2)} | ${pct(times, 0.99).toFixed(2)} | ${times[times.length - 1]!.toFixed(2)} |`,
      );
    }
  }
}

/** The totals of the whole period per query class (the same on every page), without the budget. */
function measureTotals(port: SqlPort): void {
  console.log(`totals: ${TOTALS_RUNS} runs per row after 2 warm-up calls`);
  console.log("| query class | count | p50 ms | p99 ms | max ms |");
  console.log("|---|---|---|---|---|");
  const only = process.env.BENCH_CLASSES ? new RegExp(process.env.BENCH_CLASSES) : null;
  const classes: typeof CLASSES = [["no filter", {}], ["debit only", { direction: "debit" }], ...CLASSES];
  for (const [name, { text, limit: _, ...rest }] of classes) {
    // Words given to the store as they are: the tool refuses these queries.
    if ((only && !only.test(name)) || rest.words !== undefined) continue;
    const words = text === undefined ? rest.words : (searchWords(text) as string[]);
    const totals = () =>
      operationTotals(port, { bankAccountId: ACCOUNT, ...PERIOD, ...rest, words }, 600_000);
    let count = 0;
    for (let i = 0; i < 2; i++) count = totals().count;
    const times: number[] = [];
    for (let i = 0; i < TOTALS_RUNS; i++) {
      const start = performance.now();
      totals();
      times.push(performance.now() - start);
    }
    times.sort((a, b) => a - b);
    console.log(
      `| ${name} | ${count} | ${pct(times, 0.5).toFixed(1)} | ${pct(times, 0.99).toFixed(1)} | ${times[times.length - 1]!.toFixed(1)} |`,
    );
  }
}
