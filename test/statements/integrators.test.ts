// lanes: sqlite postgres
// What an integration sees and leaves behind (decisions §19 and the integrators' answers): its
// statement orders, imports and downloads in the audit log (numbers masked); unknown body fields
// refused; the csv's operation_id on request; answers that say what to do next.
import { describe, expect, test } from "bun:test";
import iconv from "iconv-lite";
import { maskAccountNumber } from "../../src/formats/mask";
import { signIn } from "../helpers/admin-browser";
import { json, makeTestApp, type TestApp } from "../helpers/app";
import { expectError } from "../helpers/envelope";
import { mcpCall } from "../oauth/support";
import { bankFile, importFile } from "./import-support";

const PATH = "/api/v1/integration/statements";

async function ready(t: TestApp) {
  await t.services.poller.idle();
  await t.services.poller.tick();
  await t.services.poller.idle();
}

interface Entry {
  action: string;
  actor: string;
  api_token_id: string | null;
  target: string | null;
  outcome: string;
  arguments: Record<string, unknown> | null;
}

async function auditOf(t: TestApp, action: string): Promise<Entry[]> {
  const page = await json<{ entries: Entry[] }>(await t.admin("GET", `/audit-log?action=${action}`));
  return page.entries;
}

function fileWorld(t: TestApp) {
  const company = t.fixtures.company();
  const account = t.fixtures.account(company.company_id, "file");
  const token = t.fixtures.token(company.company_id, {
    mode: "live",
    accounts: [{ bank_account_id: account.bank_account_id, allow_read_statements: true }],
  });
  const number = t.services.accounts.findById(account.bank_account_id)?.accountNumber as string;
  return { accountId: account.bank_account_id, token, number };
}

describe("the audit of integration actions", () => {
  test("statement.order, statement.export (with the format, the number masked) and refusals", async () => {
    const t = makeTestApp();
    const w = t.fixtures.world();
    const body = {
      bank_account_id: w.account.bank_account_id,
      external_id: "a-1",
      date_from: "2026-11-01",
      date_to: "2026-11-02",
    };
    const created = await json<{ statement_id: string }>(
      await t.request("POST", PATH, { token: w.token, body }),
    );
    await t.request("POST", PATH, { token: w.token, body });
    await t.request("POST", PATH, {
      token: w.token,
      body: { ...body, external_id: "a-2", date_to: "2030-01-01" },
    });
    const orders = await auditOf(t, "statement.order");
    expect(orders.map((e) => e.outcome).sort()).toEqual(["created", "repeat", "validation_error"]);
    expect(orders.find((e) => e.outcome === "created")).toMatchObject({
      actor: "token",
      api_token_id: w.tokenId,
      target: created.statement_id,
      arguments: { bank_account_id: w.account.bank_account_id, external_id: "a-1" },
    });

    await ready(t);
    const number = t.services.accounts.findById(w.account.bank_account_id)!.accountNumber;
    const res = await t.request("GET", `${PATH}/${created.statement_id}/export?format=csv`, {
      token: w.token,
    });
    expect(res.status).toBe(200);
    expect(await res.text()).toContain("doc_date");
    const [exported] = await auditOf(t, "statement.export");
    expect(exported).toMatchObject({
      actor: "token",
      target: created.statement_id,
      outcome: "ok",
      arguments: { format: "csv", account_masked: maskAccountNumber(number) },
    });
    // No full account number anywhere in the audit log.
    const all = JSON.stringify(await json(await t.admin("GET", "/audit-log?limit=500")));
    expect(all).not.toContain(number);
  });

  test("statement.import by a token; the admin page's download as admin.statement.export", async () => {
    const t = makeTestApp();
    const w = fileWorld(t);
    const file = bankFile(w.number, "2026-11-02", "2026-11-05");
    const res = await importFile(t, w.token.token, w.accountId, "imp-1", file.bytes);
    expect(res.status).toBe(201);
    const { statement_id } = await json<{ statement_id: string }>(res);
    const [imported] = await auditOf(t, "statement.import");
    expect(imported).toMatchObject({
      actor: "token",
      api_token_id: w.token.api_token_id,
      target: statement_id,
      outcome: "created",
      arguments: { bank_account_id: w.accountId, external_id: "imp-1", bytes: file.bytes.byteLength },
    });
    const browser = await signIn(t);
    const download = await browser.get(`/admin/statements/${statement_id}/export?format=1c`);
    expect(download.status).toBe(200);
    await download.arrayBuffer();
    const [byOperator] = await auditOf(t, "admin.statement.export");
    expect(byOperator).toMatchObject({
      actor: "admin",
      target: statement_id,
      arguments: { format: "1c", account_masked: maskAccountNumber(w.number) },
    });
    expect(JSON.stringify(byOperator)).not.toContain(w.number);
  });
});

describe("integrators", () => {
  test("an unknown body field is 400 validation_error naming it, as the OpenAPI document says", async () => {
    const t = makeTestApp();
    const w = t.fixtures.world();
    const doc = (await (await t.request("GET", "/docs/json")).json()) as {
      paths: Record<string, { post: { requestBody: { content: Record<string, { schema: object }> } } }>;
    };
    expect(doc.paths[PATH]?.post.requestBody.content["application/json"]?.schema).toMatchObject({
      additionalProperties: false,
    });
    const body = {
      bank_account_id: w.account.bank_account_id,
      external_id: "u-1",
      date_from: "2026-11-01",
      date_to: "2026-11-02",
      date_too: "2026-11-03",
    };
    const details = await expectError(
      await t.request("POST", PATH, { token: w.token, body }),
      400,
      "validation_error",
    );
    expect(details).toEqual({ field: "date_too" });
    expect(t.services.statementRepo.list({ bankAccountIds: [w.account.bank_account_id], limit: 5 })).toEqual(
      [],
    );
    // The admin API too, nested fields included.
    const company = t.fixtures.company("ООО Б", "7707083893");
    const nested = await expectError(
      await t.admin("POST", "/tokens", {
        company_id: company.company_id,
        name: "x",
        purpose: "integration",
        accounts: [{ bank_account_id: w.account.bank_account_id, allow_read: true }],
      }),
      400,
      "validation_error",
    );
    expect(nested).toEqual({ field: "accounts[0].allow_read" });
  });

  test("the csv keeps the specification's 12 columns; operation_id=1 adds operation_id last", async () => {
    const t = makeTestApp();
    const w = t.fixtures.world();
    const created = await json<{ statement_id: string }>(
      await t.request("POST", PATH, {
        token: w.token,
        body: {
          bank_account_id: w.account.bank_account_id,
          external_id: "c",
          date_from: "2026-11-02",
          date_to: "2026-11-03",
        },
      }),
    );
    await ready(t);
    const csv = (query: string) =>
      t.request("GET", `${PATH}/${created.statement_id}/export?format=csv${query}`, { token: w.token });
    const plain = (await (await csv("")).text()).split("\r\n");
    expect(plain[0]!.split(",")).toHaveLength(12);
    expect(plain[0]).not.toContain("operation_id");
    const withIds = (await (await csv("&operation_id=1")).text()).split("\r\n");
    expect(withIds[0]).toBe(`${plain[0]},operation_id`);
    const ops = (
      await json<{ operations: { operation_id: string }[] }>(
        await t.request("GET", `${PATH}/${created.statement_id}/export?format=json`, { token: w.token }),
      )
    ).operations;
    expect(ops.length).toBeGreaterThan(0);
    expect(withIds[1]!.endsWith(`,${ops[0]!.operation_id}`)).toBe(true);
    expect(withIds[1]!.startsWith(plain[1]!)).toBe(true);
    await expectError(
      await t.request("GET", `${PATH}/${created.statement_id}/export?format=json&operation_id=1`, {
        token: w.token,
      }),
      400,
      "validation_error",
    );
  });

  test("a failed statement's answer tells an external_id client to order under a new external_id", async () => {
    const t = makeTestApp();
    const w = t.fixtures.world({ bank: "sandbox_failing" });
    const body = {
      bank_account_id: w.account.bank_account_id,
      external_id: "f-1",
      date_from: "2026-11-01",
      date_to: "2026-11-02",
    };
    const created = await json<{ statement_id: string }>(
      await t.request("POST", PATH, { token: w.token, body }),
    );
    await ready(t);
    const res = await t.request("GET", `${PATH}/${created.statement_id}/export?format=json`, {
      token: w.token,
    });
    const text = await res.clone().text();
    await expectError(res, 409, "not_ready");
    expect(text).toContain("другим external_id");
    expect(text).not.toContain("Закажите выписку заново");
  });

  test("ordering on a file account points to the import; a period over 31 days to the pieces", async () => {
    const t = makeTestApp();
    const w = fileWorld(t);
    const res = await t.request("POST", PATH, {
      token: w.token.token,
      body: {
        bank_account_id: w.accountId,
        external_id: "o",
        date_from: "2026-11-01",
        date_to: "2026-11-02",
      },
    });
    const text = await res.clone().text();
    const details = await expectError(res, 501, "bank_not_supported");
    expect(details).toMatchObject({ bank: "file", import: `${PATH}/import` });
    expect(text).toContain(`${PATH}/import`);
    const long = await t.request("POST", PATH, {
      token: w.token.token,
      body: {
        bank_account_id: w.accountId,
        external_id: "l",
        date_from: "2026-09-01",
        date_to: "2026-11-02",
      },
    });
    expect(await long.text()).toContain("docs/api.md");
  });

  test("a static token at /mcp is told to use /api/v1/mcp", async () => {
    const t = makeTestApp();
    const w = t.fixtures.world({ purpose: "mcp" });
    const res = await mcpCall(t, w.token);
    const text = await res.clone().text();
    const details = await expectError(res, 401, "invalid_token");
    expect(details).toMatchObject({ reason: "static_token", use: "/api/v1/mcp" });
    expect(text).toContain("/api/v1/mcp");
  });

  test("a 1C file saved as UTF-8 is refused with a Russian message saying so", async () => {
    const t = makeTestApp();
    const w = fileWorld(t);
    const cp1251 = bankFile(w.number, "2026-11-02", "2026-11-05").bytes;
    const utf8 = new TextEncoder().encode(iconv.decode(Buffer.from(cp1251), "win1251"));
    const res = await importFile(t, w.token.token, w.accountId, "u8", utf8);
    const text = await res.clone().text();
    const details = await expectError(res, 400, "validation_error");
    expect(details).toMatchObject({ field: "file", line: 1 });
    expect(text).toContain("UTF-8");
    expect(text).toContain("Windows-1251");
  });
});
