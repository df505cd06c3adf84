// lanes: postgres
// search_operations on PostgreSQL (src/db/pg/operations-search.ts, through the synchronous port the
// service reads with) against the SQLite read model and a plain filter written here: the same
// operations in both stores, the same queries, the same pages, with the module's plan sizes and
// with tiny ones that send nearly every text query through the day-keyed GIN index, capped spans
// and restarts.
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { cpSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { drizzle } from "drizzle-orm/postgres-js";
import { migrate as migrateFolder } from "drizzle-orm/postgres-js/migrator";
import fc from "fast-check";
import type postgres from "postgres";
import { migrate, type OpenedDatabase, openDatabase } from "../../src/db/open";
import { searchWords } from "../../src/db/operation-filter";
import type { OperationTotals } from "../../src/db/operation-rows";
import {
  operationTotals,
  type PgOperationFilter,
  type SearchTuning,
  searchOperations,
} from "../../src/db/pg/operations-search";
import { postgresPort } from "../../src/db/pg/port";
import { PgSyncClient } from "../../src/db/pg/sync-client";
import { SEARCH_LIMITS, SearchBudgetExceeded } from "../../src/db/search-limits";
import { type SqlArray, type SqlPort, type SqlValue, sqlitePort } from "../../src/db/sql-port";
import {
  searchOperations as sqliteSearch,
  operationTotals as sqliteTotals,
} from "../../src/db/sqlite/operations-search";
import type { StatementOperation } from "../../src/formats/types";
import { connect, freshDatabase, migratedDatabase, PG_MIGRATIONS } from "../helpers/pg";
import { tempDir } from "../helpers/server";

const ACCOUNTS = ["acc-a", "acc-b"];
const INNS = ["7700000001", "7700000002", "500100732259", "7707083893"];
const WORDS = [
  "Оплата",
  "оплачено",
  "Предоплата",
  "счёт",
  "счет",
  "СЧЁТ-фактура",
  "договор",
  "договору",
  "Ёлка",
  "ёлочка",
  "елка",
  "НДС",
  "ндфл",
  "Ромашка",
  "Лютик",
  "Café",
  "CAFE",
  "Müller",
  "Straße",
  "ÆON",
  "йогурт",
  "Йошкар-Ола",
  "зарплата",
  "аренда",
  "т.ч.",
  "12",
  "2024",
  "10.10.2024",
  "№15/2",
  "A-12",
  "x",
  "я",
  "Éclair",
  "œuvre",
  "Ñandú",
  "ПАО",
  "ООО",
];
const SEPARATORS = [" ", " ", " ", ", ", ". ", " - ", "/", " №", " «", "» ", "—", " (", ") ", "\t", "\u00a0"];
// doc_number is indexed by SQLite without the ё → е folding (migration 0008), so no ё there.
const DOC_NUMBERS = ["15", "A-12", "2024-7", "Б-3", "№77", "12/24", "x9"];
const COLUMNS = ["purpose", "payer_name", "payee_name", "doc_number"] as const;

const clients: PgSyncClient[] = [];
afterAll(() => {
  for (const c of clients.splice(0)) c.close();
});

/** The service's way to the database at `url`: the synchronous port, on a client of its own. */
function syncPort(url: string): SqlPort {
  const client = new PgSyncClient(url, { timeoutMs: 10_000 });
  clients.push(client);
  return postgresPort(client);
}

interface Row {
  bank_account_id: string;
  operation_id: string;
  doc_date: string;
  direction: "credit" | "debit";
  doc_type: "payment_order";
  doc_number: string;
  amount: number;
  currency: string;
  purpose: string;
  counterparty_inn: string;
  payer_name: string;
  payer_inn: string;
  payer_kpp: string;
  payer_account: string;
  payer_bank_name: string;
  payer_bank_bik: string;
  payer_bank_corr_account: string;
  payee_name: string;
  payee_inn: string;
  payee_kpp: string;
  payee_account: string;
  payee_bank_name: string;
  payee_bank_bik: string;
  payee_bank_corr_account: string;
}

function row(r: Pick<Row, "bank_account_id" | "operation_id" | "doc_date" | "purpose"> & Partial<Row>): Row {
  return {
    direction: "credit",
    doc_type: "payment_order",
    doc_number: "1",
    amount: 100,
    currency: "RUB",
    counterparty_inn: INNS[0]!,
    payer_name: "ООО «Плательщик»",
    payer_inn: INNS[0]!,
    payer_kpp: "",
    payer_account: "40702810900000000001",
    payer_bank_name: "ПАО СБЕРБАНК",
    payer_bank_bik: "044525225",
    payer_bank_corr_account: "30101810400000000225",
    payee_name: "ООО «Получатель»",
    payee_inn: "7700000009",
    payee_kpp: "",
    payee_account: "40702810900000000002",
    payee_bank_name: "АО «ТБанк»",
    payee_bank_bik: "044525974",
    payee_bank_corr_account: "30101810145250000974",
    ...r,
  };
}

/** Random text from the vocabulary: Cyrillic, Latin with diacritics, ё, digits, punctuation. */
function text(rnd: () => number, words: number): string {
  const pick = <T>(a: readonly T[]) => a[Math.floor(rnd() * a.length)]!;
  let out = "";
  for (let i = 0; i < words; i++) {
    let w = pick(WORDS);
    const c = rnd();
    if (c < 0.15) w = w.toUpperCase();
    else if (c < 0.3) w = w.toLowerCase();
    out += (i === 0 ? "" : pick(SEPARATORS)) + w;
  }
  return out;
}

function mulberry32(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const day = (n: number) => new Date(Date.UTC(2024, 0, 1 + n)).toISOString().slice(0, 10);

/** 1200 operations over 60 days of two accounts; day 20 is busy (300 of them). */
function randomRows(): Row[] {
  const rnd = mulberry32(20241002);
  const rows: Row[] = [];
  for (let i = 0; i < 1200; i++) {
    const d = i < 300 ? 20 : Math.floor(rnd() * 60);
    rows.push(
      row({
        bank_account_id: rnd() < 0.8 ? ACCOUNTS[0]! : ACCOUNTS[1]!,
        // Not in date order: ties on doc_date are broken by operation_id.
        operation_id: `op-${Math.floor(rnd() * 1e9).toString(36)}-${i}`,
        doc_date: day(d),
        direction: rnd() < 0.5 ? "credit" : "debit",
        amount: Math.floor(rnd() * 1_000_000),
        counterparty_inn: INNS[Math.floor(rnd() * INNS.length)]!,
        purpose: text(rnd, 1 + Math.floor(rnd() * 8)),
        payer_name: text(rnd, 1 + Math.floor(rnd() * 3)),
        payee_name: text(rnd, 1 + Math.floor(rnd() * 3)),
        doc_number: DOC_NUMBERS[Math.floor(rnd() * DOC_NUMBERS.length)]!,
      }),
    );
  }
  return rows;
}

// ---- the plain filter: what FTS5 (unicode61 remove_diacritics 2, ё read as е) finds ----

/** Folded tokens: lower case, Latin diacritics removed (not Cyrillic: й stays й), ё as е. */
function tokens(s: string): string[] {
  const folded = [...s]
    .map((ch) => (ch.codePointAt(0)! < 0x250 ? ch.normalize("NFD").replace(/\p{M}/gu, "") : ch))
    .join("")
    .toLowerCase()
    .replaceAll("ё", "е");
  return folded.split(/[^\p{L}\p{N}]+/u).filter((t) => t !== "");
}

/** A query word: its tokens as a phrase in one column, the last one a prefix. */
function wordMatches(r: Row, word: string): boolean {
  const parts = tokens(word);
  return COLUMNS.some((c) => {
    const t = tokens(c === "doc_number" ? r[c] : r[c].replaceAll("ё", "е").replaceAll("Ё", "Е"));
    for (let i = 0; i + parts.length <= t.length; i++) {
      if (parts.every((p, k) => (k === parts.length - 1 ? t[i + k]!.startsWith(p) : t[i + k] === p)))
        return true;
    }
    return false;
  });
}

function plainFilter(rows: Row[], f: PgOperationFilter): string[] {
  return rows
    .filter(
      (r) =>
        r.bank_account_id === f.bankAccountId &&
        r.doc_date >= f.dateFrom &&
        r.doc_date <= f.dateTo &&
        (f.amountMinKopecks === undefined || r.amount >= f.amountMinKopecks) &&
        (f.amountMaxKopecks === undefined || r.amount <= f.amountMaxKopecks) &&
        (f.counterpartyInn === undefined || r.counterparty_inn === f.counterpartyInn) &&
        (f.direction === undefined || r.direction === f.direction) &&
        (f.after === undefined ||
          r.doc_date > f.after.doc_date ||
          (r.doc_date === f.after.doc_date && r.operation_id > f.after.operation_id)) &&
        (f.words === undefined || f.words.every((w) => wordMatches(r, w))),
    )
    .map((r) => [r.doc_date, r.operation_id] as const)
    .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0))
    .map(([, id]) => id);
}

/** The count and sums of the rows the plain filter finds over the whole period (no page, no key). */
function plainTotals(rows: Row[], f: PgOperationFilter): OperationTotals {
  const ids = new Set(plainFilter(rows, { ...f, after: undefined }));
  const found = rows.filter((r) => r.bank_account_id === f.bankAccountId && ids.has(r.operation_id));
  const sum = (direction: Row["direction"]) =>
    found.filter((r) => r.direction === direction).reduce((s, r) => s + r.amount, 0);
  return { count: found.length, creditKopecks: sum("credit"), debitKopecks: sum("debit") };
}

/** The words the tool searches for in `text`; undefined when it would refuse the query. */
function searched(text: string): string[] | undefined {
  const words = searchWords(text);
  return Array.isArray(words) ? words : undefined;
}

// ---- both stores ----

/** The same searches on SQLite, in this thread: what PostgreSQL's must equal. */
class SqliteSearch {
  constructor(private readonly port: SqlPort) {}
  searchOperations(f: PgOperationFilter): StatementOperation[] {
    return sqliteSearch(this.port, f, SEARCH_LIMITS);
  }
  searchTotals(f: Omit<PgOperationFilter, "after" | "limit">): OperationTotals {
    return sqliteTotals(this.port, f, SEARCH_LIMITS);
  }
}

class Stores {
  /** The plans' sizes; undefined: the module's own. */
  tuning: SearchTuning | undefined;

  constructor(
    /** postgres.js on the PostgreSQL database, to load it. */
    readonly load: postgres.Sql,
    /** The same database as searchOperations reads it. */
    readonly pg: SqlPort,
    readonly sqlite: OpenedDatabase,
    readonly read: SqliteSearch,
  ) {}

  static async open(): Promise<Stores> {
    const url = await migratedDatabase();
    const sqlite = openDatabase(":memory:");
    migrate(sqlite.db);
    return new Stores(connect(url), syncPort(url), sqlite, new SqliteSearch(sqlitePort(sqlite.sqlite)));
  }

  async insert(rows: Row[]): Promise<void> {
    const keys = Object.keys(rows[0]!) as (keyof Row)[];
    const insert = this.sqlite.sqlite.query(
      `INSERT INTO operations (${keys.join(", ")}) VALUES (${keys.map(() => "?").join(", ")})`,
    );
    this.sqlite.sqlite.transaction(() => {
      for (const r of rows) insert.run(...keys.map((k) => r[k]));
    })();
    for (let i = 0; i < rows.length; i += 500) {
      await this.load`INSERT INTO operations ${this.load(rows.slice(i, i + 500))}`;
    }
  }

  /** One page from each store; they must be equal, operation by operation. */
  page(f: PgOperationFilter): StatementOperation[] {
    const fromPg = searchOperations(this.pg, f, this.tuning);
    const fromSqlite = this.read.searchOperations(f);
    expect(fromPg).toEqual(fromSqlite);
    return fromPg;
  }

  /** The totals of the filter's whole period from each store; they must be equal. */
  totals(f: PgOperationFilter): OperationTotals {
    const { after: _, limit: __, ...whole } = f;
    const fromPg = operationTotals(this.pg, whole);
    expect(fromPg).toEqual(this.read.searchTotals(whole));
    return fromPg;
  }

  /** Up to `pages` pages through the cursor, then the rest in one: the ids in order. */
  pages(f: PgOperationFilter, pages = 6): string[] {
    const ids: string[] = [];
    let after = f.after;
    for (let n = 0; ; n++) {
      const limit = n < pages ? f.limit : 10_000;
      const page = this.page({ ...f, after, limit });
      ids.push(...page.map((o) => o.operation_id));
      if (page.length < limit) return ids;
      const last = page[page.length - 1]!;
      after = { doc_date: last.doc_date, operation_id: last.operation_id };
    }
  }

  close(): void {
    this.sqlite.close();
  }
}

/** Both stores holding `rows` for the tests of a describe block (the database goes at the file's end). */
function storesWith(rows: Row[]): Stores {
  const stores = {} as { it: Stores };
  beforeAll(async () => {
    stores.it = await Stores.open();
    await stores.it.insert(rows);
  });
  afterAll(() => {
    stores.it?.close();
  });
  // The stores exist only once beforeAll has run; the tests hold this stand-in from the start.
  return new Proxy({} as Stores, {
    get: (_, key) => Reflect.get(stores.it, key, stores.it),
    set: (_, key, value) => Reflect.set(stores.it, key, value),
  });
}

describe("search on PostgreSQL = the SQLite read model = a plain filter", () => {
  const rows = randomRows();

  const stores = storesWith(rows);

  // A query word: a prefix of a stored token (case and ё changed at random), two neighbouring
  // tokens joined by punctuation (a phrase), or a word stored nowhere.
  const word = fc
    .record({
      row: fc.nat(rows.length - 1),
      column: fc.constantFrom(...COLUMNS),
      at: fc.nat(20),
      cut: fc.nat(12),
      kind: fc.constantFrom("prefix", "prefix", "prefix", "phrase", "absent"),
      joiner: fc.constantFrom("-", ".", "/", "«"),
      upper: fc.boolean(),
      yo: fc.boolean(),
    })
    .map(({ row: i, column, at, cut, kind, joiner, upper, yo }) => {
      if (kind === "absent") return upper ? "ЗЕБРА" : "qqq";
      const t = tokens(rows[i]![column]);
      if (t.length === 0) return "я";
      const k = at % t.length;
      let w = kind === "phrase" && k + 1 < t.length ? `${t[k]}${joiner}${t[k + 1]}` : t[k]!;
      w = w.slice(0, Math.max(1, w.length - (cut % w.length)));
      if (yo) w = w.replaceAll("е", "ё");
      return upper ? w.toUpperCase() : w;
    });
  const filter = fc
    .record({
      account: fc.constantFrom(...ACCOUNTS),
      from: fc.nat(59),
      days: fc.nat(59),
      words: fc.option(fc.array(word, { minLength: 1, maxLength: 3 }), { nil: undefined }),
      inn: fc.option(fc.constantFrom(...INNS), { nil: undefined, freq: 3 }),
      amount: fc.option(fc.tuple(fc.nat(1_000_000), fc.nat(1_000_000)), { nil: undefined, freq: 3 }),
      direction: fc.option(fc.constantFrom("credit" as const, "debit" as const), { nil: undefined, freq: 3 }),
      limit: fc.constantFrom(1, 2, 3, 5, 50),
    })
    .map(
      (q): PgOperationFilter => ({
        bankAccountId: q.account,
        dateFrom: day(q.from),
        dateTo: day(Math.min(59, q.from + q.days)),
        words: q.words && searched(q.words.join(" ")),
        counterpartyInn: q.inn,
        amountMinKopecks: q.amount && Math.min(...q.amount),
        amountMaxKopecks: q.amount && Math.max(...q.amount),
        direction: q.direction,
        limit: q.limit,
      }),
    );

  // The module's sizes leave the 1200 rows mostly to the ordered window and uncapped spans; tiny
  // ones send nearly every query through the index and through capped spans and restarts.
  const TUNINGS: [string, SearchTuning | undefined][] = [
    ["the module's plan sizes", undefined],
    ["tiny plan sizes", { window: (limit) => limit, spanCap: () => 2 }],
  ];

  for (const [name, tuning] of TUNINGS) {
    test(`random queries, page by page (${name})`, () => {
      stores.tuning = tuning;
      let nonEmpty = 0;
      fc.assert(
        fc.property(filter, (f) => {
          const got = stores.pages(f);
          expect(got).toEqual(plainFilter(rows, f));
          if (got.length > 0) nonEmpty++;
        }),
        { numRuns: 300, seed: 4242 },
      );
      // The generator must mostly ask for things that exist, or the comparison proves little.
      expect(nonEmpty).toBeGreaterThan(100);
    }, 120_000);

    test(`every word of every operation, as a prefix of each length, on small pages (${name})`, () => {
      stores.tuning = tuning;
      const seen = new Set<string>();
      for (const r of rows.slice(0, 300)) for (const t of tokens(r.purpose)) seen.add(t);
      for (const t of seen) {
        for (const w of new Set([t.slice(0, 1), t.slice(0, 3), t])) {
          const f = { bankAccountId: ACCOUNTS[0]!, dateFrom: day(0), dateTo: day(59), words: [w], limit: 3 };
          expect({ w, ids: stores.pages(f, 3) }).toEqual({ w, ids: plainFilter(rows, f) });
          expect({ w, totals: stores.totals(f) }).toEqual({ w, totals: plainTotals(rows, f) });
        }
      }
    }, 120_000);
  }

  // The totals do not depend on the plan sizes: one statement, the same for every page.
  test("random queries: the totals of the whole period, the same on both stores and by the plain filter", () => {
    let nonEmpty = 0;
    fc.assert(
      fc.property(filter, (f) => {
        const totals = stores.totals(f);
        expect(totals).toEqual(plainTotals(rows, f));
        if (totals.count > 0) nonEmpty++;
      }),
      { numRuns: 300, seed: 4243 },
    );
    expect(nonEmpty).toBeGreaterThan(100);
  }, 120_000);
});

describe("named cases", () => {
  const purposes = [
    "Оплата по счёту №12 от 10.10.2024",
    "ОПЛАТА ПО СЧЕТУ 15",
    "Ёлочные игрушки",
    "елочный базар",
    "Café «Müller» straße",
    "Возврат займа",
    "Комиссия за счёт-фактуру",
  ];
  const rows = purposes.map((purpose, i) =>
    row({
      bank_account_id: "acc-n",
      operation_id: `n${i}`,
      doc_date: day(i * 10),
      purpose,
      amount: (i + 1) * 100_000,
      counterparty_inn: i % 2 === 0 ? INNS[0]! : INNS[1]!,
    }),
  );

  const stores = storesWith(rows);

  const find = (q: Partial<PgOperationFilter> & { text?: string }) => {
    const { text: words, ...rest } = q;
    const f: PgOperationFilter = {
      bankAccountId: "acc-n",
      dateFrom: day(0),
      dateTo: day(60),
      limit: 50,
      ...rest,
      words: words === undefined ? undefined : searched(words),
    };
    const ids = stores.pages(f);
    expect(ids).toEqual(plainFilter(rows, f));
    expect(stores.totals(f)).toEqual(plainTotals(rows, f));
    return ids;
  };

  test("ё and е find each other, in the text and in the query", () => {
    expect(find({ text: "счет" })).toEqual(["n0", "n1", "n6"]);
    expect(find({ text: "СЧЁТ" })).toEqual(["n0", "n1", "n6"]);
    expect(find({ text: "елоч" })).toEqual(["n2", "n3"]);
    expect(find({ text: "Ёлочн" })).toEqual(["n2", "n3"]);
  });

  test("upper and lower case, Latin diacritics", () => {
    expect(find({ text: "оплата" })).toEqual(["n0", "n1"]);
    expect(find({ text: "CAFE muller STRASSE" })).toEqual([]);
    expect(find({ text: "cafe MÜLL straße" })).toEqual(["n4"]);
  });

  test("words are prefixes; all must match; a word cut by punctuation is a phrase", () => {
    expect(find({ text: "опл" })).toEqual(["n0", "n1"]);
    expect(find({ text: "опл 15" })).toEqual(["n1"]);
    expect(find({ text: "счет-факт" })).toEqual(["n6"]);
    expect(find({ text: "счет-12" })).toEqual([]);
    expect(find({ text: "10.10.20" })).toEqual(["n0"]);
    expect(find({ text: "10.2024" })).toEqual(["n0"]);
    expect(find({ text: "10.11" })).toEqual([]);
    expect(find({ text: "плата" })).toEqual([]);
  });

  test("counterparty INN only, amount range only, direction", () => {
    expect(find({ counterpartyInn: INNS[1] })).toEqual(["n1", "n3", "n5"]);
    expect(find({ amountMinKopecks: 200_000, amountMaxKopecks: 400_000 })).toEqual(["n1", "n2", "n3"]);
    expect(find({ amountMinKopecks: 700_000 })).toEqual(["n6"]);
    expect(find({ direction: "debit" })).toEqual([]);
  });

  test("an absent word, an empty result, the edges of the period", () => {
    expect(find({ text: "зебра" })).toEqual([]);
    expect(find({ text: "опл", counterpartyInn: "7700000002", dateTo: day(5) })).toEqual([]);
    // Both ends are inclusive.
    expect(find({ dateFrom: day(10), dateTo: day(30) })).toEqual(["n1", "n2", "n3"]);
    expect(find({ dateFrom: day(11), dateTo: day(29) })).toEqual(["n2"]);
    expect(find({ text: "займ", dateFrom: day(50), dateTo: day(50) })).toEqual(["n5"]);
    expect(find({ text: "займ", dateFrom: day(51) })).toEqual([]);
  });

  test("keyset pages continue after the cursor", () => {
    expect(find({ after: { doc_date: day(10), operation_id: "n1" }, limit: 2 })).toEqual([
      "n2",
      "n3",
      "n4",
      "n5",
      "n6",
    ]);
  });
});

describe("the folding", () => {
  test("every character of Latin-1, Latin Extended-A and Cyrillic U+0400-U+045F splits and folds as FTS5 does", async () => {
    const texts: string[] = [];
    for (const [a, b] of [
      [0x20, 0x17f],
      [0x400, 0x45f],
    ] as const) {
      for (let c = a; c <= b; c++) texts.push(`x${String.fromCodePoint(c)}y`);
    }
    const fts = new Database(":memory:");
    fts.exec("CREATE VIRTUAL TABLE f USING fts5(a, tokenize='unicode61 remove_diacritics 2')");
    fts.exec("CREATE VIRTUAL TABLE v USING fts5vocab(f, 'instance')");
    const sqliteWords = texts.map((t, i) => {
      // What the trigger of migration 0008 hands to FTS5.
      fts
        .query("INSERT INTO f (rowid, a) VALUES (?, ?)")
        .run(i + 1, t.replaceAll("ё", "е").replaceAll("Ё", "Е"));
      return fts
        .query<{ term: string }, [number]>("SELECT term FROM v WHERE doc = ? ORDER BY offset")
        .all(i + 1)
        .map((r) => r.term);
    });
    fts.close();
    // Through the port, as the search sends its words: a text[] parameter holding quotes,
    // backslashes, braces and commas too.
    const got = syncPort(await migratedDatabase())
      .prepare<{ words: string[] }>("SELECT svc_words(t) AS words FROM unnest(?::text[]) AS t")
      .all(texts as unknown as SqlValue);
    expect(got.map((r) => r.words)).toEqual(sqliteWords);
  });
});

describe("migration 0004_operations_search", () => {
  test("operations stored before it are found, and new ones too", async () => {
    // The baseline alone, as a database migrated before 0001 has it.
    const before = join(tempDir(), "migrations-pg");
    mkdirSync(join(before, "meta"), { recursive: true });
    cpSync(join(PG_MIGRATIONS, "0000_baseline.sql"), join(before, "0000_baseline.sql"));
    const journal = await Bun.file(join(PG_MIGRATIONS, "meta/_journal.json")).json();
    journal.entries = journal.entries.slice(0, 1);
    writeFileSync(join(before, "meta/_journal.json"), JSON.stringify(journal));
    const url = await freshDatabase();
    const sql = connect(url);
    await migrateFolder(drizzle(sql), { migrationsFolder: before });
    const old = row({
      bank_account_id: "acc-u",
      operation_id: "u1",
      doc_date: "2024-05-01",
      purpose: "Аренда офиса",
    });
    await sql`INSERT INTO operations ${sql(old)}`;
    await migrateFolder(drizzle(sql), { migrationsFolder: PG_MIGRATIONS });
    const fresh = { ...old, operation_id: "u2", purpose: "Аренда склада" };
    await sql`INSERT INTO operations ${sql(fresh)}`;
    const pg = syncPort(url);
    const f = { bankAccountId: "acc-u", dateFrom: "2024-05-01", dateTo: "2024-05-01", limit: 10 };
    const found = (text: string) =>
      searchOperations(pg, { ...f, words: searched(text) }).map((o) => o.operation_id);
    expect(found("аренд")).toEqual(["u1", "u2"]);
    expect(found("офис")).toEqual(["u1"]);
    expect(found("склад")).toEqual(["u2"]);
    // Found through the GIN index too: an ordered window of one row, then the day's index entries.
    await sql`INSERT INTO operations ${sql(
      Array.from({ length: 100 }, (_, i) => ({ ...old, operation_id: `a${i}`, purpose: "Оплата" })),
    )}`;
    const throughIndex = { window: () => 1, spanCap: () => 10 };
    expect(
      searchOperations(pg, { ...f, words: ["склад"], limit: 1 }, throughIndex).map((o) => o.operation_id),
    ).toEqual(["u2"]);
  });
});

describe("plans: a search reads only the asked account's operations", () => {
  const rows = randomRows();
  const stores = storesWith(rows);

  test("every scan of operations is through an index whose condition holds the account (EXPLAIN)", () => {
    const statements: { text: string; params: unknown[] }[] = [];
    const recording: SqlPort = {
      ...stores.pg,
      prepare: <Row, P extends (SqlValue | SqlArray)[]>(text: string) => {
        const s = stores.pg.prepare<Row, P>(text);
        return {
          get: (...p: P) => s.get(...p),
          all: (...p: P) => {
            if (text.includes("FROM operations o")) statements.push({ text, params: p });
            return s.all(...p);
          },
          run: (...p: P) => s.run(...p),
        };
      },
    };
    // The module's plan sizes and tiny ones (which send the text through the GIN index's spans).
    for (const tuning of [undefined, { window: (limit: number) => limit, spanCap: () => 2 }]) {
      for (const words of [["опл"], ["12"], ["счет-факт"], ["зебра"], undefined]) {
        searchOperations(
          recording,
          { bankAccountId: ACCOUNTS[1]!, dateFrom: day(0), dateTo: day(59), words, limit: 3 },
          tuning,
        );
        searchOperations(
          recording,
          {
            bankAccountId: ACCOUNTS[1]!,
            dateFrom: day(0),
            dateTo: day(59),
            words,
            counterpartyInn: INNS[0],
            limit: 1,
          },
          tuning,
        );
      }
    }
    for (const words of [["опл"], ["счет-факт"], undefined]) {
      for (const counterpartyInn of [undefined, INNS[0]]) {
        for (const amounts of [{}, { amountMinKopecks: 1000, amountMaxKopecks: 50_000 }]) {
          operationTotals(recording, {
            bankAccountId: ACCOUNTS[1]!,
            dateFrom: day(0),
            dateTo: day(59),
            words,
            counterpartyInn,
            ...amounts,
          });
        }
      }
    }
    expect(statements.some((s) => s.text.includes("svc_search_days("))).toBe(true);
    // As on a table too large to read whole: the planner must find a plan within the account.
    stores.pg.prepare("SET enable_seqscan = off").run();
    try {
      for (const s of statements) {
        const plan = stores.pg
          .prepare<{ "QUERY PLAN": string }>(`EXPLAIN ${s.text}`)
          .all(...(s.params as SqlValue[]))
          .map((r) => r["QUERY PLAN"]);
        const text = plan.join("\n");
        expect(text).not.toMatch(/Seq Scan on operations/);
        // Each index scan of operations and the condition under it.
        plan.forEach((line, i) => {
          const scan =
            /(Bitmap Index Scan|Index Scan|Index Only Scan)(?: Backward)? (?:using|on) (operations_\w+)/.exec(
              line,
            );
          if (!scan) return;
          const cond = plan.slice(i + 1).find((l) => /Index Cond:/.test(l)) ?? "";
          if (scan[2] === "operations_search_account_days_idx") {
            expect(cond).toContain("svc_search_days(((bank_account_id || '|'::text) || doc_date)");
          } else {
            expect({ index: scan[2], cond }).toEqual({
              index: scan[2],
              cond: expect.stringContaining("bank_account_id = "),
            });
          }
        });
      }
    } finally {
      stores.pg.prepare("RESET enable_seqscan").run();
    }
  }, 120_000);
});

describe("the budget", () => {
  const stores = storesWith(randomRows());

  test("a statement past the search's time is cancelled by its statement_timeout: SearchBudgetExceeded, and the timeout stays the search's", () => {
    const before = stores.pg.prepare<{ statement_timeout: string }>("SHOW statement_timeout").get()!;
    // Every statement of the search first waits longer than the whole budget, on the same
    // connection and in the search's transaction, after the search has set its timeout.
    const slow: SqlPort = {
      ...stores.pg,
      prepare: <Row, P extends (SqlValue | SqlArray)[]>(text: string) => {
        const s = stores.pg.prepare<Row, P>(text);
        const wait = () => {
          if (text.includes("FROM operations o")) stores.pg.prepare("SELECT pg_sleep(2)").get();
        };
        return {
          get: (...p: P) => {
            wait();
            return s.get(...p);
          },
          all: (...p: P) => {
            wait();
            return s.all(...p);
          },
          run: (...p: P) => s.run(...p),
        };
      },
    };
    const f = { bankAccountId: ACCOUNTS[0]!, dateFrom: day(0), dateTo: day(59), limit: 3 };
    for (const words of [["опл"], undefined]) {
      expect(() => searchOperations(slow, { ...f, words }, undefined, 200)).toThrow(SearchBudgetExceeded);
      expect(() => operationTotals(slow, { ...f, words }, 200)).toThrow(SearchBudgetExceeded);
    }
    // Nothing left of the budget: refused before a statement runs.
    expect(() => searchOperations(stores.pg, { ...f, words: ["опл"] }, undefined, 0)).toThrow(
      SearchBudgetExceeded,
    );
    expect(() => operationTotals(stores.pg, f, 0)).toThrow(SearchBudgetExceeded);
    // SET LOCAL: the connection's own timeout is back once the search's transaction ends.
    expect(stores.pg.prepare<{ statement_timeout: string }>("SHOW statement_timeout").get()).toEqual(before);
    expect(searchOperations(stores.pg, { ...f, words: ["опл"] })).toHaveLength(3);
    expect(operationTotals(stores.pg, { ...f, words: ["опл"] }).count).toBeGreaterThan(3);
  }, 60_000);
});
