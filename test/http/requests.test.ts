// lanes: sqlite postgres
import { describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { ADMIN_TOKEN, BASE, json, makeTestApp, type TestApp } from "../helpers/app";
import { expectError } from "../helpers/envelope";

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const MB = 1024 * 1024;
const INN = "7719617469";

/** The access log line is written after the response is sent; let the scheduled callbacks run. */
async function settle(t: TestApp, count: number): Promise<void> {
  for (let i = 0; i < 100 && t.logs.length < count; i++) await new Promise((r) => setImmediate(r));
}

function accessLines(t: TestApp): Record<string, unknown>[] {
  return t.logs.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.msg === "request");
}

function adminPostRaw(
  t: TestApp,
  path: string,
  body: Uint8Array | string,
  headers: Record<string, string> = {},
) {
  return t.app.handle(
    new Request(`${BASE}/admin/api${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json", ...headers },
      body,
    }),
  );
}

/** A body sent in chunks, without Content-Length. */
function streamOf(totalBytes: number, chunk = 64 * 1024): ReadableStream<Uint8Array> {
  let sent = 0;
  return new ReadableStream({
    pull(controller) {
      if (sent >= totalBytes) return controller.close();
      const n = Math.min(chunk, totalBytes - sent);
      sent += n;
      controller.enqueue(new Uint8Array(n).fill(0x20));
    },
  });
}

function streamedAdminPost(t: TestApp, path: string, totalBytes: number) {
  const init = {
    method: "POST",
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
    body: streamOf(totalBytes),
    duplex: "half",
  } as RequestInit;
  const request = new Request(`${BASE}/admin/api${path}`, init);
  expect(request.headers.get("content-length")).toBeNull();
  return t.app.handle(request);
}

describe("X-Request-Id", () => {
  test("generated as a UUID when the client sends none", async () => {
    const t = makeTestApp();
    const a = await t.request("GET", "/healthz");
    const b = await t.request("GET", "/healthz");
    expect(a.headers.get("x-request-id")).toMatch(UUID_RE);
    expect(b.headers.get("x-request-id")).toMatch(UUID_RE);
    expect(a.headers.get("x-request-id")).not.toBe(b.headers.get("x-request-id"));
  });

  test("a client value of 1 to 128 characters from [A-Za-z0-9._:-] is passed through", async () => {
    const t = makeTestApp();
    for (const id of ["abc-123", "x".repeat(128), "Trace.ID:2026-11-26_a.b", "0"]) {
      const res = await t.request("GET", "/healthz", { headers: { "x-request-id": id } });
      expect(res.headers.get("x-request-id")).toBe(id);
    }
  });

  test("a value of 129 characters, or with any other character, is replaced by a UUID", async () => {
    const t = makeTestApp();
    const others = ["trace id", "=HYPERLINK(1)", "a,b", 'a"b', "a;b", "a/b", "+1", "@x", "a|b", "a'b"];
    for (const id of ["x".repeat(129), "abc\tdef", "abc\u0001def", "abc\u007fdef", "abcé", ...others]) {
      const res = await t.request("GET", "/healthz", { headers: { "x-request-id": id } });
      const got = res.headers.get("x-request-id");
      expect(got).toMatch(UUID_RE);
    }
  });

  test("present, and the client's value kept, on 200, 400, 401, 404, 405, 413 and 500", async () => {
    const t = makeTestApp();
    const id = "client-request-id-1";
    const h = { "x-request-id": id };
    const auth = { ...h, authorization: `Bearer ${ADMIN_TOKEN}` };
    const cases: [number, Promise<Response>][] = [
      [200, t.request("GET", "/healthz", { headers: h })],
      [400, t.request("POST", "/admin/api/companies", { headers: auth, body: "{nope" })],
      [401, t.request("GET", "/admin/api/companies", { headers: h })],
      [404, t.request("GET", "/no/such/route", { headers: h })],
      [405, t.request("POST", "/healthz", { headers: h })],
      [413, t.request("POST", "/admin/api/companies", { headers: auth, body: "x".repeat(MB + 1) })],
    ];
    for (const [status, pending] of cases) {
      const res = await pending;
      expect({ status: res.status, id: res.headers.get("x-request-id") }).toEqual({ status, id });
    }
    // Also without a client value.
    for (const [status, pending] of [
      [400, t.admin("POST", "/companies", "{nope")],
      [401, t.request("GET", "/admin/api/companies")],
      [404, t.request("GET", "/no/such/route")],
      [405, t.request("POST", "/healthz")],
    ] as [number, Promise<Response>][]) {
      const res = await pending;
      expect(res.status).toBe(status);
      expect(res.headers.get("x-request-id")).toMatch(UUID_RE);
    }
  });

  test("present on a 500 internal_error, with the id in the error log and no stack in the body", async () => {
    const t = makeTestApp();
    // A table gone from under the service is an unexpected backend error.
    t.db.query("ALTER TABLE companies RENAME TO companies_gone").run();
    const res = await t.request("GET", "/admin/api/companies", {
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "x-request-id": "boom-1" },
    });
    expect(res.headers.get("x-request-id")).toBe("boom-1");
    await expectError(res, 500, "internal_error");
    await settle(t, 2);
    const errorLine = t.logs.map((l) => JSON.parse(l)).find((l) => l.level === "error");
    expect(errorLine?.request_id).toBe("boom-1");
  });
});

describe("routing errors", () => {
  test("an unknown route is 404 not_found", async () => {
    const t = makeTestApp();
    await expectError(await t.request("GET", "/nope"), 404, "not_found");
    await expectError(await t.request("POST", "/api/v9/whatever", { body: {} }), 404, "not_found");
  });

  test("a wrong method on an existing path is 405 method_not_allowed with Allow", async () => {
    const t = makeTestApp();
    const healthz = await t.request("POST", "/healthz");
    expect(healthz.headers.get("allow")).toBe("GET");
    await expectError(healthz, 405, "method_not_allowed");

    const companies = await t.admin("DELETE", "/companies");
    const allow = (companies.headers.get("allow") ?? "").split(",").map((m) => m.trim());
    expect(allow.sort()).toEqual(["GET", "POST"]);
    await expectError(companies, 405, "method_not_allowed");

    // Path parameters count: /admin/api/tokens/{id} exists for PATCH only.
    const token = await t.admin("GET", `/tokens/${crypto.randomUUID()}`);
    expect(token.headers.get("allow")).toBe("PATCH");
    await expectError(token, 405, "method_not_allowed");
  });

  test("a trailing slash does not turn 405 into 404 (the router ignores it too)", async () => {
    const t = makeTestApp();
    expect((await t.request("GET", "/healthz/")).status).toBe(200);
    const healthz = await t.request("POST", "/healthz/");
    expect(healthz.headers.get("allow")).toBe("GET");
    await expectError(healthz, 405, "method_not_allowed");

    // A route declared with a trailing slash under its prefix, asked for without one.
    const withSlash = t.app.routes.find(
      (r) => r.path.length > 1 && r.path.endsWith("/") && r.method !== "ALL",
    );
    if (withSlash) {
      const other = withSlash.method === "PUT" ? "PATCH" : "PUT";
      const res = await t.request(other, withSlash.path.slice(0, -1));
      expect(res.headers.get("allow")).toContain(withSlash.method);
      await expectError(res, 405, "method_not_allowed");
    }
  });
});

describe("request bodies", () => {
  test('malformed JSON is 400 "invalid request body" with the English message', async () => {
    const t = makeTestApp();
    for (const body of ["{nope", '{"name": "x",}', "\u00ff\u00fe"]) {
      const res = await t.request("POST", "/admin/api/companies", {
        body,
        headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      });
      const text = await res.text();
      expect(res.status).toBe(400);
      expect(JSON.parse(text)).toEqual({
        error: { code: "invalid request body", message: "invalid request body" },
      });
    }
  });

  test('bytes that are not UTF-8 are "invalid request body"', async () => {
    const t = makeTestApp();
    const res = await adminPostRaw(t, "/companies", new Uint8Array([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d]));
    await expectError(res, 400, "invalid request body");
  });

  test('a NUL character (\\u0000) in any string or key of a JSON body is "invalid request body"', async () => {
    const t = makeTestApp();
    for (const body of [
      '{"name":"ООО \\u0000","inn":"7719617469"}',
      '{"name\\u0000":"x"}',
      '[["\\u0000"]]',
    ]) {
      const res = await t.request("POST", "/admin/api/companies", {
        body,
        headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      });
      await expectError(res, 400, "invalid request body");
    }
    const listed = await json<{ companies: unknown[] }>(await t.admin("GET", "/companies"));
    expect(listed.companies).toEqual([]);
  });

  test('a malformed UUID in the JSON body is "invalid request body", before field validation', async () => {
    const t = makeTestApp();
    const res = await t.admin("POST", "/bank-accounts", {
      company_id: "zzz",
      bank: "sandbox",
      account_number: "not-checked-yet",
      bik: 1,
    });
    const body = await json<{ error: { code: string; message: string } }>(res);
    expect(res.status).toBe(400);
    expect(body.error.code).toBe("invalid request body");
    expect(body.error.message).toBe("invalid request body");
  });

  test('a malformed UUID in the URL path is "invalid request body"', async () => {
    const t = makeTestApp();
    await expectError(await t.admin("POST", "/tokens/not-a-uuid/revoke"), 400, "invalid request body");
    await expectError(
      await t.admin("PATCH", "/tokens/not-a-uuid", { name: "x" }),
      400,
      "invalid request body",
    );
  });

  test("a malformed UUID in a query parameter is validation_error", async () => {
    const t = makeTestApp();
    const details = await expectError(
      await t.admin("GET", "/tokens?company_id=zzz"),
      400,
      "validation_error",
    );
    expect(details.field).toBe("company_id");
  });

  test("a wrong type is 400 validation_error naming the field", async () => {
    const t = makeTestApp();
    const details = await expectError(
      await t.admin("POST", "/companies", { name: 5, inn: INN }),
      400,
      "validation_error",
    );
    expect(details.field).toBe("name");
    const res = await t.admin("POST", "/companies", { name: 5, inn: INN });
    const message = (await json<{ error: { message: string } }>(res)).error.message;
    expect(message).toMatch(/[а-яА-Я]/);
  });

  test("a missing field is 400 validation_error naming the field", async () => {
    const t = makeTestApp();
    const details = await expectError(
      await t.admin("POST", "/companies", { name: "X" }),
      400,
      "validation_error",
    );
    expect(details.field).toBe("inn");
  });

  test("authentication comes before body checks", async () => {
    const t = makeTestApp();
    await expectError(
      await t.request("POST", "/admin/api/companies", { body: "{nope" }),
      401,
      "invalid_token_format",
    );
    await expectError(
      await t.request("POST", "/admin/api/companies", { body: { name: 5 } }),
      401,
      "invalid_token_format",
    );
  });

  test("a body over 1 MB with Content-Length is 413 payload_too_large", async () => {
    const t = makeTestApp();
    const body = JSON.stringify({ name: "x".repeat(MB), inn: INN });
    const res = await t.admin("POST", "/companies", body);
    // The unread rest of the body makes the connection unusable: it is closed, not kept alive.
    expect(res.headers.get("connection")).toBe("close");
    const details = await expectError(res, 413, "payload_too_large");
    expect(details.limit_bytes).toBe(MB);
    expect(t.services.admin.companies.list()).toEqual([]);
  });

  test("a streamed body over 1 MB without Content-Length is 413 payload_too_large", async () => {
    const t = makeTestApp();
    const res = await streamedAdminPost(t, "/companies", MB + 64 * 1024);
    expect(res.headers.get("connection")).toBe("close");
    await expectError(res, 413, "payload_too_large");
    const res2 = await streamedAdminPost(t, "/tokens", 3 * MB);
    await expectError(res2, 413, "payload_too_large");
  });

  test("the agent endpoint allows 16 KB; the payment upload takes multipart only, with or without a trailing slash", async () => {
    const t = makeTestApp();
    const agent = t.fixtures.world({ purpose: "mcp" });
    for (const path of ["/api/v1/mcp", "/api/v1/mcp/"]) {
      // Read only for a token that passed: without one, 401 and the body is never read.
      const unread = await t.request("POST", path, { body: "x".repeat(16 * 1024 + 1) });
      await expectError(unread, 401, "invalid_token_format");
      const res = await t.request("POST", path, { token: agent.token, body: "x".repeat(16 * 1024 + 1) });
      const details = await expectError(res, 413, "payload_too_large");
      expect(details.limit_bytes).toBe(16 * 1024);
    }
    // An upload takes multipart only: anything else is 415 before a byte is read; a multipart body
    // is streamed by the route once the token has passed (10 MB, enforced while reading: see the
    // payments tests), so without a token it is 401, unread, whatever its size.
    const multipart = { "content-type": "multipart/form-data; boundary=b" };
    for (const upload of ["/api/v1/integration/payments/imports", "/api/v1/integration/payments/imports/"]) {
      const json = await t.request("POST", upload, { body: "x".repeat(10 * MB + 1) });
      expect((await expectError(json, 415, "unsupported_media_type")).expected).toBe("multipart/form-data");
      const large = await t.request("POST", upload, { body: "x".repeat(10 * MB + 1), headers: multipart });
      await expectError(large, 401, "invalid_token_format");
    }
    // A JSON body is read once the token has passed: without one it is 401, unread.
    const unread = await t.request("POST", "/api/v1/integration/statements", { body: "x".repeat(MB + 1) });
    await expectError(unread, 401, "invalid_token_format");
    const { token } = t.fixtures.world();
    const order = await t.request("POST", "/api/v1/integration/statements", {
      token,
      body: "x".repeat(MB + 1),
    });
    expect((await expectError(order, 413, "payload_too_large")).limit_bytes).toBe(MB);
  });

  test("no body is read before the route's token, admin bearer or session has passed", async () => {
    const t = makeTestApp();
    /** A request whose body counts the chunks anyone pulled from it. */
    const counted = (path: string, headers: Record<string, string>) => {
      const body = { pulled: 0 };
      // highWaterMark 0: nothing is pulled until someone reads.
      const stream = new ReadableStream<Uint8Array>(
        {
          pull(controller) {
            body.pulled++;
            if (body.pulled > 4) return controller.close();
            controller.enqueue(new TextEncoder().encode(body.pulled === 1 ? '{"a":"' : "xxxx"));
          },
        },
        { highWaterMark: 0 },
      );
      const request = new Request(`${BASE}${path}`, {
        method: "POST",
        headers,
        body: stream,
        duplex: "half",
      } as RequestInit);
      return { body, response: t.app.handle(request) };
    };
    const json = { "content-type": "application/json" };
    const cases: [string, Record<string, string>, number][] = [
      ["/api/v1/integration/statements", json, 401],
      [
        "/api/v1/integration/statements",
        { ...json, authorization: `Bearer svc_live_${"Z".repeat(40)}` },
        401,
      ],
      ["/admin/api/companies", { ...json, authorization: "Bearer wrong-admin-token" }, 401],
      ["/admin/api/companies", json, 401],
      ["/api/v1/integration/statements/import", json, 415],
      ["/api/v1/integration/payments/imports", json, 415],
      ["/admin/statements/import", json, 415],
      ["/admin/companies", { "content-type": "application/x-www-form-urlencoded" }, 303],
      ["/api/v1/mcp", json, 401],
      ["/mcp", json, 401],
      ["/api/v1/mcp/tools/list_bank_accounts/call", json, 401],
    ];
    for (const [path, headers, status] of cases) {
      const { body, response } = counted(path, headers);
      const res = await response;
      expect({ path, status: res.status, pulled: body.pulled }).toEqual({ path, status, pulled: 0 });
    }
  });

  test("a body of exactly 1 MB is read (no 413)", async () => {
    const t = makeTestApp();
    const prefix = `{"name":"ok","inn":"${INN}","pad":"`;
    const body = `${prefix}${"x".repeat(MB - prefix.length - 2)}"}`;
    expect(Buffer.byteLength(body)).toBe(MB);
    // Read to its end and judged: its padding is a field the route does not know.
    const details = await expectError(await t.admin("POST", "/companies", body), 400, "validation_error");
    expect(details).toEqual({ field: "pad" });
  });
});

describe("health and documentation", () => {
  test("GET /healthz is 200 {status: ok} without a token", async () => {
    const t = makeTestApp();
    const res = await t.request("GET", "/healthz");
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: "ok" });
  });

  test("/docs/json lists every route with its error responses", async () => {
    const t = makeTestApp();
    const res = await t.request("GET", "/docs/json");
    expect(res.status).toBe(200);
    const doc = await json<{
      openapi: string;
      paths: Record<string, Record<string, { responses: Record<string, { description: string }> }>>;
    }>(res);
    expect(doc.openapi).toMatch(/^3\./);
    const paths = Object.keys(doc.paths);
    for (const p of [
      "/healthz",
      "/admin/api/companies",
      "/admin/api/bank-accounts",
      "/admin/api/tokens",
      "/admin/api/tokens/{id}",
      "/admin/api/tokens/{id}/revoke",
      "/admin/api/audit-log",
    ]) {
      expect(paths).toContain(p);
    }
    // Every route the app serves is documented (the docs routes themselves aside).
    for (const route of t.app.routes) {
      if (route.path.startsWith("/docs") || route.path === "/favicon.ico") continue;
      const openapiPath = route.path.replace(/:(\w+)/g, "{$1}");
      expect({
        route: openapiPath,
        method: route.method,
        documented: Boolean(doc.paths[openapiPath]?.[route.method.toLowerCase()]),
      }).toEqual({
        route: openapiPath,
        method: route.method,
        documented: true,
      });
    }
    const createCompany = doc.paths["/admin/api/companies"]?.post;
    expect(createCompany?.responses["401"]?.description).toContain("invalid_token");
    expect(createCompany?.responses["400"]?.description).toContain("invalid request body");
    expect(createCompany?.responses["201"]).toBeDefined();
    expect(doc.paths["/admin/api/tokens/{id}/revoke"]?.post?.responses["404"]?.description).toContain(
      "not_found",
    );
    expect(doc.paths["/healthz"]?.get?.responses["200"]).toBeDefined();
  });

  test("/docs is an HTML page", async () => {
    const t = makeTestApp();
    const res = await t.request("GET", "/docs");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/html");
    expect(await res.text()).toContain("<html");
  });

  test("/ is a small Russian page linking the admin pages and /docs, under the pages' headers", async () => {
    const t = makeTestApp();
    const res = await t.request("GET", "/");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/html");
    expect(res.headers.get("content-security-policy")).toContain("default-src 'self'");
    const html = await res.text();
    expect(html).toContain('lang="ru"');
    expect(html).toContain('href="/admin"');
    expect(html).toContain('href="/docs"');
  });
});

describe("access log", () => {
  test("one JSON line per request with request_id, method, route, status, duration_ms, api_token_id", async () => {
    const t = makeTestApp();
    await t.request("GET", "/healthz", { headers: { "x-request-id": "log-1" } });
    await t.request("GET", "/nope", { headers: { "x-request-id": "log-2" } });
    await t.request("DELETE", "/admin/api/companies", { headers: { "x-request-id": "log-3" } });
    await t.request("POST", "/admin/api/tokens/not-a-uuid/revoke", {
      headers: { "x-request-id": "log-4", authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    await settle(t, 4);
    const lines = accessLines(t);
    expect(lines.map((l) => [l.request_id, l.method, l.status])).toEqual([
      ["log-1", "GET", 200],
      ["log-2", "GET", 404],
      ["log-3", "DELETE", 405],
      ["log-4", "POST", 400],
    ]);
    for (const line of lines) {
      expect(Object.keys(line)).toEqual(
        expect.arrayContaining(["request_id", "method", "route", "status", "duration_ms", "api_token_id"]),
      );
      expect(typeof line.duration_ms).toBe("number");
      expect(line.api_token_id).toBeNull();
      expect(line.level).toBe("info");
    }
    expect(lines[0]?.route).toBe("/healthz");
    // The route is the pattern, not the concrete path.
    expect(lines[3]?.route).toBe("/admin/api/tokens/:id/revoke");
  });

  test("the status is the one sent, also where a route builds its own response (OAuth, agent 202/4xx)", async () => {
    const t = makeTestApp({ SVC_METRICS_TOKEN: "metrics-token-0123456789" });
    const agent = t.fixtures.world({ purpose: "mcp" });
    const form = { "content-type": "application/x-www-form-urlencoded" };
    const sent: number[] = [];
    const send = async (res: Promise<Response>) => sent.push((await res).status);
    await send(
      t.request("POST", "/oauth/register", {
        body: { redirect_uris: ["http://127.0.0.1:9/cb"], token_endpoint_auth_method: "none" },
      }),
    );
    await send(t.request("POST", "/oauth/token", { body: "grant_type=nope", headers: form }));
    await send(t.request("GET", "/oauth/authorize?client_id=nobody"));
    // The stateless revision answers its own errors with a 4xx Response.
    await send(
      t.request("POST", "/api/v1/mcp", {
        token: agent.token,
        body: {
          jsonrpc: "2.0",
          id: 1,
          method: "nope/nope",
          params: { _meta: { "io.modelcontextprotocol/protocolVersion": "2026-07-28" } },
        },
      }),
    );
    await settle(t, sent.length);
    expect(sent.slice(0, 3)).toEqual([201, 401, 400]);
    expect(sent[3]).toBeGreaterThanOrEqual(400);
    expect(accessLines(t).map((l) => l.status)).toEqual(sent);
    const metrics = await (
      await t.request("GET", "/metrics", { headers: { authorization: "Bearer metrics-token-0123456789" } })
    ).text();
    expect(metrics).toContain('route="/oauth/register",method="POST",status="201"');
    expect(metrics).toContain('route="/oauth/token",method="POST",status="401"');
    expect(metrics).not.toContain('route="/oauth/token",method="POST",status="200"');
  });

  test("api_token_id names the token of an authenticated request", async () => {
    const t = makeTestApp();
    const world = t.fixtures.world();
    const admin = await t.admin("POST", "/companies", { name: "ООО Лог", inn: INN });
    expect(admin.status).toBe(201);
    const ok = await t.request("GET", "/api/v1/integration/statements", { token: world.token });
    expect(ok.status).toBe(200);
    await t.request("GET", "/api/v1/integration/statements", { token: `svc_test_${"Z".repeat(40)}` });
    // A known token refused by a later check is still named.
    const agent = t.fixtures.world({ purpose: "mcp" });
    await t.request("GET", "/api/v1/integration/statements", { token: agent.token });
    await settle(t, 4);
    const lines = accessLines(t);
    expect(lines.map((l) => [l.status, l.api_token_id])).toEqual([
      [201, null],
      [200, world.tokenId],
      [401, null],
      [403, agent.tokenId],
    ]);
  });

  test("the client address is the socket peer, or the forwarded one behind a trusted proxy", async () => {
    const direct = makeTestApp();
    direct.clientIp.value = "::ffff:203.0.113.9";
    await direct.request("GET", "/healthz", { headers: { "x-forwarded-for": "6.6.6.6" } });
    await settle(direct, 1);
    expect(accessLines(direct)[0]?.ip).toBe("203.0.113.9");

    const proxied = makeTestApp({ SVC_TRUST_PROXY: "10.0.0.0/8" });
    proxied.clientIp.value = "10.1.2.3";
    await proxied.request("GET", "/healthz", { headers: { "x-forwarded-for": "6.6.6.6, 198.51.100.4" } });
    await settle(proxied, 1);
    expect(accessLines(proxied)[0]?.ip).toBe("198.51.100.4");
  });

  test("neither raw tokens, their hashes nor the admin token appear in the logs", async () => {
    const t = makeTestApp();
    const company = await json<{ company_id: string }>(
      await t.admin("POST", "/companies", { name: "ООО Лог", inn: INN }),
    );
    const created = await t.admin("POST", "/tokens", {
      company_id: company.company_id,
      name: "log check",
      purpose: "integration",
    });
    expect(created.status).toBe(201);
    const { token, api_token_id } = await json<{ token: string; api_token_id: string }>(created);
    await t.admin("GET", "/tokens");
    await t.admin("PATCH", `/tokens/${api_token_id}`, { name: "renamed" });
    // The raw token presented where it does not belong: in a header, a query and a path.
    await t.request("GET", "/admin/api/companies", { token });
    await t.request("GET", `/healthz?token=${token}`, { token });
    await t.request("GET", `/api/v1/integration/statements/${crypto.randomUUID()}`, { token });
    await t.request("GET", `/nope/${token}`, { token });
    await t.admin("POST", `/tokens/${api_token_id}/revoke`);
    await t.request("GET", "/admin/api/companies", { headers: { authorization: `Bearer ${ADMIN_TOKEN}x` } });
    await settle(t, 10);
    expect(accessLines(t).length).toBe(10);
    const all = t.logs.join("\n");
    expect(all).not.toContain(token);
    expect(all).not.toContain(token.slice(13));
    expect(all).not.toContain(createHash("sha256").update(token).digest("hex"));
    expect(all).not.toContain(ADMIN_TOKEN);
  });
});

describe("validation messages are Russian", () => {
  test("the framework's English fragments never reach a client", async () => {
    const t = makeTestApp();
    const w = t.fixtures.world();
    const message = async (res: Response) =>
      ((await res.json()) as { error: { message: string } }).error.message;
    const cases: [Promise<Response>, string][] = [
      [t.admin("POST", "/companies", { name: 5, inn: INN }), "Неверное значение поля name: ожидается строка"],
      [t.admin("POST", "/companies", { inn: INN }), "Неверное значение поля name: обязательное поле"],
      [
        t.request("GET", "/api/v1/integration/statements?limit=1000", { token: w.token }),
        "Неверное значение поля limit: ожидается целое число не больше 100",
      ],
      [
        t.request("GET", "/api/v1/integration/statements?status=done", { token: w.token }),
        "Неверное значение поля status: ожидается одно из: processing, ready, failed",
      ],
    ];
    for (const [res, text] of cases) {
      const m = await message(await res);
      expect(m).toBe(text);
      expect(m).not.toMatch(/Expected|union|property|must/);
    }
  });
});
