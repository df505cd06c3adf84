// lanes: sqlite postgres
// Random query strings and path ids on the GET routes: export format/version, list filters,
// admin lists, audit-log filters. Never a 5xx, always the envelope on errors, X-Request-Id always.
import { beforeAll, describe, expect, test } from "bun:test";
import fc from "fast-check";
import { ADMIN_TOKEN, makeTestApp, type TestApp } from "../helpers/app";
import { readyStatement } from "../mcp/helpers";
import { paymentFile, upload } from "../payments/support";
import { oddString } from "./arbitraries";
import {
  expectCleanRest,
  IMPORTS,
  nextMinute,
  rawRequest,
  runs,
  SLOW,
  STATEMENTS,
  seed,
  seedWorld,
} from "./support";

const RUNS = 150;

let t: TestApp;
let world: ReturnType<typeof seedWorld>;
let statementId: string;
let processingId: string;
let importId: string;

beforeAll(async () => {
  t = makeTestApp();
  world = seedWorld(t);
  // A ready statement ordered through the REST route (so the token owns it), and one still processing.
  const order = await t.request("POST", STATEMENTS, {
    token: world.integration.token,
    body: {
      bank_account_id: world.account.bank_account_id,
      external_id: "q-1",
      date_from: "2026-11-01",
      date_to: "2026-11-05",
    },
  });
  statementId = ((await order.json()) as { statement_id: string }).statement_id;
  await t.services.poller.idle();
  await t.services.poller.tick();
  await t.services.poller.idle();
  await readyStatement(t, world.account.bank_account_id, "2026-10-01", "2026-10-02");
  const pending = await t.request("POST", STATEMENTS, {
    token: world.integration.token,
    body: {
      bank_account_id: world.other.bank_account_id,
      external_id: "q-2",
      date_from: "2026-11-01",
      date_to: "2026-11-02",
    },
  });
  processingId = ((await pending.json()) as { statement_id: string }).statement_id;
  const number = t.services.accounts.findById(world.account.bank_account_id)!.accountNumber;
  const up = await upload(t, world.integration.token, world.account.bank_account_id, paymentFile(number));
  importId = ((await up.json()) as { import_id: string }).import_id;
});

const KEYS = [
  "format",
  "version",
  "bank_account_id",
  "company_id",
  "api_token_id",
  "status",
  "limit",
  "cursor",
  "action",
  "since",
  "until",
];

const value = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom("1c", "csv", "json", "xml", "1C", "1.02", "1.03", "1.04", "") },
  {
    weight: 2,
    arbitrary: fc.constantFrom("processing", "ready", "failed", "0", "-1", "1", "100", "101", "500", "1e3"),
  },
  { weight: 2, arbitrary: fc.constantFrom("§account", "§company", "§token", "§statement") },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      "2026-11-20T00:00:00Z",
      "yesterday",
      "c:1",
      "Yzox",
      "Yzo5OTk5OTk5OTk5OTk5OTk5",
    ),
  },
  { weight: 3, arbitrary: oddString.filter((s) => s.length < 2000) },
);

/** A query string: known and unknown keys, repeated keys, raw broken escapes. */
const queryString = fc
  .tuple(
    fc.array(
      fc.tuple(
        fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...KEYS) }, { weight: 1, arbitrary: oddString }),
        value,
      ),
      { maxLength: 6 },
    ),
    fc.constantFrom(
      "",
      "&",
      "%",
      "%zz",
      "&&=&",
      "=x",
      "a[b]=1",
      "a[]=1&a[]=2",
      "__proto__[x]=1",
      "constructor[prototype][x]=1",
      "%00",
      "%E0%A4%A",
      "+",
    ),
  )
  .map(([pairs, raw]) => {
    // Lone surrogates cannot be percent-encoded; broken escapes come from the raw tails instead.
    const enc = (text: string) => encodeURIComponent(text.toWellFormed());
    const encoded = pairs.map(([k, v]) => `${enc(k)}=${enc(bindValue(v))}`);
    if (raw) encoded.push(raw);
    return encoded.join("&");
  });

function bindValue(v: string): string {
  switch (v) {
    case "§account":
      return world.account.bank_account_id;
    case "§company":
      return world.company.company_id;
    case "§token":
      return world.integration.api_token_id;
    case "§statement":
      return statementId;
    default:
      return v;
  }
}

interface GetRoute {
  name: string;
  path: () => string;
  auth: () => string;
}

const integration = () => `Bearer ${world.integration.token}`;
const admin = () => `Bearer ${ADMIN_TOKEN}`;

const routes: GetRoute[] = [
  { name: "export (ready)", path: () => `${STATEMENTS}/${statementId}/export`, auth: integration },
  { name: "export (processing)", path: () => `${STATEMENTS}/${processingId}/export`, auth: integration },
  { name: "statement list", path: () => STATEMENTS, auth: integration },
  { name: "statement poll", path: () => `${STATEMENTS}/${statementId}`, auth: integration },
  { name: "payment import", path: () => `${IMPORTS}/${importId}`, auth: integration },
  { name: "admin audit-log", path: () => "/admin/api/audit-log", auth: admin },
  { name: "admin companies", path: () => "/admin/api/companies", auth: admin },
  { name: "admin bank-accounts", path: () => "/admin/api/bank-accounts", auth: admin },
  { name: "admin tokens", path: () => "/admin/api/tokens", auth: admin },
  { name: "admin statements", path: () => "/admin/api/statements", auth: admin },
  { name: "admin sandbox requests", path: () => "/admin/api/sandbox/requests", auth: admin },
];

describe("random query strings on GET routes", () => {
  for (const [i, route] of routes.entries()) {
    test(
      `${route.name}: never 5xx, always the envelope`,
      async () => {
        nextMinute(t);
        const statuses = new Set<number>();
        await fc.assert(
          fc.asyncProperty(queryString, async (query) => {
            const res = await rawRequest(t, "GET", `${route.path()}?${query}`, undefined, {
              authorization: route.auth(),
            });
            const { status } = await expectCleanRest(res, `${route.name} ?${query.slice(0, 200)}`);
            statuses.add(status);
          }),
          { numRuns: runs(RUNS), seed: seed(4000 + i) },
        );
        expect(statuses.size).toBeGreaterThan(0);
      },
      SLOW,
    );
  }

  test(
    "export: every format and version combination answers as documented",
    async () => {
      nextMinute(t);
      for (const format of ["1c", "csv", "json", "xml", "", undefined]) {
        for (const version of ["1.02", "1.03", "2", "", undefined]) {
          const params = new URLSearchParams();
          if (format !== undefined) params.set("format", format);
          if (version !== undefined) params.set("version", version);
          const res = await rawRequest(t, "GET", `${STATEMENTS}/${statementId}/export?${params}`, undefined, {
            authorization: integration(),
          });
          const ok =
            format === "1c"
              ? version === undefined || version === "1.02" || version === "1.03"
              : format === "csv" || format === "json"
                ? version === undefined
                : false;
          if (ok) {
            expect(res.status).toBe(200);
            expect(res.headers.get("x-request-id")).toBeTruthy();
            expect((await res.arrayBuffer()).byteLength).toBeGreaterThan(0);
          } else {
            const { status } = await expectCleanRest(res, `format=${format} version=${version}`);
            expect(status).toBe(400);
          }
        }
      }
    },
    SLOW,
  );

  test(
    "random path ids on GET routes: 400 invalid request body or 404, never 5xx",
    async () => {
      nextMinute(t);
      const paths = [
        (id: string) => `${STATEMENTS}/${id}`,
        (id: string) => `${STATEMENTS}/${id}/export?format=csv`,
        (id: string) => `${IMPORTS}/${id}`,
      ];
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom(...paths.keys()),
          fc.oneof(fc.uuid(), fc.stringMatching(/^[A-Za-z0-9_~%-]{1,80}$/)),
          async (which, id) => {
            const res = await rawRequest(t, "GET", paths[which]!(id), undefined, {
              authorization: integration(),
            });
            const { status } = await expectCleanRest(res, `GET ${paths[which]!(id)}`);
            expect([400, 404]).toContain(status);
          },
        ),
        { numRuns: runs(RUNS), seed: seed(4100) },
      );
    },
    SLOW,
  );
});
