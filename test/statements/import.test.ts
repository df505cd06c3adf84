// lanes: sqlite postgres
// Statements from the bank's own 1C file: POST /api/v1/integration/statements/import (decisions
// §11), as every export, agent tool and the admin pages then see them.
import { describe, expect, spyOn, test } from "bun:test";
import fc from "fast-check";
import iconv from "iconv-lite";
import { IMPORT_CHUNK } from "../../src/statements/import";
import { ADMIN_TOKEN, BASE, json, makeTestApp, type TestApp } from "../helpers/app";
import { expectError } from "../helpers/envelope";
import { callTool, initSession } from "../mcp/helpers";
import {
  type BankFile,
  bankFile,
  importFile,
  importRequest,
  storedCounts,
  withoutId,
} from "./import-support";

const STATEMENTS = "/api/v1/integration/statements";

function fileWorld(t: TestApp) {
  const company = t.fixtures.company();
  const account = t.fixtures.account(company.company_id, "file");
  const grant = [{ bank_account_id: account.bank_account_id, allow_read_statements: true }];
  // A file account holds real bank data: svc_test_ tokens reach sandbox banks only.
  const token = t.fixtures.token(company.company_id, {
    mode: "live",
    accounts: grant,
    rate_limit_per_minute: 10_000,
  });
  const agent = t.fixtures.token(company.company_id, { purpose: "mcp", mode: "live", accounts: grant });
  const number = t.services.accounts.findById(account.bank_account_id)?.accountNumber as string;
  return {
    company,
    account,
    accountId: account.bank_account_id,
    number,
    token: token.token,
    agent: agent.token,
  };
}

function storedOperations(t: TestApp, statementId: string) {
  const row = t.services.statementRepo.findById(statementId);
  if (!row) throw new Error("no statement");
  const seqs = Array.from({ length: row.operations_count ?? 0 }, (_, i) => i + 1);
  return t.services.exportQueries.operationsAt(row, seqs).map((r) => r.op);
}

async function imported(t: TestApp, w: ReturnType<typeof fileWorld>, externalId: string, file: BankFile) {
  const res = await importFile(t, w.token, w.accountId, externalId, file.bytes);
  if (res.status !== 201) throw new Error(`import: ${res.status} ${await res.text()}`);
  return json<{ statement_id: string; status: string; source: string; operations_count: number }>(res);
}

describe("POST /statements/import", () => {
  test("stores the file's operations as a ready statement; exports, agents and the list see it", async () => {
    const t = makeTestApp();
    const w = fileWorld(t);
    const file = bankFile(w.number, "2026-11-01", "2026-11-10");
    const before = storedCounts(t);
    const statement = await imported(t, w, "nov-1", file);
    expect(statement).toMatchObject({ status: "ready", source: "import", external_id: "nov-1" });
    expect(statement.operations_count).toBe(file.operations.length);
    expect(storedOperations(t, statement.statement_id).map(withoutId)).toEqual(
      file.operations.map(withoutId),
    );
    expect(storedCounts(t).statements).toBe(before.statements + 1);

    const csv = await t.request("GET", `${STATEMENTS}/${statement.statement_id}/export?format=csv`, {
      token: w.token,
    });
    expect(csv.status).toBe(200);
    expect((await csv.text()).trimEnd().split("\r\n")).toHaveLength(file.operations.length + 1);

    const session = await initSession(t, w.agent);
    const balance = await callTool(t, w.agent, session, "get_balance", { bank_account_id: w.accountId });
    // The file ends before today: its closing balance stands, as of the end of its last day (Moscow).
    expect(balance.structuredContent).toMatchObject({
      balance: file.closing / 100,
      as_of: "2026-11-10T20:59:59.000Z",
      stale: true,
    });
    const listed = await callTool(t, w.agent, session, "list_statements", { bank_account_id: w.accountId });
    expect(listed.structuredContent.statements).toEqual([
      expect.objectContaining({ statement_id: statement.statement_id, source: "import" }),
    ]);
    const got = await callTool(t, w.agent, session, "get_statement", {
      statement_id: statement.statement_id,
    });
    expect((got.structuredContent.operations as unknown[]).length).toBe(file.operations.length);
  });

  test("idempotent by external_id: the same file is 200 with the same statement, another file 409", async () => {
    const t = makeTestApp();
    const w = fileWorld(t);
    const file = bankFile(w.number, "2026-11-01", "2026-11-05");
    const first = await imported(t, w, "x-1", file);
    const counts = storedCounts(t);
    const again = await importFile(t, w.token, w.accountId, " x-1 ", file.bytes);
    expect(again.status).toBe(200);
    expect((await json(again)).statement_id).toBe(first.statement_id);
    const other = bankFile(w.number, "2026-11-01", "2026-11-06");
    const details = await expectError(
      await importFile(t, w.token, w.accountId, "x-1", other.bytes),
      409,
      "conflict",
    );
    expect(details.statement_id).toBe(first.statement_id);
    expect(storedCounts(t)).toEqual(counts);
  });

  test("the same file again is answered from the stored statement: the file is not parsed again", async () => {
    const t = makeTestApp();
    const w = fileWorld(t);
    const file = bankFile(w.number, "2026-11-01", "2026-11-05");
    const parse = spyOn(t.services.importThreads, "parse");
    const first = await imported(t, w, "x-2", file);
    expect(parse).toHaveBeenCalledTimes(1);
    const counts = storedCounts(t);
    for (let i = 0; i < 3; i++) {
      const again = await importFile(t, w.token, w.accountId, "x-2", file.bytes);
      expect(again.status).toBe(200);
      expect((await json(again)).statement_id).toBe(first.statement_id);
    }
    expect(parse).toHaveBeenCalledTimes(1);
    expect(storedCounts(t)).toEqual(counts);
    // Another file under the same id is read (a refused file answers as it always did), then 409.
    const broken = new TextEncoder().encode("not a 1C file");
    await expectError(await importFile(t, w.token, w.accountId, "x-2", broken), 400, "validation_error");
    expect(parse).toHaveBeenCalledTimes(2);
  });

  test("an import interrupted after its statement was created stays processing; the same file completes it", async () => {
    // In this thread on either store, so that the store's failure can be made here.
    const t = makeTestApp({}, undefined, {
      overrides: { importThreads: { minBytes: Number.POSITIVE_INFINITY } },
    });
    const w = fileWorld(t);
    const file = bankFile(w.number, "2026-11-01", "2026-11-20", { opsPerDay: 150 });
    expect(file.operations.length).toBeGreaterThan(IMPORT_CHUNK);
    // The store fails after its first chunk (as a full disk or a lost server would).
    const repo = t.services.statementRepo;
    const real = repo.storeOperations.bind(repo);
    let chunks = 0;
    const store = spyOn(repo, "storeOperations").mockImplementation((...args) => {
      chunks += 1;
      if (chunks === 2) throw new Error("disk I/O error");
      return real(...args);
    });
    const failed = await importFile(t, w.token, w.accountId, "x-3", file.bytes);
    expect(failed.status).toBe(500);
    const [row] = t.db.query<{ id: string; status: string }, []>("SELECT id, status FROM statements").all();
    expect(row?.status).toBe("processing");
    const listed = await json<{ statements: { status: string }[] }>(
      await t.request("GET", STATEMENTS, { token: w.token }),
    );
    expect(listed.statements.map((s) => s.status)).toEqual(["processing"]);
    // The poller never takes it (there is no bank to ask).
    await t.services.poller.tick();
    expect(t.services.statementRepo.findById(row!.id)?.status).toBe("processing");

    store.mockRestore();
    const again = await importFile(t, w.token, w.accountId, "x-3", file.bytes);
    expect(again.status).toBe(200);
    const done = await json<{ statement_id: string; status: string; operations_count: number }>(again);
    expect(done).toMatchObject({
      statement_id: row!.id,
      status: "ready",
      operations_count: file.operations.length,
    });
    expect(storedOperations(t, row!.id).map(withoutId)).toEqual(file.operations.map(withoutId));
  });

  test("overlapping files: search returns each operation once; the later statement is complete", async () => {
    const t = makeTestApp();
    const w = fileWorld(t);
    const half = bankFile(w.number, "2026-11-01", "2026-11-15");
    const whole = bankFile(w.number, "2026-11-01", "2026-11-30");
    await imported(t, w, "first-half", half);
    const later = await imported(t, w, "whole-month", whole);
    expect(later.operations_count).toBe(whole.operations.length);
    expect(storedOperations(t, later.statement_id).map(withoutId)).toEqual(whole.operations.map(withoutId));
    expect(storedCounts(t).operations).toBe(whole.operations.length);

    const session = await initSession(t, w.agent);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page = await callTool(t, w.agent, session, "search_operations", {
        bank_account_id: w.accountId,
        date_from: "2026-11-01",
        date_to: "2026-11-30",
        limit: 100,
        ...(cursor ? { cursor } : {}),
      });
      const ops = page.structuredContent.operations as { operation_id: string }[];
      seen.push(...ops.map((op) => op.operation_id));
      cursor = page.structuredContent.next_cursor as string | null;
    } while (cursor);
    expect(seen).toHaveLength(whole.operations.length);
    expect(new Set(seen).size).toBe(seen.length);
  });

  test("round trip: svc's own 1C export of any imported statement, imported back, gives the same operations", async () => {
    const t = makeTestApp();
    const w = fileWorld(t);
    let n = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 300 }),
        fc.integer({ min: 0, max: 6 }),
        fc.integer({ min: 1, max: 12 }),
        fc.constantFrom("1.02" as const, "1.03" as const),
        async (startDay, days, opsPerDay, version) => {
          n += 1;
          const from = new Date(Date.parse("2025-10-01T00:00:00Z") + startDay * 86_400_000)
            .toISOString()
            .slice(0, 10);
          const to = new Date(Date.parse(`${from}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);
          const original = bankFile(w.number, from, to, { opsPerDay });
          const first = await imported(t, w, `orig-${n}`, original);
          const exported = await t.request(
            "GET",
            `${STATEMENTS}/${first.statement_id}/export?format=1c&version=${version}`,
            { token: w.token },
          );
          expect(exported.status).toBe(200);
          const back = await importFile(
            t,
            w.token,
            w.accountId,
            `back-${n}`,
            new Uint8Array(await exported.arrayBuffer()),
          );
          expect(back.status).toBe(201);
          const second = await json<{ statement_id: string }>(back);
          const expected = storedOperations(t, first.statement_id).map(withoutId);
          const roundTripped = storedOperations(t, second.statement_id).map(withoutId);
          // 1.02 has no УИН or purpose code: those are the only fields it may lose.
          const comparable = (ops: ReturnType<typeof withoutId>[]) =>
            version === "1.03" ? ops : ops.map((op) => ({ ...op, uin: null, purpose_code: null }));
          expect(comparable(roundTripped)).toEqual(comparable(expected));
          expect(roundTripped.map((op) => op.amount)).toEqual(original.operations.map((op) => op.amount));
        },
      ),
      { numRuns: 25, seed: 24 },
    );
  });
});

describe("files shaped like real banks'", () => {
  const variants: [string, (number: string) => BankFile][] = [
    [
      "1.03, CRLF, cp1251, unknown keys",
      (no) =>
        bankFile(no, "2026-11-02", "2026-11-06", {
          reshape: (text) =>
            text
              .replace("ВремяСоздания=10:00:00\r\n", "ВремяСоздания=10:00:00\r\nПрограмма=iBank2\r\n")
              .replaceAll(
                "СекцияДокумент=Платежное поручение\r\n",
                "СекцияДокумент=Платежное поручение\r\nИдентификаторДокумента=77\r\n",
              ),
        }),
    ],
    [
      "1.03 with LF line ends and no Документ= lines",
      (no) =>
        bankFile(no, "2026-11-02", "2026-11-06", {
          lf: true,
          reshape: (text) => text.replace(/^Документ=[^\r]*\r\n/gm, ""),
        }),
    ],
    [
      "1.02 in DOS (cp866)",
      (no) => bankFile(no, "2026-11-02", "2026-11-06", { version: "1.02", encoding: "cp866" }),
    ],
    [
      "optional keys absent",
      (no) =>
        bankFile(no, "2026-11-02", "2026-11-06", {
          reshape: (text) =>
            text.replace(
              /^(ПлательщикКорсчет|ПолучательКорсчет|Очередность|КодНазПлатежа|Код|ВидПлатежа|ПлательщикКПП|ПолучательКПП|КвитанцияДата|КвитанцияВремя)=[^\r]*\r\n/gm,
              "",
            ),
        }),
    ],
  ];
  for (const [name, make] of variants) {
    test(name, async () => {
      const t = makeTestApp();
      const w = fileWorld(t);
      const file = make(w.number);
      const statement = await imported(t, w, "v", file);
      const stored = storedOperations(t, statement.statement_id).map(withoutId);
      expect(stored.map((op) => [op.direction, op.amount, op.doc_date, op.doc_number])).toEqual(
        file.operations.map((op) => [op.direction, op.amount, op.doc_date, op.doc_number]),
      );
      // What the file's encoding cannot hold (« » in cp866) reads back as the bank wrote it: "?".
      const encoding = name.includes("cp866") ? "cp866" : "win1251";
      const asWritten = (text: string) => iconv.decode(iconv.encode(text, encoding), encoding);
      expect(stored.map((op) => op.purpose)).toEqual(file.operations.map((op) => asWritten(op.purpose)));
    });
  }

  test("long names over Плательщик1..3, documents of other accounts skipped, ДатаСписано/ДатаПоступило", async () => {
    const t = makeTestApp();
    const w = fileWorld(t);
    const other = "40702810500000077777";
    const long =
      "Общество с ограниченной ответственностью «Очень длинное название поставщика строительных материалов»";
    const file = bankFile(w.number, "2026-11-02", "2026-11-03", {
      opsPerDay: 2,
      reshape: (text) => {
        // The first document's counterparty name split over three lines, as some banks write it.
        const first = text.indexOf("СекцияДокумент=");
        const end = text.indexOf("КонецДокумента", first);
        const block = text.slice(first, end);
        const side = block.includes(`ПлательщикСчет=${w.number}`) ? "Получатель" : "Плательщик";
        const inn = /ИНН=(\d+)/.exec(block.slice(block.indexOf(`${side}ИНН=`) - 1))?.[1] ?? "";
        const reshaped = block
          .replace(new RegExp(`${side}=[^\\r]*\\r\\n`), `${side}=ИНН ${inn} ${long}\r\n`)
          .replace(
            new RegExp(`${side}1=[^\\r]*\\r\\n`),
            `${side}1=${long.slice(0, 40)}\r\n${side}2=${long.slice(40, 80)}\r\n${side}3=${long.slice(80)}\r\n`,
          );
        // A second account's section and a document between two other accounts.
        const foreign =
          `СекцияДокумент=Платежное поручение\r\nНомер=9\r\nДата=02.11.2026\r\nСумма=10.00\r\n` +
          `ПлательщикСчет=${other}\r\nДатаСписано=02.11.2026\r\nПлательщикИНН=7707083893\r\n` +
          `ПолучательСчет=40702810800000012345\r\nПолучательИНН=7719617469\r\nКонецДокумента\r\n`;
        const section =
          `СекцияРасчСчет\r\nДатаНачала=02.11.2026\r\nДатаКонца=03.11.2026\r\nРасчСчет=${other}\r\n` +
          `НачальныйОстаток=0.00\r\nВсегоПоступило=0.00\r\nВсегоСписано=10.00\r\nКонечныйОстаток=-10.00\r\nКонецРасчСчет\r\n`;
        return (text.slice(0, first) + section + reshaped + text.slice(end)).replace(
          "КонецФайла",
          `${foreign}КонецФайла`,
        );
      },
    });
    const statement = await imported(t, w, "long", file);
    const stored = storedOperations(t, statement.statement_id);
    expect(stored).toHaveLength(file.operations.length);
    const firstOp = stored[0];
    const counterparty = firstOp?.direction === "debit" ? firstOp.payee : firstOp?.payer;
    expect(counterparty?.name).toBe(long);
    expect(stored.map((op) => op.direction)).toEqual(file.operations.map((op) => op.direction));
  });
});

describe("refused files store nothing", () => {
  async function refused(
    t: TestApp,
    w: ReturnType<typeof fileWorld>,
    bytes: Uint8Array,
    status: number,
    code: string,
  ) {
    const before = storedCounts(t);
    const details = await expectError(await importFile(t, w.token, w.accountId, "bad", bytes), status, code);
    expect(storedCounts(t)).toEqual(before);
    return details;
  }

  test("truncated: 400 validation_error with the line", async () => {
    const t = makeTestApp();
    const w = fileWorld(t);
    const { bytes } = bankFile(w.number, "2026-11-02", "2026-11-04");
    const details = await refused(
      t,
      w,
      bytes.subarray(0, Math.floor(bytes.length / 2)),
      400,
      "validation_error",
    );
    expect(details).toMatchObject({ field: "file" });
    expect(details.line).toBeGreaterThan(1);
  });

  test("a NUL character in a line: 400 validation_error with the line", async () => {
    const t = makeTestApp();
    const w = fileWorld(t);
    const { bytes } = bankFile(w.number, "2026-11-02", "2026-11-04");
    // The byte after the first line break (the second line) becomes 0x00.
    const broken = Uint8Array.from(bytes);
    broken[broken.indexOf(0x0a) + 1] = 0;
    const details = await refused(t, w, broken, 400, "validation_error");
    expect(details).toMatchObject({ field: "file", line: 2 });
  });

  test("another account's statement: 422 account_mismatch", async () => {
    const t = makeTestApp();
    const w = fileWorld(t);
    const { bytes } = bankFile("40702810500000077777", "2026-11-02", "2026-11-04");
    const details = await refused(t, w, bytes, 422, "account_mismatch");
    expect(details.accounts_in_file).toEqual(["4070************7777"]);
  });

  test("an encoding declared wrongly: 400 naming the Кодировка line", async () => {
    const t = makeTestApp();
    const w = fileWorld(t);
    const { bytes } = bankFile(w.number, "2026-11-02", "2026-11-04", {
      reshape: (text) => text.replace("Кодировка=Windows", "Кодировка=DOS"),
    });
    const details = await refused(t, w, bytes, 400, "validation_error");
    expect(details).toMatchObject({ field: "file", line: 3, key: "Кодировка" });
  });

  test("balances or turnovers that do not add up: 422 validation_error with the line", async () => {
    const t = makeTestApp();
    const w = fileWorld(t);
    for (const key of ["КонечныйОстаток", "ВсегоПоступило", "ВсегоСписано"]) {
      const { bytes } = bankFile(w.number, "2026-11-02", "2026-11-04", {
        reshape: (text) =>
          text.replace(new RegExp(`${key}=(\\d+)\\.(\\d\\d)`), (_, r, k) => `${key}=${Number(r) + 1}.${k}`),
      });
      const text = iconv.decode(Buffer.from(bytes), "win1251").split("\r\n");
      const details = await refused(t, w, bytes, 422, "validation_error");
      expect(details).toMatchObject({
        field: "file",
        line: text.findIndex((l) => l.startsWith(`${key}=`)) + 1,
      });
    }
  });

  test("50 MB + 1 byte: 413 payload_too_large", async () => {
    const t = makeTestApp();
    const w = fileWorld(t);
    const before = storedCounts(t);
    const res = await t.app.handle(
      importRequest(w.token, {
        bank_account_id: w.accountId,
        external_id: "big",
        file: new Uint8Array(50 * 1024 * 1024 + 1),
      }),
    );
    await expectError(res, 413, "payload_too_large");
    expect(storedCounts(t)).toEqual(before);
  });

  test("missing fields, a non-file account, a token without the right: the usual errors", async () => {
    const t = makeTestApp();
    const w = fileWorld(t);
    const { bytes } = bankFile(w.number, "2026-11-02", "2026-11-03");
    const send = (fields: Parameters<typeof importRequest>[1], token = w.token) =>
      t.app.handle(importRequest(token, fields));
    expect(
      (await expectError(await send({ external_id: "a", file: bytes }), 400, "validation_error")).field,
    ).toBe("bank_account_id");
    await expectError(
      await send({ bank_account_id: "not-a-uuid", external_id: "a", file: bytes }),
      400,
      "invalid request body",
    );
    expect(
      (await expectError(await send({ bank_account_id: w.accountId, file: bytes }), 400, "validation_error"))
        .field,
    ).toBe("external_id");
    expect(
      (
        await expectError(
          await send({ bank_account_id: w.accountId, external_id: "a" }),
          400,
          "validation_error",
        )
      ).field,
    ).toBe("file");

    const sandbox = t.fixtures.world();
    const details = await expectError(
      await send(
        { bank_account_id: sandbox.account.bank_account_id, external_id: "a", file: bytes },
        sandbox.token,
      ),
      400,
      "validation_error",
    );
    expect(details.field).toBe("bank_account_id");
    await expectError(
      await send({ bank_account_id: w.accountId, external_id: "a", file: bytes }, w.agent),
      403,
      "forbidden_purpose",
    );
    await expectError(
      await send({ bank_account_id: w.accountId, external_id: "a", file: bytes }, sandbox.token),
      403,
      "forbidden_company",
    );
    await expectError(
      await send({ bank_account_id: w.accountId, external_id: "a", file: bytes }, "svc_test_short"),
      401,
      "invalid_token_format",
    );
  });

  test("ordering a statement of a file account is 501 bank_not_supported", async () => {
    const t = makeTestApp();
    const w = fileWorld(t);
    const res = await t.request("POST", STATEMENTS, {
      token: w.token,
      body: {
        bank_account_id: w.accountId,
        external_id: "o",
        date_from: "2026-11-01",
        date_to: "2026-11-02",
      },
    });
    await expectError(res, 501, "bank_not_supported");
  });
});

describe("the admin pages' upload", () => {
  async function signedIn(t: TestApp) {
    const login = await t.app.handle(
      new Request(`${BASE}/admin/login`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", origin: BASE },
        body: new URLSearchParams({ token: ADMIN_TOKEN }).toString(),
      }),
    );
    const cookie = login.headers.get("set-cookie")?.split(";")[0] ?? "";
    const page = await (
      await t.app.handle(new Request(`${BASE}/admin/statements`, { headers: { cookie } }))
    ).text();
    const csrf = /name="_csrf" value="([^"]+)"/.exec(page)?.[1] ?? "";
    return { cookie, csrf, page };
  }

  function upload(t: TestApp, cookie: string, fields: Record<string, string>, file?: Uint8Array) {
    const form = new FormData();
    for (const [k, v] of Object.entries(fields)) form.append(k, v);
    if (file) form.append("file", new Blob([file as Uint8Array<ArrayBuffer>]), "kl_to_1c.txt");
    return t.app.handle(
      new Request(`${BASE}/admin/statements/import`, {
        method: "POST",
        headers: { cookie, origin: BASE },
        body: form,
      }),
    );
  }

  test("a signed-in operator uploads the bank's file; a forged form stores nothing", async () => {
    const t = makeTestApp();
    const w = fileWorld(t);
    const { cookie, csrf, page } = await signedIn(t);
    expect(page).toContain('action="/admin/statements/import"');
    expect(page).toContain('enctype="multipart/form-data"');
    const file = bankFile(w.number, "2026-11-02", "2026-11-05");

    const before = storedCounts(t);
    const forged = await upload(t, cookie, { bank_account_id: w.accountId }, file.bytes);
    expect(forged.status).toBe(403);
    expect(storedCounts(t)).toEqual(before);

    const done = await upload(t, cookie, { _csrf: csrf, bank_account_id: w.accountId }, file.bytes);
    expect(done.status).toBe(303);
    expect(done.headers.get("location")).toBe("/admin/statements");
    const listed = await (
      await t.app.handle(new Request(`${BASE}/admin/statements`, { headers: { cookie } }))
    ).text();
    expect(listed).toContain("Выписка загружена: 02.11.2026\u00A0— 05.11.2026");
    const [row] = t.services.statementRepo.list({ bankAccountIds: [w.accountId], limit: 5 });
    expect(row).toMatchObject({
      source: "import",
      status: "ready",
      operations_count: file.operations.length,
    });
    const audit = await json<{ entries: { action: string; target: string }[] }>(
      await t.admin("GET", "/audit-log?action=admin.statement.import"),
    );
    expect(audit.entries).toEqual([
      expect.objectContaining({ action: "admin.statement.import", target: row?.id }),
    ]);

    const wrong = bankFile("40702810500000077777", "2026-11-02", "2026-11-05");
    const refused = await upload(t, cookie, { _csrf: csrf, bank_account_id: w.accountId }, wrong.bytes);
    expect(refused.status).toBe(422);
    expect(await refused.text()).toContain("В файле нет выписки по этому счёту");
  });
});

describe("search folds ё into е", () => {
  test("счёт and счет find the same operations, whichever letter the bank wrote", async () => {
    const t = makeTestApp();
    const w = fileWorld(t);
    // Half the documents that say "счет" get "счёт" instead, as another bank would write it.
    let n = 0;
    const file = bankFile(w.number, "2026-11-02", "2026-11-12", {
      opsPerDay: 20,
      reshape: (text) => text.replace(/сч[её]т/g, (word) => (n++ % 2 === 0 ? "счёт" : word)),
    });
    await imported(t, w, "yo", file);
    expect(n).toBeGreaterThan(3);
    const session = await initSession(t, w.agent);
    const found = async (query: string) => {
      const r = await callTool(t, w.agent, session, "search_operations", {
        bank_account_id: w.accountId,
        date_from: "2026-11-02",
        date_to: "2026-11-12",
        query,
        limit: 100,
      });
      return (r.structuredContent.operations as { operation_id: string; purpose: string }[])
        .map((op) => op.operation_id)
        .sort();
    };
    const withYo = await found("счёт");
    expect(withYo.length).toBeGreaterThan(1);
    expect(await found("счет")).toEqual(withYo);
    expect(await found("СЧЁТ")).toEqual(withYo);
    // Both spellings are among them.
    const stored = storedOperations(
      t,
      (await t.services.statementRepo.list({ bankAccountIds: [w.accountId], limit: 1 }))[0]!.id,
    );
    expect(stored.some((op) => /счёт/.test(op.purpose))).toBe(true);
    expect(stored.some((op) => /счет/.test(op.purpose))).toBe(true);
  });
});
