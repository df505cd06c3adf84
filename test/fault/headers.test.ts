// lanes: sqlite postgres
// Random Authorization and X-Request-Id headers on every kind of route: the token checks answer
// 401/403/429 envelopes, never a 5xx; a client request id is echoed only when it is at most 128
// printable ASCII characters, otherwise a fresh UUID is sent back.
import { beforeAll, describe, expect, test } from "bun:test";
import fc from "fast-check";
import { ADMIN_TOKEN, makeTestApp, type TestApp } from "../helpers/app";
import {
  expectCleanAgent,
  expectCleanRest,
  MCP,
  nextMinute,
  rawRequest,
  runs,
  SLOW,
  STATEMENTS,
  seed,
  seedWorld,
} from "./support";

let t: TestApp;
let world: ReturnType<typeof seedWorld>;

beforeAll(() => {
  t = makeTestApp();
  world = seedWorld(t);
});

const latin1 = fc.string({
  unit: fc.integer({ min: 0x20, max: 0xff }).map((c) => String.fromCharCode(c)),
  maxLength: 200,
});

const authorization = fc.oneof(
  fc.constantFrom("§integration", "§mcp", "§admin"),
  fc.constantFrom(
    "",
    "Bearer",
    "Bearer ",
    "bearer §integration",
    "Basic dXNlcjpwYXNz",
    "Bearer svc_test_",
    "Bearer svc_live_0000000000000000000000000000000000000000",
    "Bearer svc_test_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA!",
    "Bearer  §integration",
    "Bearer §integration extra",
    `Bearer ${ADMIN_TOKEN.slice(0, -1)}`,
  ),
  latin1.map((s) => `Bearer ${s}`),
  latin1,
);

const RAW: Record<string, () => string> = {
  "§integration": () => world.integration.token,
  "§mcp": () => world.mcp.token,
  "§admin": () => ADMIN_TOKEN,
};

/** A bare placeholder is a right header; inside a string it stands for the raw value. */
function bindAuth(value: string): string {
  const bare = RAW[value];
  if (bare) return `Bearer ${bare()}`;
  return value.replace(/§(integration|mcp|admin)/g, (m) => RAW[m]!());
}

const requestId = fc.oneof(
  fc.stringMatching(/^[\x20-\x7e]{1,128}$/),
  fc.stringMatching(/^[\x20-\x7e]{129,300}$/),
  latin1,
  fc.constant(""),
);

const ROUTES: { method: string; path: () => string; body?: string; agent?: boolean }[] = [
  { method: "GET", path: () => STATEMENTS },
  { method: "POST", path: () => STATEMENTS, body: '{"external_id":"h"}' },
  { method: "GET", path: () => `${STATEMENTS}/${crypto.randomUUID()}/export?format=csv` },
  { method: "GET", path: () => "/api/v1/integration/payments/imports/00000000-0000-4000-8000-000000000000" },
  { method: "POST", path: () => MCP, body: '{"jsonrpc":"2.0","id":1,"method":"ping"}', agent: true },
  { method: "DELETE", path: () => MCP, agent: true },
  { method: "GET", path: () => "/admin/api/companies" },
  { method: "POST", path: () => "/admin/api/companies", body: '{"name":"x"}' },
  { method: "GET", path: () => "/healthz" },
];

describe("hostile headers", () => {
  test(
    "random Authorization and X-Request-Id on every kind of route",
    async () => {
      nextMinute(t);
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom(...ROUTES.keys()),
          fc.option(authorization, { nil: undefined }),
          fc.option(requestId, { nil: undefined }),
          async (which, auth, rid) => {
            const route = ROUTES[which]!;
            const headers: Record<string, string> = { "content-type": "application/json" };
            if (auth !== undefined) headers.authorization = bindAuth(auth);
            if (rid !== undefined) headers["x-request-id"] = rid;
            const res = await rawRequest(t, route.method, route.path(), route.body, headers);
            const echoed = res.headers.get("x-request-id");
            const context = `${route.method} ${route.path()} auth=${JSON.stringify(auth)} rid=${JSON.stringify(rid)}`;
            if (route.agent) await expectCleanAgent(res, context);
            else await expectCleanRest(res, context);
            // Header values lose leading and trailing spaces on the way (Fetch rules).
            const sent = rid?.replace(/^[\t ]+|[\t ]+$/g, "");
            if (sent !== undefined && /^[A-Za-z0-9._:-]{1,128}$/.test(sent)) expect(echoed).toBe(sent);
            else
              expect(echoed).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
          },
        ),
        { numRuns: runs(300), seed: seed(5000) },
      );
    },
    SLOW,
  );
});
