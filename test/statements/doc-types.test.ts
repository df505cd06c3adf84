// lanes: sqlite postgres
// The 1C header lists the document kinds of a statement's operations. They are kept on the
// statement when it becomes ready (reading every operation at each export cost about 100 ms for
// 155,000); statements made ready before they were kept are read from their operations.
import { describe, expect, test } from "bun:test";
import { migrate, openDatabase } from "../../src/db/open";
import { sqlitePort } from "../../src/db/sql-port";
import { decodeOneC, parseOneC } from "../../src/formats/onec";
import { DOC_TYPES } from "../../src/formats/types";
import { StatementRepository } from "../../src/statements/repository";
import { SAMPLE_OPERATIONS } from "../formats/sample-operations";
import { makeTestApp, type TestApp } from "../helpers/app";

const PATH = "/api/v1/integration/statements";

async function readyStatement(t: TestApp, token: string, accountId: string): Promise<string> {
  const res = await t.request("POST", PATH, {
    token,
    body: { bank_account_id: accountId, external_id: "e", date_from: "2026-10-01", date_to: "2026-10-31" },
  });
  const id = ((await res.json()) as { statement_id: string }).statement_id;
  await t.services.poller.idle();
  await t.services.poller.tick();
  await t.services.poller.idle();
  return id;
}

function storedKinds(t: TestApp, id: string): string[] {
  return t.db
    .query<{ doc_type: string }, [string]>(
      `SELECT DISTINCT o.doc_type FROM statement_operations so
         JOIN statements s ON s.id = so.statement_id
         JOIN operations o ON o.bank_account_id = s.bank_account_id AND o.operation_id = so.operation_id
        WHERE so.statement_id = ?`,
    )
    .all(id)
    .map((r) => r.doc_type);
}

async function headerKinds(t: TestApp, token: string, id: string): Promise<string[]> {
  const res = await t.request("GET", `${PATH}/${id}/export?format=1c`, { token });
  expect(res.status).toBe(200);
  const text = decodeOneC(new Uint8Array(await res.arrayBuffer()));
  expect(parseOneC(text).documents.length).toBeGreaterThan(0);
  const header = text.slice(0, text.indexOf("СекцияРасчСчет"));
  return [...header.matchAll(/^Документ=(.*)\r$/gm)].map((m) => m[1]!);
}

const byOrder = (kinds: string[]) =>
  [...kinds].sort((a, b) => DOC_TYPES.indexOf(a as never) - DOC_TYPES.indexOf(b as never));

describe("document kinds of a statement", () => {
  test("kept when it becomes ready: those of its stored operations, in the order of DOC_TYPES", async () => {
    const t = makeTestApp();
    const w = t.fixtures.world({ ops_per_day: 40 });
    const id = await readyStatement(t, w.token, w.account.bank_account_id);
    const row = t.services.statementRepo.findById(id)!;
    const kinds = storedKinds(t, id);
    expect(kinds.length).toBeGreaterThan(1);
    expect(JSON.parse(row.doc_types!)).toEqual(byOrder(kinds));
  });

  test("the 1C header is written from the kept kinds, and from the operations when none are kept", async () => {
    const t = makeTestApp();
    const w = t.fixtures.world({ ops_per_day: 40 });
    const id = await readyStatement(t, w.token, w.account.bank_account_id);
    const kept = await headerKinds(t, w.token, id);
    expect(kept.length).toBe(storedKinds(t, id).length);

    // Written behind the repository (its cached rows are dropped by hand).
    const setKept = (value: string | null) => {
      t.db.query("UPDATE statements SET doc_types = ? WHERE id = ?").run(value, id);
      t.services.externalChanges.invalidate();
    };
    // The kept value is what the header shows (the operations are not read again).
    setKept('["bank_order"]');
    expect(await headerKinds(t, w.token, id)).toEqual(["Банковский ордер"]);

    // As a statement made ready before the kinds were kept (migration 0006 leaves them NULL).
    setKept(null);
    expect(await headerKinds(t, w.token, id)).toEqual(kept);
  });

  test("an operation stored before by an overlapping statement counts with its stored kind", () => {
    const database = openDatabase(":memory:");
    migrate(database.db);
    database.sqlite.exec("PRAGMA foreign_keys = OFF");
    const repo = new StatementRepository(sqlitePort(database.sqlite));
    const op = { ...SAMPLE_OPERATIONS[0]!, doc_type: "payment_order" as const };
    const other = { ...SAMPLE_OPERATIONS[1]!, doc_type: "memorial_order" as const };
    expect([...repo.storeOperations("s1", "acc", 1, [op])]).toEqual(["payment_order"]);
    // The bank sends the same operation again with another kind: the stored row stays, and is
    // what the second statement's export writes.
    const resent = { ...op, doc_type: "bank_order" as const };
    expect([...repo.storeOperations("s2", "acc", 1, [resent, other])].sort()).toEqual([
      "memorial_order",
      "payment_order",
    ]);
  });
});
