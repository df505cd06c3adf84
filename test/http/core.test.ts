// lanes: sqlite
// The HTTP core on its own: a new route with a new kind of body is a declaration, never an edit
// of the core, and the core names no feature's path.
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Elysia } from "elysia";
import { AddressLimiter } from "../../src/auth/address-limiter";
import { ManualClock } from "../../src/core/clock";
import { createLogger } from "../../src/core/logger";
import {
  BODY_POLICY_DETAIL,
  type BodyPolicy,
  bodyPolicyOption,
  isInvalidBody,
} from "../../src/http/body-policy";
import { httpCore } from "../../src/http/core";
import { readMultipart } from "../../src/http/multipart";
import { withRequestState } from "../../src/http/request-state";
import { expectError } from "../helpers/envelope";
import { ROOT } from "../helpers/server";

/** A tiny app of the core and a few routes declaring their bodies, wired as createApp does. */
function tinyApp() {
  const policies = new Map<string, BodyPolicy>();
  const logs: string[] = [];
  let routes: { method: string; path: string }[] = [];
  const app = new Elysia()
    .use(
      httpCore({
        logger: createLogger("info", (l) => logs.push(l)),
        trustedProxies: [],
        socketIp: () => "127.0.0.1",
        routes: () => routes,
        bodyPolicies: (method, route) => policies.get(`${method} ${route}`),
        clientLimits: () => undefined,
        clientLimiter: new AddressLimiter(new ManualClock("2026-11-20T09:00:00Z"), 60),
      }),
    )
    .use(bodyPolicyOption)
    .use(withRequestState)
    .post("/form", ({ body }) => ({ body }), { bodyPolicy: { kind: "form", limit: 100 } })
    .post("/json", ({ body, requestState }) => ({ body, id: requestState.requestId }))
    .post("/own", ({ body }) => ({ unreadable: isInvalidBody(body) }), {
      bodyPolicy: { kind: "json", limit: 1000, invalid: "route" },
    })
    .post("/stream", async ({ request }) => ({ fields: (await readMultipart(request, 500)).fields.size }), {
      bodyPolicy: { kind: "stream", limit: 500 },
    });
  routes = app.routes.map((r) => ({ method: r.method, path: r.path }));
  for (const r of app.routes) {
    const policy = (r.hooks as { detail?: Record<string, unknown> }).detail?.[BODY_POLICY_DETAIL];
    if (policy) policies.set(`${r.method} ${r.path}`, policy as BodyPolicy);
  }
  const post = (path: string, body: string | FormData, headers: Record<string, string> = {}) =>
    app.handle(new Request(`http://localhost${path}`, { method: "POST", body, headers }));
  return { app, post, logs };
}

describe("routes declare their bodies", () => {
  test("a form route with a 100-byte limit: parsed as a form, 413 past the limit", async () => {
    const { post } = tinyApp();
    const form = { "content-type": "application/x-www-form-urlencoded" };
    const ok = await post("/form", "a=1&b=%D0%B6", form);
    expect(await ok.json()).toEqual({ body: { a: "1", b: "ж" } });
    const details = await expectError(
      await post("/form", `a=${"x".repeat(100)}`, form),
      413,
      "payload_too_large",
    );
    expect(details.limit_bytes).toBe(100);
  });

  test("undeclared: JSON within 1 MB; bad JSON is invalid request body; the request id is on the context", async () => {
    const { post } = tinyApp();
    const ok = await post("/json", '{"a":[1]}', {
      "content-type": "application/json",
      "x-request-id": "r-1",
    });
    expect(await ok.json()).toEqual({ body: { a: [1] }, id: "r-1" });
    expect(ok.headers.get("x-request-id")).toBe("r-1");
    await expectError(
      await post("/json", "{nope", { "content-type": "application/json" }),
      400,
      "invalid request body",
    );
    await expectError(await post("/json", "x".repeat(1024 * 1024 + 1)), 413, "payload_too_large");
  });

  test("invalid: route hands an unreadable body to the route; stream leaves it to the route within its limit", async () => {
    const { post } = tinyApp();
    const own = await post("/own", "{nope", { "content-type": "application/json" });
    expect(await own.json()).toEqual({ unreadable: true });
    const multipart = new FormData();
    multipart.append("f", "0123456789");
    expect(await (await post("/stream", multipart)).json()).toEqual({ fields: 1 });
    const declared = await post("/stream", "x".repeat(501), {
      "content-type": "multipart/form-data; boundary=b",
      "content-length": "501",
    });
    expect((await expectError(declared, 413, "payload_too_large")).limit_bytes).toBe(500);
  });
});

describe("the core is route-agnostic", () => {
  test("no feature path is named in src/http", () => {
    const dir = join(ROOT, "src/http");
    for (const file of readdirSync(dir)) {
      const text = readFileSync(join(dir, file), "utf8");
      for (const path of ["/api/v1", "/admin", "/mcp", "/integration", "/payments", "/statements"]) {
        expect({ file, path, named: text.includes(`"${path}`) || text.includes(`\`${path}`) }).toEqual({
          file,
          path,
          named: false,
        });
      }
    }
  });

  test("core/ imports nothing of ours; auth/ and db/ never import http/", () => {
    const imports = (folder: string) =>
      readdirSync(join(ROOT, "src", folder), { recursive: true })
        .filter((f) => String(f).endsWith(".ts"))
        .flatMap((f) => [
          ...readFileSync(join(ROOT, "src", folder, String(f)), "utf8").matchAll(/from "(\.[^"]+)"/g),
        ])
        .map((m) => m[1] as string);
    expect(imports("core").filter((p) => p.startsWith(".."))).toEqual([]);
    for (const folder of ["auth", "db"])
      expect(imports(folder).filter((p) => p.includes("/http/"))).toEqual([]);
  });
});
