// lanes: postgres
// The search index's words computed by svc (src/db/pg/search-vector.ts) equal what PostgreSQL's
// own svc_search_vector gives (migrations-pg 0004), character by character over every covered
// range and on random text; operations stored through the repository carry them, and a row
// stored without them gets them from the database.
import { beforeAll, describe, expect, test } from "bun:test";
import fc from "fast-check";
import { postgresPort } from "../../src/db/pg/port";
import { searchVectorText } from "../../src/db/pg/search-vector";
import { PgSyncClient } from "../../src/db/pg/sync-client";
import { BankAccountRepository, CompanyRepository } from "../../src/db/repos/accounts";
import type { SqlPort } from "../../src/db/sql-port";
import { StatementRepository } from "../../src/statements/repository";
import { migratedDatabase, UNCACHED } from "../helpers/pg";
import { accountRow, companyRow, statementOperation } from "../helpers/rows";

type Columns = [string | null, string | null, string | null, string | null];

let port: SqlPort;
let client: PgSyncClient;

beforeAll(async () => {
  client = new PgSyncClient(await migratedDatabase(), { timeoutMs: 30_000 });
  port = postgresPort(client);
});

/** Each row's vector from the database and from svc, as PostgreSQL prints a tsvector. */
function both(rows: Columns[]): { db: string[]; app: string[] } {
  const column = (i: number) => rows.map((r) => r[i]!);
  const out = port
    .prepare<{ db: string; app: string }>(
      `SELECT svc_search_vector(t.p, t.a, t.b, t.d)::text AS db, t.s::tsvector::text AS app
         FROM unnest(?::text[], ?::text[], ?::text[], ?::text[], ?::text[]) WITH ORDINALITY AS t(p, a, b, d, s, n)
        ORDER BY t.n`,
    )
    .all(
      column(0),
      column(1),
      column(2),
      column(3),
      rows.map((r) => searchVectorText(...r)),
    );
  return { db: out.map((r) => r.db), app: out.map((r) => r.app) };
}

const range = (from: number, to: number) =>
  Array.from({ length: to - from + 1 }, (_, i) => String.fromCodePoint(from + i));
// Basic Latin, Latin-1, Latin Extended-A, Cyrillic U+0400–U+045F, and a few from outside them.
const COVERED = [...range(0x21, 0x7e), ...range(0xa0, 0x17f), ...range(0x400, 0x45f)];
const OUTSIDE = ["№", "—", "«", "»", "€", "ґ", "Ґ", "ǅ", "Ω", "😀", "\t", "\n"];

describe("the search index's words, computed by svc", () => {
  test("every covered character alone, inside a word and between words equals PostgreSQL's", () => {
    const rows: Columns[] = [...COVERED, ...OUTSIDE].map((c) => [
      c,
      `аб${c}вг`,
      `Ab${c}Cd`,
      `${c}1${c} x${c}`,
    ]);
    const { db, app } = both(rows);
    expect(app).toEqual(db);
  });

  test("random text over those characters, with nulls and empty columns, equals PostgreSQL's", () => {
    const alphabet = fc.constantFrom(...COVERED, ...OUTSIDE, " ", " ", " ", "-", ".");
    const text = fc.oneof(fc.constant(null), fc.constant(""), fc.string({ unit: alphabet, maxLength: 60 }));
    const rows = fc.sample(fc.tuple(text, text, text, text), { numRuns: 2000, seed: 42 }) as Columns[];
    const { db, app } = both(rows);
    expect(app).toEqual(db);
  });

  test("stored through the repository, and without it, an operation's words are PostgreSQL's", () => {
    new CompanyRepository(port).insert(companyRow());
    new BankAccountRepository(port, UNCACHED).insert(accountRow());
    const ops = [
      statementOperation({
        operation_id: "o1",
        payee: { ...statementOperation({ operation_id: "x" }).payee, name: "Straße & Søn ApS" },
        purpose: "Оплата по счёт-фактуре № 12.10.2024, НДС 20% — ÆØÅ straße",
      }),
      statementOperation({ operation_id: "o2", purpose: "ЁЛКИ ёлки Ёлочные игрушки", doc_number: "А-17/ё" }),
    ];
    new StatementRepository(port, UNCACHED).storeOperations("s1", "acc1", 1, ops);
    // A row stored by hand, without the column (as svc admin migrate-to-postgres does): the database fills it.
    const copied =
      "bank_account_id, doc_date, direction, doc_type, doc_number, amount, currency, counterparty_inn, payer_name, payer_inn, payer_kpp, payer_account, payer_bank_name, payer_bank_bik, payer_bank_corr_account, payee_name, payee_inn, payee_kpp, payee_account, payee_bank_name, payee_bank_bik, payee_bank_corr_account, uin, purpose_code, priority, budget_fields";
    port
      .prepare(
        `INSERT INTO operations (operation_id, purpose, ${copied})
           SELECT 'o3', 'Аренда офиса за ноябрь', ${copied} FROM operations WHERE operation_id = 'o1'`,
      )
      .run();
    const rows = port
      .prepare<{ id: string; same: number; filled: number }>(
        `SELECT operation_id AS id,
                (search = svc_search_vector(purpose, payer_name, payee_name, doc_number))::int AS same,
                (search <> ''::tsvector)::int AS filled
           FROM operations ORDER BY operation_id`,
      )
      .all();
    expect(rows).toEqual([
      { id: "o1", same: 1, filled: 1 },
      { id: "o2", same: 1, filled: 1 },
      { id: "o3", same: 1, filled: 1 },
    ]);
  });
});
