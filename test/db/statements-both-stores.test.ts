// lanes: postgres
// StatementRepository on both stores: orders (idempotent per token and external id), operations
// shared between overlapping statements, the lifecycle, balances (never older), the poller's due
// list and paging give the same rows; on PostgreSQL two replicas ordering the same statement at
// the same moment end with one order (the loser's transaction runs again and finds it); the
// search's totals count an operation two statements hold once.
import { describe, expect, test } from "bun:test";
import { operationTotals } from "../../src/db/operation-search";
import { SEARCH_LIMITS } from "../../src/db/search-limits";
import type { SqlPort } from "../../src/db/sql-port";
import type { DocType } from "../../src/formats/types";
import { type NewStatement, StatementRepository } from "../../src/statements/repository";
import { twoStores, UNCACHED } from "../helpers/pg";
import { statementOperation } from "../helpers/rows";

const { ports, pgPort } = twoStores();

function order(id: string, externalId: string, createdAt = "2026-11-20T10:00:00.000Z"): NewStatement {
  return {
    id,
    bank_account_id: "acc1",
    api_token_id: "t1",
    source: "integration",
    external_id: externalId,
    date_from: "2026-10-01",
    date_to: "2026-10-31",
    created_at: createdAt,
  };
}

const operation = (id: string, docType: DocType, amount: number) =>
  statementOperation({ operation_id: id, doc_type: docType, amount });

function scenario(port: SqlPort) {
  const repo = new StatementRepository(port, UNCACHED);
  const first = repo.createOrFind(order("s1", "e1"));
  const again = repo.createOrFind(order("s-other", "e1"));
  repo.createOrFind(order("s2", "e2", "2026-11-20T10:00:01.000Z"));
  repo.markRequested("s1", "bank-1", 1_000);
  repo.reschedule("s1", 2_000);
  const due = repo.due(5_000, 10).map((s) => s.id);
  const kinds1 = repo.storeOperations("s1", "acc1", 1, [
    operation("o1", "payment_order", 2 ** 40),
    operation("o2", "bank_order", 1),
  ]);
  // s2 overlaps: o2 is stored already (its row and kind stay), o3 is new.
  const kinds2 = repo.storeOperations("s2", "acc1", 1, [
    operation("o2", "payment_request", 1),
    operation("o3", "memorial_order", 5),
  ]);
  // A chunk stored again (a poller that died after it, another that takes over): nothing changes.
  const kindsRerun = repo.storeOperations("s1", "acc1", 1, [
    operation("o1", "payment_order", 2 ** 40),
    operation("o2", "bank_order", 1),
  ]);
  const balance = {
    bank_account_id: "acc1",
    balance: 2 ** 40 + 6,
    currency: "RUB",
    as_of: "2026-11-20T10:05:00.000Z",
  };
  repo.markReady(
    "s1",
    {
      opening_balance: 0,
      closing_balance: 2 ** 40 + 1,
      total_credit: 2 ** 40 + 1,
      total_debit: 0,
      operations_count: 2,
      fetched_at: "2026-11-20T10:05:00.000Z",
      doc_types: kinds1,
    },
    balance,
  );
  repo.upsertBalance({ ...balance, balance: 7, as_of: "2026-11-20T10:00:00.000Z" }); // older: ignored
  repo.markFailed("s2", "bank_error", "Банк отказал", "E42");
  return {
    first: first.kind,
    again: [again.kind, again.row.id],
    due,
    kinds1: [...kinds1].sort(),
    kinds2: [...kinds2].sort(),
    kindsRerun: [...kindsRerun].sort(),
    operations: port
      .prepare(
        `SELECT operation_id, doc_type, amount, counterparty_inn, uin, priority, budget_fields
           FROM operations ORDER BY operation_id`,
      )
      .all(),
    s1: repo.findById("s1"),
    s2: repo.findById("s2"),
    links: port
      .prepare("SELECT statement_id, seq, operation_id FROM statement_operations ORDER BY statement_id, seq")
      .all(),
    balance: repo.balance("acc1"),
    list: repo.list({ apiTokenId: "t1", limit: 1 }).map((s) => s.id),
    page2: repo
      .list({ apiTokenId: "t1", limit: 5, before: { created_at: "2026-11-20T10:00:01.000Z", id: "s2" } })
      .map((s) => s.id),
    // search_operations' totals over what both statements hold (o2 twice): each operation once.
    totals: [undefined, ["ЕЛКИ"], ["счет", "12"], ["зебра"]].map((words) =>
      operationTotals(
        port,
        { bankAccountId: "acc1", dateFrom: "2026-10-01", dateTo: "2026-10-31", words },
        SEARCH_LIMITS,
      ),
    ),
  };
}

describe("statements on both stores", () => {
  test("the same calls give the same rows", () => {
    const [onSqlite, onPostgres] = ports.map(scenario);
    expect(onPostgres).toEqual(onSqlite!);
    expect(onSqlite!.again).toEqual(["existing", "s1"]);
    expect(onSqlite!.due).toEqual(["s2", "s1"]); // by next poll time
    expect(onSqlite!.kinds2).toEqual(["bank_order", "memorial_order"]); // o2 keeps its stored kind
    expect(onSqlite!.kindsRerun).toEqual(["bank_order", "payment_order"]);
    expect(onSqlite!.operations).toHaveLength(3);
    expect(onSqlite!.s1).toMatchObject({
      status: "ready",
      closing_balance: 2 ** 40 + 1,
      operations_count: 2,
    });
    expect(onSqlite!.s2).toMatchObject({
      status: "failed",
      error_code: "bank_error",
      bank_error_code: "E42",
    });
    expect(onSqlite!.balance).toEqual({
      balance: 2 ** 40 + 6,
      currency: "RUB",
      as_of: "2026-11-20T10:05:00.000Z",
    });
    expect(onSqlite!.list).toEqual(["s2"]);
    expect(onSqlite!.page2).toEqual(["s1"]);
    const all = { count: 3, creditKopecks: 2 ** 40 + 6, debitKopecks: 0 };
    expect(onSqlite!.totals).toEqual([all, all, all, { count: 0, creditKopecks: 0, debitKopecks: 0 }]);
  });

  test("PostgreSQL: two replicas ordering the same statement at once end with one order", () => {
    const a = pgPort();
    const b = pgPort();
    const repoA = new StatementRepository(a, UNCACHED);
    const repoB = new StatementRepository(b, UNCACHED);
    let attempts = 0;
    // A has looked (nothing there) when B orders and commits; A's insert then conflicts.
    const outcome = a.transaction(() => {
      attempts += 1;
      a.prepare("SELECT id FROM statements WHERE api_token_id = 't1' AND external_id = 'race'").all();
      if (attempts === 1) repoB.createOrFind(order("from-b", "race"));
      return repoA.createOrFind(order("from-a", "race"));
    });
    expect(attempts).toBe(2);
    expect([outcome.kind, outcome.row.id]).toEqual(["existing", "from-b"]);
    expect(a.prepare("SELECT id FROM statements WHERE external_id = 'race'").all()).toEqual([
      { id: "from-b" },
    ]);
  });
  test("leases: one poller at a time, the row as the database has it, free again when released or past", () => {
    const [onSqlite, onPostgres] = ports.map((port) => {
      const repo = new StatementRepository(port, UNCACHED);
      repo.createOrFind(order("L1", "lease"));
      const taken = repo.takeLease("L1", 1_000, 61_000);
      const dueWhileHeld = repo.due(30_000, 100).some((r) => r.id === "L1");
      const whileHeld = repo.takeLease("L1", 30_000, 90_000);
      const afterExpiry = repo.takeLease("L1", 61_000, 121_000);
      repo.releaseLease("L1");
      const afterRelease = repo.takeLease("L1", 62_000, 122_000)?.lease_until_ms;
      repo.markFailed("L1", "bank_error", "x");
      const notProcessing = repo.takeLease("L1", 200_000, 260_000);
      return {
        taken: taken?.lease_until_ms,
        dueWhileHeld,
        whileHeld,
        afterExpiry: afterExpiry?.lease_until_ms,
        afterRelease,
        notProcessing,
      };
    });
    expect(onPostgres).toEqual(onSqlite!);
    expect(onSqlite).toEqual({
      taken: 61_000,
      dueWhileHeld: false,
      whileHeld: null,
      afterExpiry: 121_000,
      afterRelease: 122_000,
      notProcessing: null,
    });

    // Two replicas at once: one gets it.
    const a = new StatementRepository(pgPort(), UNCACHED);
    const b = new StatementRepository(pgPort(), UNCACHED);
    a.createOrFind(order("L2", "lease-2"));
    expect([a.takeLease("L2", 1_000, 61_000) !== null, b.takeLease("L2", 1_000, 61_000) !== null]).toEqual([
      true,
      false,
    ]);
  });
});
