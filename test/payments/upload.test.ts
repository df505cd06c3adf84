// lanes: sqlite postgres
// POST /api/v1/integration/payments/imports: the happy path (a generated file and a fixture as an
// accounting system writes it), file validation, 422 with nothing stored, 413 while streaming.
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { encodeCp1251 } from "../../src/formats/onec";
import { withAccountKey } from "../../src/formats/validators";
import { BASE, makeTestApp } from "../helpers/app";
import { expectError } from "../helpers/envelope";
import {
  bodyOf,
  expectNoBankSecrets,
  PAYEE_ACCOUNT,
  PAYEE_BIK,
  PAYEE_INN,
  paymentFile,
  paymentFileText,
  paymentTableCounts,
  recordResponses,
  upload,
} from "./support";

const FIXTURE = join(import.meta.dir, "..", "fixtures", "payment-orders-windows.txt");
const FIXTURE_ACCOUNT = "40702810838000004217";
const MB = 1024 * 1024;

interface ImportBody {
  import_id: string;
  bank_account_id: string;
  created_at: string;
  status: string;
  items: {
    item_id: string;
    status: string;
    doc_number: string;
    doc_date: string;
    amount: number;
    currency: string;
    purpose: string;
    payee: { name: string; inn: string; kpp: string; account_masked: string; bank_bik: string };
  }[];
}

function setup(opts: { bank?: string } = {}) {
  const t = makeTestApp();
  recordResponses(t);
  const w = t.fixtures.world({ send: true, bank: opts.bank });
  const accountNumber = t.services.accounts.findById(w.account.bank_account_id)!.accountNumber;
  return { t, ...w, accountId: w.account.bank_account_id, accountNumber };
}

describe("upload: accepted files", () => {
  test("a generated cp1251 file gives an import of draft items", async () => {
    const { t, token, accountId, accountNumber } = setup();
    const res = await upload(
      t,
      token,
      accountId,
      paymentFile(accountNumber, [
        { number: "101", amount: "1500.00" },
        { number: "102", amount: "0.01" },
      ]),
    );
    expect(res.status).toBe(201);
    expect(res.headers.get("x-ratelimit-limit")).toBeTruthy();
    const body = await bodyOf<ImportBody>(res);
    expect(body.bank_account_id).toBe(accountId);
    expect(body.status).toBe("uploaded");
    expect(body.created_at).toBe("2026-11-20T09:00:00.000Z");
    expect(body.items).toHaveLength(2);
    expect(body.items[0]).toEqual({
      item_id: expect.any(String),
      import_id: body.import_id,
      status: "draft",
      doc_number: "101",
      doc_date: "2026-11-19",
      amount: 1500,
      currency: "RUB",
      purpose: "Оплата по счёту № 101 за товары. НДС не облагается",
      payee: {
        name: "АО «Поставщик»",
        inn: PAYEE_INN,
        kpp: "773601001",
        account_masked: "4070************2345",
        bank_bik: PAYEE_BIK,
      },
    } as never);
    expect(body.items[0]!.payee.account_masked).not.toBe(PAYEE_ACCOUNT);
    expect(body.items[1]!.amount).toBe(0.01);
    expect(paymentTableCounts(t)).toEqual({ payment_imports: 1, payment_items: 2, payment_submissions: 0 });

    const get = await t.request("GET", `/api/v1/integration/payments/imports/${body.import_id}`, { token });
    expect(get.status).toBe(200);
    expect(await bodyOf(get)).toEqual(body as never);

    const audit = t.services.audit.query({ action: "payments.import.upload", limit: 10 });
    expect(audit.map((e) => [e.actor, e.target, e.outcome])).toEqual([["token", body.import_id, "created"]]);
  });

  test("the fixture written by an accounting system (cp1251, CRLF, two orders)", async () => {
    const t = makeTestApp();
    recordResponses(t);
    const company = t.fixtures.company();
    const account = t.services.admin.accounts.create({
      company_id: company.company_id,
      bank: "sandbox",
      account_number: FIXTURE_ACCOUNT,
      bik: "044525225",
    });
    const token = t.fixtures.token(company.company_id, {
      send: true,
      accounts: [{ bank_account_id: account.bank_account_id, allow_send_payments: true }],
    }).token;
    const bytes = new Uint8Array(readFileSync(FIXTURE));
    // The fixture really is what an accounting system writes: cp1251 (no UTF-8), CRLF line ends.
    expect(bytes.includes(0xd0)).toBe(true);
    expect(Buffer.from(bytes).toString("latin1")).toContain("\r\n");
    expect(() => new TextDecoder("utf-8", { fatal: true }).decode(bytes)).toThrow();

    const res = await upload(t, token, account.bank_account_id, bytes);
    expect(res.status).toBe(201);
    const body = await bodyOf<ImportBody>(res);
    expect(
      body.items.map((i) => [
        i.doc_number,
        i.amount,
        i.payee.name,
        i.payee.inn,
        i.payee.kpp,
        i.payee.bank_bik,
      ]),
    ).toEqual([
      ["412", 148500, "АО «Поставщик»", "7707083893", "773601001", "044525593"],
      ["413", 32000.5, "ИП Иванов Иван Иванович", "500100732259", "", "044525974"],
    ]);
    expect(body.items[0]!.purpose).toContain("канцелярские товары");
    expect(body.items[1]!.purpose).toBe(
      "Оплата по договору оказания услуг № 18/26 от 01.02.2026\nза октябрь 2026 г. Без налога (НДС)",
    );
  });

  test("a cp866 file (Кодировка=DOS) is read as cp866", async () => {
    const { t, token, accountId, accountNumber } = setup();
    const iconv = await import("iconv-lite");
    const bytes = iconv.encode(paymentFileText(accountNumber, [{}], "DOS"), "cp866");
    const res = await upload(t, token, accountId, bytes);
    expect(res.status).toBe(201);
    // cp866 has no guillemets or №; the Cyrillic text must still read back.
    const item = (await bodyOf<ImportBody>(res)).items[0]!;
    expect(item.purpose).toContain("Оплата по счёту");
    expect(item.payee.inn).toBe(PAYEE_INN);
  });
});

describe("upload: refused files", () => {
  test("a payer account other than the request's is 422 and nothing is stored", async () => {
    const { t, token, accountId, accountNumber } = setup();
    const other = withAccountKey("40702810000000099999", "044525225");
    const res = await upload(t, token, accountId, paymentFile(accountNumber, [{}, { payerAccount: other }]));
    const details = await expectError(res, 422, "account_mismatch");
    expect(details.field).toBe("ПлательщикСчет");
    expect(typeof details.line).toBe("number");
    expect(paymentTableCounts(t)).toEqual({ payment_imports: 0, payment_items: 0, payment_submissions: 0 });
  });

  test("a header РасчСчет of another account is 422 too", async () => {
    const { t, token, accountId, accountNumber } = setup();
    const other = withAccountKey("40702810000000099999", "044525225");
    const text = paymentFileText(accountNumber).replace(`РасчСчет=${accountNumber}`, `РасчСчет=${other}`);
    const details = await expectError(
      await upload(t, token, accountId, encodeCp1251(text)),
      422,
      "account_mismatch",
    );
    expect(details).toMatchObject({ field: "РасчСчет", line: 9 });
    expect(paymentTableCounts(t).payment_imports).toBe(0);
  });

  test("a garbage file is 400 with details.line", async () => {
    const { t, token, accountId } = setup();
    const garbage = new Uint8Array(4096).map((_, i) => (i * 7919) % 251);
    const details = await expectError(await upload(t, token, accountId, garbage), 400, "validation_error");
    expect(details.line).toBe(1);
    expect(paymentTableCounts(t).payment_imports).toBe(0);
  });

  test("a broken structure reports its line", async () => {
    const { t, token, accountId, accountNumber } = setup();
    const text = paymentFileText(accountNumber).replace(
      "КонецДокумента\r\n",
      "this is not a key value line\r\n",
    );
    const details = await expectError(
      await upload(t, token, accountId, encodeCp1251(text)),
      400,
      "validation_error",
    );
    expect(details.line).toBeGreaterThan(10);
  });

  test("a missing required field is 400 with details.line and details.field", async () => {
    const { t, token, accountId, accountNumber } = setup();
    for (const key of ["ПолучательБанк2", "ВидОплаты", "ПлательщикКорсчет", "Получатель1", "Номер"]) {
      const file = paymentFile(accountNumber, [{}, { number: "7", omit: [key] }]);
      const details = await expectError(await upload(t, token, accountId, file), 400, "validation_error");
      // The second document starts after the 10 header lines and the first block (28 lines).
      expect(details).toEqual({ field: key, line: 39 });
    }
    expect(paymentTableCounts(t).payment_imports).toBe(0);
  });

  test("an empty required field is reported at its own line", async () => {
    const { t, token, accountId, accountNumber } = setup();
    const text = paymentFileText(accountNumber, [{ set: { ПолучательИНН: "" } }]);
    const line = text.split("\r\n").indexOf("ПолучательИНН=") + 1;
    const details = await expectError(
      await upload(t, token, accountId, encodeCp1251(text)),
      400,
      "validation_error",
    );
    expect(details).toEqual({ field: "ПолучательИНН", line });
  });

  const badValues: [string, Record<string, string>][] = [
    ["ПолучательИНН", { ПолучательИНН: "7707083894" }],
    ["ПлательщикИНН", { ПлательщикИНН: "7719617460" }],
    ["ПолучательИНН", { ПолучательИНН: "500100732250" }],
    ["ПолучательСчет", { ПолучательСчет: "40702810901300012345" }],
    ["ПолучательСчет", { ПолучательСчет: "4070281080130001234" }],
    ["ПолучательБИК", { ПолучательБИК: "04452559" }],
    ["Сумма", { Сумма: "0.00" }],
    ["Сумма", { Сумма: "-5.00" }],
    ["Сумма", { Сумма: "12,345.00" }],
    ["Дата", { Дата: "31.02.2026" }],
    ["Дата", { Дата: "2026-11-19" }],
    ["ПолучательКПП", { ПолучательКПП: "77360100" }],
  ];
  for (const [field, set] of badValues) {
    test(`bad ${field} (${Object.values(set)[0]}) is 400`, async () => {
      const { t, token, accountId, accountNumber } = setup();
      const text = paymentFileText(accountNumber, [{ set }]);
      const line = text.split("\r\n").indexOf(`${field}=${set[field]}`) + 1;
      const details = await expectError(
        await upload(t, token, accountId, encodeCp1251(text)),
        400,
        "validation_error",
      );
      expect(details).toEqual({ field, line });
    });
  }

  test("a file without documents is 400", async () => {
    const { t, token, accountId, accountNumber } = setup();
    const details = await expectError(
      await upload(t, token, accountId, paymentFile(accountNumber, [])),
      400,
      "validation_error",
    );
    expect(typeof details.line).toBe("number");
  });
});

describe("upload: the request", () => {
  test("missing bank_account_id or file is 400 validation_error; a malformed uuid is invalid request body", async () => {
    const { t, token, accountId, accountNumber } = setup();
    const file = paymentFile(accountNumber);
    expect((await expectError(await upload(t, token, null, file), 400, "validation_error")).field).toBe(
      "bank_account_id",
    );
    expect((await expectError(await upload(t, token, accountId, null), 400, "validation_error")).field).toBe(
      "file",
    );
    await expectError(await upload(t, token, "not-a-uuid", file), 400, "invalid request body");
    await expectError(await upload(t, token, "not-a-uuid", null), 400, "invalid request body");
  });

  test("a JSON body is 415 unsupported_media_type, before it is read (decisions §20)", async () => {
    const { t, token, accountId } = setup();
    const res = await t.request("POST", "/api/v1/integration/payments/imports", {
      token,
      body: { bank_account_id: accountId },
    });
    const details = await expectError(res, 415, "unsupported_media_type");
    expect(details.expected).toBe("multipart/form-data");
  });

  test("a malformed multipart body is invalid request body", async () => {
    const { t, token } = setup();
    const res = await t.app.handle(
      new Request(`${BASE}/api/v1/integration/payments/imports`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "multipart/form-data; boundary=XYZ" },
        body: '--XYZ\r\nContent-Disposition: form-data; name="file"; filename="a"\r\n\r\nabc',
      }),
    );
    await expectError(res, 400, "invalid request body");
  });

  test("auth runs before the body; account checks before file validation", async () => {
    const { t, token, accountNumber } = setup();
    // No token: 401 even for a broken body.
    await expectError(await upload(t, null, "x", null), 401, "invalid_token_format");
    // Unknown account with a broken file: 404 first.
    await expectError(
      await upload(t, token, "00000000-0000-4000-8000-000000000000", new Uint8Array([1, 2, 3])),
      404,
      "not_found",
    );
    // Mismatched payer in a file that is also invalid: 400 first (validation before 422).
    const other = withAccountKey("40702810000000099999", "044525225");
    const text = paymentFileText(accountNumber, [{ payerAccount: other, set: { Сумма: "0" } }]);
    const w = t.fixtures.world({ send: true });
    await expectError(
      await upload(t, w.token, w.account.bank_account_id, encodeCp1251(text)),
      400,
      "validation_error",
    );
  });
});

describe("upload: 10 MB limit", () => {
  const tooBig = () => {
    const bytes = new Uint8Array(11 * MB);
    bytes.fill(0x41);
    return bytes;
  };

  test("Content-Length over 10 MB is 413 before the body is read", async () => {
    const { t, token, accountId } = setup();
    const file = tooBig();
    const res = await upload(t, token, accountId, file);
    const details = await expectError(res, 413, "payload_too_large");
    expect(details.limit_bytes).toBe(10 * MB);

    // With the length announced, the refusal comes before a single byte is pulled.
    let pulled = 0;
    const stream = new ReadableStream<Uint8Array>(
      {
        pull(controller) {
          pulled += file.byteLength;
          controller.enqueue(file);
          controller.close();
        },
      },
      { highWaterMark: 0 },
    );
    const req = new Request(`${BASE}/api/v1/integration/payments/imports`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${token}`,
        "content-type": "multipart/form-data; boundary=x",
        "content-length": String(file.byteLength),
      },
      body: stream,
      duplex: "half",
    } as RequestInit);
    expect(req.headers.get("content-length")).toBe(String(11 * MB));
    await expectError(await t.app.handle(req), 413, "payload_too_large");
    expect(pulled).toBe(0);
    expect(paymentTableCounts(t).payment_imports).toBe(0);
  });

  test("a streamed body without Content-Length is cut at 10 MB while reading", async () => {
    const { t, token, accountId } = setup();
    const boundary = "----svc-test-boundary";
    const head = new TextEncoder().encode(
      `--${boundary}\r\nContent-Disposition: form-data; name="bank_account_id"\r\n\r\n${accountId}\r\n` +
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.txt"\r\n` +
        "Content-Type: text/plain\r\n\r\n",
    );
    const chunk = new Uint8Array(256 * 1024).fill(0x41);
    let sent = 0;
    let pulls = 0;
    const total = 11 * MB;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulls += 1;
        if (sent === 0) {
          controller.enqueue(head);
          sent += head.byteLength;
          return;
        }
        if (sent >= total) {
          controller.enqueue(new TextEncoder().encode(`\r\n--${boundary}--\r\n`));
          controller.close();
          return;
        }
        controller.enqueue(chunk);
        sent += chunk.byteLength;
      },
    });
    const req = new Request(`${BASE}/api/v1/integration/payments/imports`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${token}`,
        "content-type": `multipart/form-data; boundary=${boundary}`,
      },
      body: stream,
      duplex: "half",
    } as RequestInit);
    expect(req.headers.get("content-length")).toBeNull();
    const res = await t.app.handle(req);
    await expectError(res, 413, "payload_too_large");
    // Reading stopped at the limit: the rest of the 11 MB was never pulled.
    expect(sent).toBeLessThanOrEqual(10 * MB + chunk.byteLength + head.byteLength);
    expect(pulls).toBeGreaterThan(1);
    expect(paymentTableCounts(t).payment_imports).toBe(0);
  });

  test("a file just under the limit is read (and then judged on its content)", async () => {
    const { t, token, accountId, accountNumber } = setup();
    const text = paymentFileText(accountNumber);
    // Pad the file with blank lines (the reader skips them) to about 9.5 MB.
    const padded = text.replace("КонецФайла\r\n", `${"\r\n".repeat(Math.floor(4.75 * MB))}КонецФайла\r\n`);
    const res = await upload(t, token, accountId, encodeCp1251(padded));
    expect(res.status).toBe(201);
  });
});

// The authentication matrix of the payment routes: test/http/auth-matrix.test.ts.
test("a sandbox-only (test) token cannot pay from a live bank's account", async () => {
  const t = makeTestApp();
  const company = t.fixtures.company("ООО Живой", "7719617469");
  t.services.banks.register({ ...t.services.banks.get("sandbox"), bank: "livebank" } as never);
  const live = t.fixtures.account(company.company_id, "livebank");
  const token = t.fixtures.token(company.company_id, { send: true, mode: "test" });
  // The admin side refuses such an allow (decisions §19); one stored before it did is refused here.
  t.services.tokens.update(token.api_token_id, {}, [
    { bankAccountId: live.bank_account_id, allowReadStatements: false, allowSendPayments: true },
  ]);
  const number = t.services.accounts.findById(live.bank_account_id)!.accountNumber;
  const details = await expectError(
    await upload(t, token.token, live.bank_account_id, paymentFile(number)),
    403,
    "forbidden_account",
  );
  expect(details).toEqual({ reason: "test_token" });
});

test("no response of this file carries a bank reference or signing URL", async () => {
  const { seenBodies } = await import("./support");
  for (const text of seenBodies) expectNoBankSecrets(text);
});

test("the OpenAPI document lists every payment route with its error codes", async () => {
  const t = makeTestApp();
  const doc = (await (await t.request("GET", "/docs/json")).json()) as {
    paths: Record<string, Record<string, { responses: Record<string, { description: string }> }>>;
  };
  const upload = doc.paths["/api/v1/integration/payments/imports"]?.post;
  expect(upload?.responses["413"]?.description).toContain("payload_too_large");
  expect(upload?.responses["422"]?.description).toContain("account_mismatch");
  expect(upload?.responses["403"]?.description).toContain("forbidden_account");
  const submit = doc.paths["/api/v1/integration/payments/imports/{import_id}/submit"]?.post;
  expect(submit?.responses["409"]?.description).toContain("conflict");
  const item = doc.paths["/api/v1/integration/payments/imports/{import_id}/items/{item_id}/submit"]?.post;
  expect(item?.responses["409"]?.description).toContain("conflict");
  const get = doc.paths["/api/v1/integration/payments/imports/{import_id}"]?.get;
  expect(get?.responses["404"]?.description).toContain("not_found");
});
