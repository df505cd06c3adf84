// lanes: sqlite postgres
import { describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import type { AuditEntry } from "../../src/audit/audit-log";
import { SecretBox } from "../../src/auth/secret-box";
import { ApiError } from "../../src/core/errors";
import { withAccountKey } from "../../src/formats/validators";
import { ADMIN_TOKEN, json, makeTestApp, type TestApp } from "../helpers/app";
import { expectError } from "../helpers/envelope";

const INN = "7719617469";
const INN2 = "7707083893";
const BIK = "044525225";
const NOW = "2026-11-20T09:00:00.000Z";
const TOKEN_RE = /^svc_(live|test)_[0-9A-Za-z]{40}$/;
const TEST_KEY = Buffer.alloc(32, 7);

let n = 0;
function accountNumber(): string {
  n += 1;
  return withAccountKey(`40702810${String(900_000 + n).padStart(12, "0")}`, BIK);
}

interface CompanyBody {
  company_id: string;
  name: string;
  inn: string;
  kpp: string | null;
  created_at: string;
}
interface AccountBody {
  bank_account_id: string;
  company_id: string;
  bank: string;
  alias: string;
  account_number_masked: string;
  bik: string;
  currency: string;
  created_at: string;
}
interface TokenBody {
  api_token_id: string;
  name: string;
  purpose: string;
  mode: string;
  token_prefix: string;
  scopes: { read_statements: boolean; send_payments: boolean };
  accounts: { bank_account_id: string; allow_read_statements: boolean; allow_send_payments: boolean }[];
  allowed_ips: string[];
  rate_limit_per_minute: number;
  expires_at: string | null;
  revoked_at: string | null;
  created_at: string;
  last_used_at: string | null;
  token?: string;
}

async function company(t: TestApp, name = "ООО Ромашка", inn = INN): Promise<CompanyBody> {
  const res = await t.admin("POST", "/companies", { name, inn });
  expect(res.status).toBe(201);
  return json<CompanyBody>(res);
}

async function account(
  t: TestApp,
  companyId: string,
  extra: Record<string, unknown> = {},
): Promise<AccountBody> {
  const res = await t.admin("POST", "/bank-accounts", {
    company_id: companyId,
    bank: "sandbox",
    account_number: accountNumber(),
    bik: BIK,
    ...extra,
  });
  expect(res.status).toBe(201);
  return json<AccountBody>(res);
}

async function token(t: TestApp, body: Record<string, unknown>): Promise<TokenBody> {
  const res = await t.admin("POST", "/tokens", { name: "t", purpose: "integration", ...body });
  if (res.status !== 201) throw new Error(`token create: ${res.status} ${await res.text()}`);
  return json<TokenBody>(res);
}

async function settleLogs(): Promise<void> {
  for (let i = 0; i < 10; i++) await new Promise((r) => setImmediate(r));
}

describe("companies", () => {
  test("create is 201 with {company_id, name, inn, kpp, created_at}; list returns it", async () => {
    const t = makeTestApp();
    const res = await t.admin("POST", "/companies", { name: "  ООО Ромашка ", inn: INN, kpp: "771901001" });
    expect(res.status).toBe(201);
    const body = await json<CompanyBody>(res);
    expect(body).toEqual({
      company_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      name: "ООО Ромашка",
      inn: INN,
      kpp: "771901001",
      created_at: NOW,
    });
    t.clock.advance(1000);
    const noKpp = await company(t, "ИП Иванов", "500100732259");
    expect(noKpp.kpp).toBeNull();

    const list = await t.admin("GET", "/companies");
    expect(list.status).toBe(200);
    expect(await list.json()).toEqual({ companies: [body, noKpp] });
  });

  test("a bad INN checksum, a bad KPP or an empty name is 400 validation_error naming the field", async () => {
    const t = makeTestApp();
    const cases: [Record<string, unknown>, string][] = [
      [{ name: "X", inn: "7719617468" }, "inn"],
      [{ name: "X", inn: "771961746" }, "inn"],
      [{ name: "X", inn: "77196174699" }, "inn"],
      [{ name: "X", inn: INN, kpp: "12" }, "kpp"],
      [{ name: "   ", inn: INN }, "name"],
    ];
    for (const [body, field] of cases) {
      const details = await expectError(await t.admin("POST", "/companies", body), 400, "validation_error");
      expect(details.field).toBe(field);
    }
    expect(await json(await t.admin("GET", "/companies"))).toEqual({ companies: [] });
  });
});

describe("bank accounts", () => {
  test("create is 201 with the masked number and the default alias; list filters by company", async () => {
    const t = makeTestApp();
    const a = await company(t);
    const b = await company(t, "ООО Вторая", INN2);
    const number = accountNumber();
    const res = await t.admin("POST", "/bank-accounts", {
      company_id: a.company_id,
      bank: "sandbox",
      account_number: number,
      bik: BIK,
    });
    expect(res.status).toBe(201);
    const text = await res.text();
    expect(text).not.toContain(number);
    const created = JSON.parse(text) as AccountBody;
    expect(created).toMatchObject({
      company_id: a.company_id,
      bank: "sandbox",
      alias: number.slice(-4),
      account_number_masked: `${number.slice(0, 4)}************${number.slice(-4)}`,
      bik: BIK,
      currency: "RUB",
      created_at: NOW,
    });
    t.clock.advance(1000);
    const other = await account(t, b.company_id, { alias: "Main_1-x", bank: "sandbox_failing" });
    expect(other.alias).toBe("Main_1-x");

    const all = await json<{ bank_accounts: AccountBody[] }>(await t.admin("GET", "/bank-accounts"));
    expect(all.bank_accounts.map((x) => x.bank_account_id)).toEqual([
      created.bank_account_id,
      other.bank_account_id,
    ]);
    const onlyA = await json<{ bank_accounts: AccountBody[] }>(
      await t.admin("GET", `/bank-accounts?company_id=${a.company_id}`),
    );
    expect(onlyA.bank_accounts).toEqual([created]);
  });

  test("bad requisites are 400 validation_error naming the field", async () => {
    const t = makeTestApp();
    const c = await company(t);
    const base = { company_id: c.company_id, bank: "sandbox", account_number: accountNumber(), bik: BIK };
    const cases: [Record<string, unknown>, string][] = [
      [{ account_number: "4070281000000000000" }, "account_number"], // 19 digits
      [{ account_number: "407028100000000000011" }, "account_number"], // 21 digits
      [{ account_number: "4070281000000000000a" }, "account_number"],
      [{ bik: "04452522" }, "bik"], // 8 digits
      [{ bik: "0445252251" }, "bik"],
      [{ bank: "sberbank" }, "bank"],
      [{ alias: "bad alias" }, "alias"],
      [{ alias: "a".repeat(33) }, "alias"],
      [{ alias: "" }, "alias"],
      [{ alias: "счёт" }, "alias"],
      [{ currency: "rub" }, "currency"],
    ];
    for (const [patch, field] of cases) {
      const res = await t.admin("POST", "/bank-accounts", { ...base, ...patch });
      const details = await expectError(res, 400, "validation_error");
      expect({ patch, field: details.field }).toEqual({ patch, field });
    }
    // A 32-character alias is fine.
    await account(t, c.company_id, { alias: "a".repeat(32) });
    expect(
      (await json<{ bank_accounts: unknown[] }>(await t.admin("GET", "/bank-accounts"))).bank_accounts,
    ).toHaveLength(1);
  });

  test("an unknown company is 404 not_found", async () => {
    const t = makeTestApp();
    const res = await t.admin("POST", "/bank-accounts", {
      company_id: crypto.randomUUID(),
      bank: "sandbox",
      account_number: accountNumber(),
      bik: BIK,
    });
    await expectError(res, 404, "not_found");
  });

  test("credentials are stored encrypted and returned by no endpoint, logged nowhere", async () => {
    const t = makeTestApp();
    const c = await company(t);
    const sentinel = "SENTINEL-CRED-123";
    const password = "PASSWORD-SENTINEL-456";
    const res = await t.admin("POST", "/bank-accounts", {
      company_id: c.company_id,
      bank: "sandbox",
      account_number: accountNumber(),
      bik: BIK,
      credentials: { login: sentinel, password },
    });
    expect(res.status).toBe(201);
    const createText = await res.text();
    const created = JSON.parse(createText) as AccountBody;
    const texts = [
      createText,
      await (await t.admin("GET", "/bank-accounts")).text(),
      await (await t.admin("GET", `/bank-accounts?company_id=${c.company_id}`)).text(),
      await (await t.admin("GET", "/audit-log")).text(),
      await (await t.admin("GET", "/companies")).text(),
    ];
    await settleLogs();
    expect(t.logs.length).toBeGreaterThan(0);
    for (const text of [...texts, ...t.logs]) {
      expect(text).not.toContain(sentinel);
      expect(text).not.toContain(password);
      expect(text).not.toContain("credentials_enc");
    }

    // The account reaches its login through its connection; only the connection holds it, sealed.
    const row = t.db
      .query<{ c: Uint8Array | null }, [string]>(
        `SELECT c.credentials_enc AS c FROM bank_accounts a JOIN bank_connections c ON c.id = a.connection_id
          WHERE a.id = ?`,
      )
      .get(created.bank_account_id);
    expect(row?.c).toBeInstanceOf(Uint8Array);
    const raw = Buffer.from(row!.c!);
    expect(raw.includes(sentinel)).toBe(false);
    expect(raw.includes(password)).toBe(false);
    // It is the sealed login, under the configured key.
    expect(JSON.parse(new SecretBox(new Uint8Array(TEST_KEY)).open(raw))).toEqual({
      login: sentinel,
      password,
    });
    // No column of either table holds it in clear either.
    for (const table of ["bank_accounts", "bank_connections"]) {
      const dump = JSON.stringify(t.db.query(`SELECT * FROM ${table}`).all(), (_k, v) =>
        v instanceof Uint8Array ? Buffer.from(v).toString("latin1") : v,
      );
      expect(dump).not.toContain(sentinel);
    }
  });

  test("credentials without SVC_SECRET_KEY cannot be stored (400 validation_error)", async () => {
    const t = makeTestApp({ SVC_SECRET_KEY: "" });
    const c = await company(t);
    const res = await t.admin("POST", "/bank-accounts", {
      company_id: c.company_id,
      bank: "sandbox",
      account_number: accountNumber(),
      bik: BIK,
      credentials: { login: "x" },
    });
    const details = await expectError(res, 400, "validation_error");
    expect(details.field).toBe("credentials");
  });
});

describe("admin authentication", () => {
  test("SVC_ADMIN_TOKEN empty means unset: the admin API answers 404 everywhere", async () => {
    const t = makeTestApp({ SVC_ADMIN_TOKEN: "" });
    expect(t.services.config.adminToken).toBeNull();
    const calls: [string, string, unknown?][] = [
      ["GET", "/companies"],
      ["POST", "/companies", { name: "X", inn: INN }],
      ["GET", "/bank-accounts"],
      ["GET", "/tokens"],
      ["POST", "/tokens", { company_id: crypto.randomUUID(), name: "t", purpose: "mcp" }],
      ["PATCH", `/tokens/${crypto.randomUUID()}`, { name: "x" }],
      ["POST", `/tokens/${crypto.randomUUID()}/revoke`],
      ["GET", "/audit-log"],
      // Not 405 either: nothing reveals that the routes exist.
      ["DELETE", "/companies"],
      ["GET", `/tokens/${crypto.randomUUID()}`],
      ["PUT", "/no-such-admin-route"],
    ];
    for (const [method, path, body] of calls) {
      // With any bearer, with the test admin token, and with none.
      await expectError(await t.admin(method, path, body), 404, "not_found");
      await expectError(await t.request(method, `/admin/api${path}`, { body }), 404, "not_found");
    }
    expect(t.services.admin.companies.list()).toEqual([]);
    // The rest of the service is unaffected.
    expect((await t.request("GET", "/healthz")).status).toBe(200);
    await expectError(await t.request("POST", "/healthz"), 405, "method_not_allowed");
  });

  test("no Authorization header is 401 invalid_token_format; a wrong token is 401 invalid_token", async () => {
    const t = makeTestApp();
    for (const [method, path] of [
      ["GET", "/companies"],
      ["POST", "/companies"],
      ["GET", "/tokens"],
      ["GET", "/audit-log"],
    ] as const) {
      const body = method === "POST" ? { name: "X", inn: INN } : undefined;
      await expectError(await t.request(method, `/admin/api${path}`, { body }), 401, "invalid_token_format");
      await expectError(
        await t.request(method, `/admin/api${path}`, {
          body,
          headers: { authorization: `Basic ${ADMIN_TOKEN}` },
        }),
        401,
        "invalid_token_format",
      );
      for (const wrong of [`${ADMIN_TOKEN}x`, ADMIN_TOKEN.slice(0, -1), "x".repeat(40)]) {
        await expectError(
          await t.request(method, `/admin/api${path}`, {
            body,
            headers: { authorization: `Bearer ${wrong}` },
          }),
          401,
          "invalid_token",
        );
      }
    }
    expect(t.services.admin.companies.list()).toEqual([]);
    // The right one, in any case of the scheme.
    const ok = await t.request("GET", "/admin/api/companies", {
      headers: { authorization: `bearer ${ADMIN_TOKEN}` },
    });
    expect(ok.status).toBe(200);
  });

  test("an API token is not an admin token", async () => {
    const t = makeTestApp();
    const c = t.fixtures.company();
    const created = t.fixtures.token(c.company_id);
    await expectError(
      await t.request("GET", "/admin/api/tokens", { token: created.token }),
      401,
      "invalid_token",
    );
  });
});

describe("tokens", () => {
  test("create returns the raw token once; lists show only the 13-character prefix", async () => {
    const t = makeTestApp();
    const c = await company(t);
    const a = await account(t, c.company_id);
    const res = await t.admin("POST", "/tokens", {
      company_id: c.company_id,
      name: "1C",
      purpose: "integration",
      mode: "test",
      scope_read_statements: true,
      accounts: [{ bank_account_id: a.bank_account_id, allow_read_statements: true }],
    });
    expect(res.status).toBe(201);
    const created = await json<TokenBody>(res);
    const raw = created.token!;
    expect(raw).toMatch(TOKEN_RE);
    expect(raw.startsWith("svc_test_")).toBe(true);
    expect(created.token_prefix).toBe(raw.slice(0, 13));
    expect(created).toMatchObject({
      name: "1C",
      purpose: "integration",
      mode: "test",
      scopes: { read_statements: true, send_payments: false },
      accounts: [
        { bank_account_id: a.bank_account_id, allow_read_statements: true, allow_send_payments: false },
      ],
      allowed_ips: [],
      rate_limit_per_minute: 60,
      expires_at: null,
      revoked_at: null,
      created_at: NOW,
      last_used_at: null,
    });
    const hash = createHash("sha256").update(raw).digest("hex");

    // The default mode is live.
    t.clock.advance(1000);
    const live = await token(t, { company_id: c.company_id, purpose: "mcp" });
    expect(live.token).toMatch(/^svc_live_[0-9A-Za-z]{40}$/);
    expect(live.rate_limit_per_minute).toBe(300);
    expect(live.token).not.toBe(raw);

    for (const path of ["/tokens", `/tokens?company_id=${c.company_id}`, "/audit-log", "/companies"]) {
      const text = await (await t.admin("GET", path)).text();
      expect(text).not.toContain(raw);
      expect(text).not.toContain(raw.slice(13));
      expect(text).not.toContain(hash);
      expect(text).not.toContain(live.token!);
    }
    const list = await json<{ tokens: TokenBody[] }>(await t.admin("GET", "/tokens"));
    expect(list.tokens.map((x) => x.token_prefix)).toEqual([raw.slice(0, 13), live.token!.slice(0, 13)]);
    expect(list.tokens.every((x) => x.token === undefined)).toBe(true);
    const { token: _raw, ...view } = created;
    expect(list.tokens[0]).toEqual(view);

    // The raw value is what the guard accepts.
    const auth = await t.services.guard.authenticate(`Bearer ${raw}`, "127.0.0.1", {
      purpose: "integration",
    });
    expect(auth.principal.tokenId).toBe(created.api_token_id);
  });

  test("validation: mcp with send payments, rate limits, foreign accounts, IPs, unknown company", async () => {
    const t = makeTestApp();
    const c = await company(t);
    const other = await company(t, "ООО Чужая", INN2);
    const mine = await account(t, c.company_id);
    const theirs = await account(t, other.company_id);
    const base = { company_id: c.company_id, name: "t", purpose: "integration" };
    const bad: [Record<string, unknown>, string][] = [
      [{ purpose: "mcp", scope_send_payments: true }, "scope_send_payments"],
      [
        {
          purpose: "mcp",
          scope_read_statements: true,
          accounts: [
            { bank_account_id: mine.bank_account_id, allow_read_statements: true, allow_send_payments: true },
          ],
        },
        "accounts[0].allow_send_payments",
      ],
      [{ rate_limit_per_minute: 0 }, "rate_limit_per_minute"],
      [{ rate_limit_per_minute: 10001 }, "rate_limit_per_minute"],
      [{ rate_limit_per_minute: -1 }, "rate_limit_per_minute"],
      [
        { accounts: [{ bank_account_id: theirs.bank_account_id, allow_read_statements: true }] },
        "accounts[0].bank_account_id",
      ],
      [{ accounts: [{ bank_account_id: crypto.randomUUID() }] }, "accounts[0].bank_account_id"],
      [
        { accounts: [{ bank_account_id: mine.bank_account_id }, { bank_account_id: mine.bank_account_id }] },
        "accounts[1].bank_account_id",
      ],
      [{ allowed_ips: ["10.0.0.0/8", "not-an-ip"] }, "allowed_ips[1]"],
      [{ allowed_ips: ["10.0.0.0/33"] }, "allowed_ips[0]"],
      [{ name: "" }, "name"],
      [{ expires_at: "tomorrow" }, "expires_at"],
    ];
    for (const [patch, field] of bad) {
      const details = await expectError(
        await t.admin("POST", "/tokens", { ...base, ...patch }),
        400,
        "validation_error",
      );
      expect({ patch, field: details.field }).toEqual({ patch, field });
    }
    // Wrong types are caught by the schema.
    await expectError(
      await t.admin("POST", "/tokens", { ...base, rate_limit_per_minute: 1.5 }),
      400,
      "validation_error",
    );
    await expectError(
      await t.admin("POST", "/tokens", { ...base, purpose: "admin" }),
      400,
      "validation_error",
    );
    expect((await json<{ tokens: unknown[] }>(await t.admin("GET", "/tokens"))).tokens).toEqual([]);

    await expectError(
      await t.admin("POST", "/tokens", { ...base, company_id: crypto.randomUUID() }),
      404,
      "not_found",
    );

    // The accepted edges.
    expect((await token(t, { ...base, rate_limit_per_minute: 1 })).rate_limit_per_minute).toBe(1);
    expect((await token(t, { ...base, rate_limit_per_minute: 10000 })).rate_limit_per_minute).toBe(10000);
    const withIps = await token(t, { ...base, allowed_ips: ["10.0.0.0/8", "::1", "2001:db8::/32"] });
    expect(withIps.allowed_ips).toEqual(["10.0.0.0/8", "::1", "2001:db8::/32"]);
    const mcp = await token(t, {
      ...base,
      purpose: "mcp",
      scope_read_statements: true,
      scope_send_payments: false,
      accounts: [
        { bank_account_id: mine.bank_account_id, allow_read_statements: true, allow_send_payments: false },
      ],
    });
    expect(mcp.scopes).toEqual({ read_statements: true, send_payments: false });
    const integration = await token(t, {
      ...base,
      scope_send_payments: true,
      accounts: [{ bank_account_id: mine.bank_account_id, allow_send_payments: true }],
    });
    expect(integration.scopes.send_payments).toBe(true);
  });

  test("PATCH changes name, allowed_ips, rate limit, scopes and accounts", async () => {
    const t = makeTestApp();
    const c = await company(t);
    const a1 = await account(t, c.company_id);
    const a2 = await account(t, c.company_id);
    const created = await token(t, {
      company_id: c.company_id,
      accounts: [{ bank_account_id: a1.bank_account_id, allow_read_statements: true }],
    });
    const res = await t.admin("PATCH", `/tokens/${created.api_token_id}`, {
      name: "renamed",
      allowed_ips: ["192.0.2.0/24"],
      rate_limit_per_minute: 120,
      scopes: { read_statements: true, send_payments: true },
      accounts: [
        { bank_account_id: a2.bank_account_id, allow_read_statements: true, allow_send_payments: true },
      ],
    });
    expect(res.status).toBe(200);
    const patched = await json<TokenBody>(res);
    expect(patched).toMatchObject({
      api_token_id: created.api_token_id,
      name: "renamed",
      allowed_ips: ["192.0.2.0/24"],
      rate_limit_per_minute: 120,
      scopes: { read_statements: true, send_payments: true },
      accounts: [
        { bank_account_id: a2.bank_account_id, allow_read_statements: true, allow_send_payments: true },
      ],
      token_prefix: created.token_prefix,
    });
    expect(patched.token).toBeUndefined();
    const listed = await json<{ tokens: TokenBody[] }>(await t.admin("GET", "/tokens"));
    expect(listed.tokens).toEqual([patched]);

    // The guard sees the change: an address outside the new allow-list is refused.
    // (A promise where the rate limits are shared: PostgreSQL.)
    const check = async (ip: string) => {
      try {
        await t.services.guard.authenticate(`Bearer ${created.token}`, ip, { purpose: "integration" });
        return "ok";
      } catch (e) {
        return e instanceof ApiError ? e.code : String(e);
      }
    };
    expect(await check("192.0.2.10")).toBe("ok");
    expect(await check("198.51.100.1")).toBe("forbidden_ip");

    // null puts the default rate limit back; an empty list of IPs removes the restriction.
    const reset = await json<TokenBody & { rate_limit_is_default: boolean }>(
      await t.admin("PATCH", `/tokens/${created.api_token_id}`, {
        rate_limit_per_minute: null,
        allowed_ips: [],
      }),
    );
    expect(reset.rate_limit_per_minute).toBe(60);
    expect(reset.rate_limit_is_default).toBe(true);
    expect(reset.allowed_ips).toEqual([]);
    expect(reset.name).toBe("renamed");
    expect(await check("198.51.100.1")).toBe("ok");
  });

  test("PATCH validates like create", async () => {
    const t = makeTestApp();
    const c = await company(t);
    const other = await company(t, "ООО Чужая", INN2);
    const a = await account(t, c.company_id);
    const theirs = await account(t, other.company_id);
    const mcp = await token(t, { company_id: c.company_id, purpose: "mcp", scope_read_statements: true });
    const path = `/tokens/${mcp.api_token_id}`;
    const bad: [Record<string, unknown>, string][] = [
      [{ scopes: { send_payments: true } }, "scope_send_payments"],
      [{ scope_send_payments: true }, "scope_send_payments"],
      [
        {
          accounts: [
            { bank_account_id: a.bank_account_id, allow_read_statements: true, allow_send_payments: true },
          ],
        },
        "accounts[0].allow_send_payments",
      ],
      [{ accounts: [{ bank_account_id: theirs.bank_account_id }] }, "accounts[0].bank_account_id"],
      [{ rate_limit_per_minute: 0 }, "rate_limit_per_minute"],
      [{ rate_limit_per_minute: 10001 }, "rate_limit_per_minute"],
      [{ allowed_ips: ["1.2.3.4/40"] }, "allowed_ips[0]"],
      [{ name: " " }, "name"],
    ];
    for (const [body, field] of bad) {
      const details = await expectError(await t.admin("PATCH", path, body), 400, "validation_error");
      expect({ body, field: details.field }).toEqual({ body, field });
    }
    const after = await json<{ tokens: TokenBody[] }>(await t.admin("GET", "/tokens"));
    expect(after.tokens[0]).toMatchObject({
      name: "t",
      scopes: { read_statements: true, send_payments: false },
      accounts: [],
      rate_limit_per_minute: 300,
    });
    await expectError(
      await t.admin("PATCH", `/tokens/${crypto.randomUUID()}`, { name: "x" }),
      404,
      "not_found",
    );
  });

  test("revoke sets revoked_at; the listing shows it; the token stops working; repeat is harmless", async () => {
    const t = makeTestApp();
    const c = await company(t);
    const created = await token(t, { company_id: c.company_id });
    t.clock.advance(5 * 60_000);
    const res = await t.admin("POST", `/tokens/${created.api_token_id}/revoke`);
    expect(res.status).toBe(200);
    const revoked = await json<TokenBody>(res);
    expect(revoked.revoked_at).toBe("2026-11-20T09:05:00.000Z");
    expect(revoked.api_token_id).toBe(created.api_token_id);
    const listed = await json<{ tokens: TokenBody[] }>(await t.admin("GET", "/tokens"));
    expect(listed.tokens[0]?.revoked_at).toBe("2026-11-20T09:05:00.000Z");

    expect(() =>
      t.services.guard.authenticate(`Bearer ${created.token}`, "127.0.0.1", { purpose: "integration" }),
    ).toThrow(expect.objectContaining({ code: "invalid_token" }));

    t.clock.advance(60_000);
    const again = await json<TokenBody>(await t.admin("POST", `/tokens/${created.api_token_id}/revoke`));
    expect(again.revoked_at).toBe("2026-11-20T09:05:00.000Z");
    const revokes = await json<{ entries: AuditEntry[] }>(
      await t.admin("GET", "/audit-log?action=admin.token.revoke"),
    );
    expect(revokes.entries).toHaveLength(1);

    await expectError(await t.admin("POST", `/tokens/${crypto.randomUUID()}/revoke`), 404, "not_found");
  });
});

describe("audit log", () => {
  async function setup() {
    const t = makeTestApp();
    const c = await company(t);
    t.clock.advance(1000);
    const a = await account(t, c.company_id);
    t.clock.advance(1000);
    const tok = await token(t, { company_id: c.company_id });
    t.clock.advance(1000);
    const revoke = await t.admin("POST", `/tokens/${tok.api_token_id}/revoke`);
    expect(revoke.status).toBe(200);
    return { t, c, a, tok, revokeRequestId: revoke.headers.get("x-request-id") };
  }

  test("admin actions are recorded, newest first, with the request id", async () => {
    const { t, c, a, tok, revokeRequestId } = await setup();
    const res = await t.admin("GET", "/audit-log");
    expect(res.status).toBe(200);
    const body = await json<{ entries: AuditEntry[]; next_cursor: string | null }>(res);
    expect(body.next_cursor).toBeNull();
    expect(body.entries.map((e) => [e.action, e.target])).toEqual([
      ["admin.token.revoke", tok.api_token_id],
      ["admin.token.create", tok.api_token_id],
      ["admin.bank_account.create", a.bank_account_id],
      ["admin.company.create", c.company_id],
    ]);
    expect(body.entries.map((e) => e.at)).toEqual([
      "2026-11-20T09:00:03.000Z",
      "2026-11-20T09:00:02.000Z",
      "2026-11-20T09:00:01.000Z",
      "2026-11-20T09:00:00.000Z",
    ]);
    const ids = body.entries.map((e) => e.id);
    expect([...ids].sort((x, y) => y - x)).toEqual(ids);
    expect(body.entries[0]).toMatchObject({
      actor: "admin",
      outcome: "ok",
      request_id: revokeRequestId,
      ip: "127.0.0.1",
    });
  });

  test("filter by action and by time", async () => {
    const { t, c } = await setup();
    const res = await t.admin("GET", "/audit-log?action=admin.company.create");
    const body = await json<{ entries: AuditEntry[] }>(res);
    expect(body.entries).toHaveLength(1);
    expect(body.entries[0]).toMatchObject({ action: "admin.company.create", target: c.company_id });
    expect(body.entries[0]?.arguments).toEqual({ name: "ООО Ромашка", inn: INN });

    const none = await json<{ entries: AuditEntry[] }>(await t.admin("GET", "/audit-log?action=mcp.ping"));
    expect(none.entries).toEqual([]);

    const window = await json<{ entries: AuditEntry[] }>(
      await t.admin("GET", "/audit-log?since=2026-11-20T09:00:01Z&until=2026-11-20T09:00:03Z"),
    );
    expect(window.entries.map((e) => e.action)).toEqual(["admin.token.create", "admin.bank_account.create"]);
  });

  test("limit and cursor page through every entry exactly once", async () => {
    const { t } = await setup();
    const all = await json<{ entries: AuditEntry[] }>(await t.admin("GET", "/audit-log"));
    const seen: number[] = [];
    let cursor: string | null = null;
    for (let page = 0; page < 10; page++) {
      const q: string = cursor ? `?limit=1&cursor=${encodeURIComponent(cursor)}` : "?limit=1";
      const body = await json<{ entries: AuditEntry[]; next_cursor: string | null }>(
        await t.admin("GET", `/audit-log${q}`),
      );
      expect(body.entries.length).toBeLessThanOrEqual(1);
      seen.push(...body.entries.map((e) => e.id));
      cursor = body.next_cursor;
      if (!cursor) break;
    }
    expect(cursor).toBeNull();
    expect(seen).toEqual(all.entries.map((e) => e.id));
    expect(seen).toHaveLength(4);

    const two = await json<{ entries: AuditEntry[]; next_cursor: string | null }>(
      await t.admin("GET", "/audit-log?limit=2"),
    );
    expect(two.entries).toHaveLength(2);
    expect(two.next_cursor).toBeString();
    const rest = await json<{ entries: AuditEntry[]; next_cursor: string | null }>(
      await t.admin("GET", `/audit-log?limit=2&cursor=${two.next_cursor}`),
    );
    expect([...two.entries, ...rest.entries].map((e) => e.id)).toEqual(all.entries.map((e) => e.id));
    expect(rest.next_cursor).toBeNull();
  });

  test("limit 501, limit 0, a bad cursor or a bad date are 400 validation_error", async () => {
    const { t } = await setup();
    const cases: [string, string][] = [
      ["limit=501", "limit"],
      ["limit=0", "limit"],
      ["limit=abc", "limit"],
      ["cursor=not-a-cursor", "cursor"],
      ["since=yesterday", "since"],
    ];
    for (const [q, field] of cases) {
      const details = await expectError(await t.admin("GET", `/audit-log?${q}`), 400, "validation_error");
      expect({ q, field: details.field }).toEqual({ q, field });
    }
    expect((await t.admin("GET", "/audit-log?limit=500")).status).toBe(200);
  });
});

describe("admin responses never include secrets", () => {
  test("the admin token is in no response body", async () => {
    const t = makeTestApp();
    const c = await company(t);
    await token(t, { company_id: c.company_id });
    for (const path of ["/companies", "/tokens", "/audit-log", "/bank-accounts"]) {
      expect(await (await t.admin("GET", path)).text()).not.toContain(ADMIN_TOKEN);
    }
  });
});
