// lanes: postgres
// PaymentRepository on both stores: an import with its items and audit entry, a submission
// claimed once per (token, external id), the bank's answers, status checks, a final word settled
// once, the first stored answer kept; on PostgreSQL two replicas submitting the same payment at
// once claim its items once. `$name` parameters as PostgreSQL receives them.
import { describe, expect, test } from "bun:test";
import { AuditLog } from "../../src/audit/audit-log";
import { toPostgresNamed } from "../../src/db/pg/port";
import type { SqlPort } from "../../src/db/sql-port";
import { type NewItem, PaymentRepository } from "../../src/payments/repository";
import { twoStores } from "../helpers/pg";

const { ports, pgPort } = twoStores();

const repoOn = (port: SqlPort) => new PaymentRepository(port, new AuditLog(port));
const audit = (action: string) => ({
  at: new Date("2026-11-20T10:00:00Z"),
  actor: "token" as const,
  apiTokenId: "t1",
  action,
  outcome: "ok",
});

function item(importId: string, seq: number, amount: number): NewItem {
  return {
    id: `${importId}-i${seq}`,
    import_id: importId,
    seq,
    line: seq * 20,
    doc_number: String(100 + seq),
    doc_date: "2026-11-20",
    amount,
    currency: "RUB",
    purpose: "Оплата по договору №7 «аренда», НДС не облагается",
    priority: "5",
    payee_name: "ООО Лютик",
    payee_inn: "7707083893",
    payee_kpp: "770701001",
    payee_account: "40702810000000000009",
    payee_bank_name: "ПАО «Банк»",
    payee_bank_bik: "044525225",
    payee_bank_corr_account: "30101810400000000225",
  };
}

function submission(id: string, importId: string, externalId: string) {
  return {
    id,
    api_token_id: "t1",
    external_id: externalId,
    payload_hash: "h",
    kind: "import" as const,
    import_id: importId,
    item_id: null,
    created_at: "2026-11-20T10:01:00.000Z",
  };
}

function scenario(port: SqlPort) {
  const repo = repoOn(port);
  repo.createImport(
    {
      id: "imp1",
      api_token_id: "t1",
      bank_account_id: "acc1",
      file_bytes: 2048,
      created_at: "2026-11-20T10:00:00.000Z",
    },
    [item("imp1", 1, 2 ** 40), item("imp1", 2, 1)],
    audit("payments.import"),
  );
  const claimed = repo.claim(submission("sub1", "imp1", "x1"), ["imp1-i1", "imp1-i2"], (id) => `key-${id}`);
  const again = repo.claim(submission("sub2", "imp1", "x1"), ["imp1-i1"], (id) => `other-${id}`);
  repo.finishItem("imp1-i1", {
    status: "submitted",
    bank_reference: "ref-1",
    sign_url: "https://bank.example/sign/1",
    at: "2026-11-20T10:02:00.000Z",
    next_status_check_at_ms: 1_000,
  });
  repo.finishItem("imp1-i2", {
    status: "rejected",
    error_code: "bank_refused",
    error_message: "Счёт закрыт",
    at: "2026-11-20T10:02:00.000Z",
  });
  const due = repo.dueStatusChecks(5_000, 10);
  repo.rescheduleStatusCheck("imp1-i1", 9_000);
  const dueLater = repo.dueStatusChecks(5_000, 10).length;
  const settled = [
    repo.settleItem("imp1-i1", { status: "signed_and_paid" }, audit("payments.item.status")),
    repo.settleItem("imp1-i1", { status: "canceled" }, audit("payments.item.status")),
  ];
  // A lease: taken once until it passes; an interrupted submission whose lease is held is not listed.
  const leases = [
    repo.takeLease("sub1", 2_000, 1_000),
    repo.takeLease("sub1", 3_000, 1_500),
    repo.interruptedSubmissions(1_500).length,
    repo.takeLease("sub1", 4_000, 2_000),
    repo.releaseAllLeases(),
    repo.takeLease("sub1", 5_000, 2_500),
  ];
  repo.releaseLease("sub1");
  const interrupted = repo.interruptedSubmissions(2_500).map((s) => s.id);
  const stored = [
    repo.completeSubmission("sub1", '{"first":true}', "2026-11-20T10:03:00.000Z", audit("payments.submit")),
    repo.completeSubmission("sub1", '{"first":false}', "2026-11-20T10:04:00.000Z", audit("payments.submit")),
  ];
  const afterCompletion = repo.takeLease("sub1", 9_000, 8_000);
  return {
    leases,
    afterCompletion,
    claimed:
      claimed.kind === "claimed"
        ? claimed.items.map((i) => [i.id, i.status, i.bank_idempotency_key])
        : claimed.kind,
    again: [again.kind, again.submission.id],
    due,
    dueLater,
    settled,
    interrupted,
    stored,
    items: repo.items("imp1"),
    recent: repo.recentItems(10).map((i) => [i.id, i.bank_account_id, i.status]),
    audit: new AuditLog(port).query({ limit: 10 }).map((e) => e.action),
  };
}

describe("payments on both stores", () => {
  test("the same calls give the same rows", () => {
    const [onSqlite, onPostgres] = ports.map(scenario);
    expect(onPostgres).toEqual(onSqlite!);
    expect(onSqlite!.leases).toEqual([true, false, 0, true, 1, true]);
    expect(onSqlite!.afterCompletion).toBe(false);
    expect(onSqlite!.claimed).toEqual([
      ["imp1-i1", "submitting", "key-imp1-i1"],
      ["imp1-i2", "submitting", "key-imp1-i2"],
    ]);
    expect(onSqlite!.again).toEqual(["existing", "sub1"]);
    expect(onSqlite!.due).toEqual([
      {
        id: "imp1-i1",
        import_id: "imp1",
        bank_reference: "ref-1",
        doc_number: "101",
        bank_account_id: "acc1",
      },
    ]);
    expect(onSqlite!.dueLater).toBe(0);
    expect(onSqlite!.settled).toEqual([true, false]);
    expect(onSqlite!.interrupted).toEqual(["sub1"]);
    expect(onSqlite!.stored).toEqual(['{"first":true}', '{"first":true}']);
    expect(onSqlite!.items.map((i) => [i.status, i.amount])).toEqual([
      ["signed_and_paid", 2 ** 40],
      ["rejected", 1],
    ]);
    expect(onSqlite!.audit).toEqual(["payments.submit", "payments.item.status", "payments.import"]);
  });

  test("PostgreSQL: two replicas submitting the same payment at once claim its items once", () => {
    const a = pgPort();
    const b = pgPort();
    repoOn(a).createImport(
      {
        id: "imp2",
        api_token_id: "t1",
        bank_account_id: "acc1",
        file_bytes: 10,
        created_at: "2026-11-20T11:00:00.000Z",
      },
      [item("imp2", 1, 5)],
      audit("payments.import"),
    );
    let attempts = 0;
    const outcome = a.transaction(() => {
      attempts += 1;
      a.prepare(
        "SELECT id FROM payment_submissions WHERE api_token_id = 't1' AND external_id = 'race'",
      ).all();
      if (attempts === 1) repoOn(b).claim(submission("from-b", "imp2", "race"), ["imp2-i1"], () => "key-b");
      return repoOn(a).claim(submission("from-a", "imp2", "race"), ["imp2-i1"], () => "key-a");
    });
    expect(attempts).toBe(2);
    expect([outcome.kind, outcome.submission.id]).toEqual(["existing", "from-b"]);
    expect(repoOn(a).findItem("imp2-i1")).toMatchObject({
      submission_id: "from-b",
      bank_idempotency_key: "key-b",
    });
  });

  test("a due status check is taken by one poller; due again when its claim passes", () => {
    const [onSqlite, onPostgres] = ports.map((port) => {
      const repo = repoOn(port);
      repo.createImport(
        {
          id: "imp3",
          api_token_id: "t1",
          bank_account_id: "acc1",
          file_bytes: 10,
          created_at: "2026-11-20T12:00:00.000Z",
        },
        [item("imp3", 1, 7)],
        audit("payments.import"),
      );
      repo.claim(submission("sub3", "imp3", "x3"), ["imp3-i1"], () => "k3");
      repo.finishItem("imp3-i1", {
        status: "submitted",
        bank_reference: "ref-3",
        sign_url: "https://bank.example/sign/3",
        at: "2026-11-20T12:01:00.000Z",
        next_status_check_at_ms: 1_000,
      });
      const takes = [
        repo.claimStatusCheck("imp3-i1", 1_000, 5_000),
        repo.claimStatusCheck("imp3-i1", 1_000, 5_000),
      ];
      const dueWhileTaken = repo.dueStatusChecks(4_999, 10).some((c) => c.id === "imp3-i1");
      const afterClaim = repo.claimStatusCheck("imp3-i1", 5_000, 9_000);
      return { takes, dueWhileTaken, afterClaim };
    });
    expect(onPostgres).toEqual(onSqlite!);
    expect(onSqlite).toEqual({ takes: [true, false], dueWhileTaken: false, afterClaim: true });
  });

  test("$name parameters: numbered by first use, a name used twice is one parameter, quotes left alone", () => {
    expect(toPostgresNamed(`UPDATE t SET a = $a, b = '$b', "$c" = $c WHERE id = $id AND a <> $a`)).toEqual({
      text: `UPDATE t SET a = $1, b = '$b', "$c" = $2 WHERE id = $3 AND a <> $1`,
      names: ["a", "c", "id"],
    });
  });
});
