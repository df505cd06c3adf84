// lanes: sqlite postgres
// Hostile multipart uploads on POST /api/v1/integration/payments/imports: random parts, random
// bytes, broken boundaries, cut bodies, mangled 1C files. Never a 5xx; a 201 always stores a
// whole import, an error stores nothing.
import { beforeAll, describe, expect, test } from "bun:test";
import fc from "fast-check";
import { encodeCp1251 } from "../../src/formats/onec";
import { BASE, makeTestApp, type TestApp } from "../helpers/app";
import { paymentFileText, paymentTableCounts } from "../payments/support";
import { oddString, randomBytes } from "./arbitraries";
import {
  expectCleanRest,
  expectPrototypesClean,
  IMPORTS,
  nextMinute,
  runs,
  SLOW,
  seed,
  seedWorld,
} from "./support";

const RUNS = 200;

let t: TestApp;
let world: ReturnType<typeof seedWorld>;
let accountNumber: string;
let validText: string;
let otherNumber: string;

beforeAll(() => {
  t = makeTestApp();
  world = seedWorld(t);
  accountNumber = t.services.accounts.findById(world.account.bank_account_id)!.accountNumber;
  otherNumber = t.services.accounts.findById(world.other.bank_account_id)!.accountNumber;
  validText = paymentFileText(accountNumber, [{ number: "1" }, { number: "2" }]);
});

/** A valid payment file with a few lines dropped, duplicated or given odd values; sometimes bytes flipped. */
const mangledFile: fc.Arbitrary<Uint8Array> = fc
  .tuple(
    fc.array(
      fc.tuple(fc.constantFrom("drop", "dup", "value", "raw"), fc.nat(), oddString, fc.nat({ max: 255 })),
      { maxLength: 4 },
    ),
    fc.constantFrom("cp1251", "utf8"),
    fc.boolean(),
  )
  .map(([edits, encoding, swapAccount]) => {
    const lines = (swapAccount ? validText.replaceAll(accountNumber, otherNumber) : validText).split("\r\n");
    const flips: [number, number][] = [];
    for (const [op, at, value, byte] of edits) {
      const i = at % lines.length;
      if (op === "drop") lines.splice(i, 1);
      else if (op === "dup") lines.splice(i, 0, lines[i]!);
      else if (op === "value") lines[i] = `${(lines[i] ?? "").split("=")[0]}=${value}`;
      else flips.push([at, byte]);
    }
    const text = lines.join("\r\n");
    const bytes = encoding === "cp1251" ? encodeCp1251(text) : new TextEncoder().encode(text);
    for (const [at, byte] of flips) if (bytes.length > 0) bytes[at % bytes.length] = byte;
    return bytes;
  });

const fileContent: fc.Arbitrary<Uint8Array> = fc.oneof(
  { weight: 3, arbitrary: mangledFile },
  { weight: 2, arbitrary: randomBytes },
  { weight: 1, arbitrary: fc.constant(new Uint8Array()) },
  {
    weight: 1,
    arbitrary: fc.string({ unit: "binary", maxLength: 200 }).map((s) => new TextEncoder().encode(s)),
  },
);

type Part =
  | { name: string; kind: "field"; value: string }
  | { name: string; kind: "file"; bytes: Uint8Array; filename: string };

const partName = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom("bank_account_id", "file") },
  { weight: 1, arbitrary: oddString.filter((s) => s.length < 100) },
);
const part: fc.Arbitrary<Part> = fc.oneof(
  fc
    .tuple(partName, fc.oneof(fc.constant("§account"), fc.uuid(), oddString))
    .map(([name, value]) => ({ name, kind: "field" as const, value })),
  fc
    .tuple(partName, fileContent, fc.oneof(fc.constant("payments.txt"), oddString))
    .map(([name, bytes, filename]) => ({ name, kind: "file" as const, bytes, filename })),
);

/** Usually the two expected parts (the file mangled or not) among random others; sometimes only random parts. */
const formParts: fc.Arbitrary<Part[]> = fc
  .tuple(fc.boolean(), mangledFile, fc.array(part, { maxLength: 3 }), fc.nat())
  .map(([withBase, file, extra, at]) => {
    if (!withBase) return extra;
    const base: Part[] = [
      { name: "bank_account_id", kind: "field", value: "§account" },
      { name: "file", kind: "file", bytes: file, filename: "payments.txt" },
    ];
    const parts = [...extra];
    parts.splice(at % (parts.length + 1), 0, ...base);
    return parts;
  });

/** A well-formed multipart body built by FormData from random parts. */
function formRequest(parts: Part[]): Request {
  const form = new FormData();
  for (const p of parts) {
    if (p.kind === "field")
      form.append(p.name, p.value === "§account" ? world.account.bank_account_id : p.value);
    else form.append(p.name, new Blob([p.bytes as Uint8Array<ArrayBuffer>]), p.filename);
  }
  return new Request(`${BASE}${IMPORTS}`, {
    method: "POST",
    headers: { authorization: `Bearer ${world.integration.token}` },
    body: form,
  });
}

/** A multipart body written by hand, then possibly broken: cut, wrong boundary, bad headers. */
const rawMultipart = fc
  .tuple(
    fc.stringMatching(/^[A-Za-z0-9'()+_,./:=?-]{1,70}$/),
    fc.array(part, { maxLength: 4 }),
    fc.constantFrom(
      "intact",
      "cut",
      "wrong-boundary",
      "no-boundary",
      "no-end",
      "bad-headers",
      "quoted-boundary",
    ),
    fc.nat(),
  )
  .map(([boundary, parts, breakage, at]) => {
    const enc = new TextEncoder();
    const chunks: Uint8Array[] = [];
    for (const p of parts) {
      const disposition =
        breakage === "bad-headers"
          ? `Content-Disposition: form-data; name=${p.name}; filename*=UTF-8''%FF%FE`
          : `Content-Disposition: form-data; name="${p.name}"${p.kind === "file" ? `; filename="${p.filename}"` : ""}`;
      chunks.push(enc.encode(`--${boundary}\r\n${disposition}\r\n\r\n`));
      chunks.push(
        p.kind === "file"
          ? p.bytes
          : enc.encode(p.value === "§account" ? world.account.bank_account_id : p.value),
      );
      chunks.push(enc.encode("\r\n"));
    }
    if (breakage !== "no-end") chunks.push(enc.encode(`--${boundary}--\r\n`));
    let body = Buffer.concat(chunks);
    if (breakage === "cut" && body.length > 0) body = body.subarray(0, at % body.length);
    const contentType =
      breakage === "wrong-boundary"
        ? "multipart/form-data; boundary=not-the-boundary"
        : breakage === "no-boundary"
          ? "multipart/form-data"
          : breakage === "quoted-boundary"
            ? `multipart/form-data; boundary="${boundary}"`
            : `multipart/form-data; boundary=${boundary}`;
    return { body: new Uint8Array(body), contentType, breakage };
  });

describe("hostile multipart uploads", () => {
  test(
    "random parts through FormData: never 5xx; a 201 stores one whole import",
    async () => {
      nextMinute(t);
      const codes = new Map<string, number>();
      await fc.assert(
        fc.asyncProperty(formParts, async (parts) => {
          const before = paymentTableCounts(t);
          const res = await t.app.handle(formRequest(parts));
          const { status, json } = await expectCleanRest(res, `form ${parts.map((p) => p.name).join(",")}`);
          const code = status === 201 ? "201" : (json as { error: { code: string } }).error.code;
          codes.set(code, (codes.get(code) ?? 0) + 1);
          const after = paymentTableCounts(t);
          if (status === 201) {
            const view = json as { import_id: string; items: unknown[] };
            expect(after.payment_imports).toBe(before.payment_imports! + 1);
            expect(after.payment_items).toBe(before.payment_items! + view.items.length);
          } else {
            expect(after).toEqual(before);
          }
        }),
        { numRuns: runs(RUNS), seed: seed(2000) },
      );
      // The generators reach every layer: form reading, the 1C reader and checks, the account check, storage.
      for (const code of ["201", "invalid request body", "validation_error", "account_mismatch"]) {
        expect(codes.get(code) ?? 0, code).toBeGreaterThan(0);
      }
      expectPrototypesClean();
    },
    SLOW,
  );

  test(
    "hand-written and broken multipart bodies: never 5xx, nothing stored on error",
    async () => {
      nextMinute(t);
      await fc.assert(
        fc.asyncProperty(rawMultipart, async ({ body, contentType, breakage }) => {
          const before = paymentTableCounts(t);
          const res = await t.app.handle(
            new Request(`${BASE}${IMPORTS}`, {
              method: "POST",
              headers: { authorization: `Bearer ${world.integration.token}`, "content-type": contentType },
              body,
            }),
          );
          const { status } = await expectCleanRest(res, `raw multipart (${breakage})`);
          if (status !== 201) expect(paymentTableCounts(t)).toEqual(before);
        }),
        { numRuns: runs(RUNS), seed: seed(2100) },
      );
    },
    SLOW,
  );

  test(
    "random bytes and wrong content types: never 5xx",
    async () => {
      nextMinute(t);
      await fc.assert(
        fc.asyncProperty(
          randomBytes,
          fc.constantFrom(
            "multipart/form-data",
            "multipart/form-data; boundary=",
            "multipart/form-data; boundary=a",
            'multipart/form-data; boundary=""',
            "multipart/mixed; boundary=a",
            "application/json",
            "application/octet-stream",
            "text/plain",
          ),
          async (bytes, contentType) => {
            const res = await t.app.handle(
              new Request(`${BASE}${IMPORTS}`, {
                method: "POST",
                headers: { authorization: `Bearer ${world.integration.token}`, "content-type": contentType },
                body: bytes,
              }),
            );
            const { status } = await expectCleanRest(res, `bytes as ${contentType}`);
            expect(status).toBeGreaterThanOrEqual(400);
          },
        ),
        { numRuns: runs(100), seed: seed(2200) },
      );
    },
    SLOW,
  );

  test(
    "a file over 10 MB is 413, and nothing is stored",
    async () => {
      nextMinute(t);
      const before = paymentTableCounts(t);
      const big = new Uint8Array(10 * 1024 * 1024 + 1).fill(0x41);
      const res = await t.app.handle(
        formRequest([
          { name: "bank_account_id", kind: "field", value: "§account" },
          { name: "file", kind: "file", bytes: big, filename: "big.txt" },
        ]),
      );
      expect((await expectCleanRest(res)).status).toBe(413);
      expect(paymentTableCounts(t)).toEqual(before);
    },
    SLOW,
  );
});
