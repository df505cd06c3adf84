// Generators of hostile input: wrong types, odd strings, broken JSON, deep nesting, random bytes,
// prototype-pollution keys. Everything here is JSON text or bytes, ready to be sent as a body.
import fc from "fast-check";

const ODD_STRINGS = [
  "",
  " ",
  "   \t\n",
  "\u0000",
  "\u0000\u0001\u001f",
  "\ufeff",
  "\u202e\u2066",
  "😀🏦",
  "\ud800",
  "\udfff",
  "ООО «Ромашка»",
  "' OR 1=1 --",
  '"; DROP TABLE statements; --',
  "%s%n%x",
  "../../../etc/passwd",
  "<script>alert(1)</script>",
  "NaN",
  "Infinity",
  "null",
  "undefined",
  "true",
  "1e309",
  "-0",
  "__proto__",
  "constructor",
  "prototype",
  "2026-02-30",
  "2026-13-01",
  "0000-00-00",
  "9999-12-31",
  "2026-11-20T25:61:61Z",
  "00000000-0000-0000-0000-000000000000",
  "ffffffff-ffff-ffff-ffff-ffffffffffff",
  "not-a-uuid",
  "0.0.0.0/0",
  "::/0",
  "999.999.999.999",
  "svc_test_",
  "svc_live_0000000000000000000000000000000000000000",
  "c:1",
  "Yzox",
];

/** Strings that tend to break parsers and validators. */
export const oddString: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...ODD_STRINGS) },
  { weight: 2, arbitrary: fc.string({ maxLength: 40 }) },
  { weight: 2, arbitrary: fc.string({ unit: "grapheme", maxLength: 40 }) },
  { weight: 2, arbitrary: fc.string({ unit: "binary", maxLength: 40 }) },
  { weight: 1, arbitrary: fc.uuid().map((u) => u.toUpperCase()) },
  { weight: 1, arbitrary: fc.uuid() },
  { weight: 1, arbitrary: fc.date({ noInvalidDate: true }).map((d) => d.toISOString().slice(0, 10)) },
  { weight: 1, arbitrary: fc.date({ noInvalidDate: true }).map((d) => d.toISOString()) },
  // Long, but well inside the 1 MB body limit.
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.constantFrom("x", "Ж", "😀", " ", "\\"), fc.integer({ min: 200, max: 60_000 }))
      .map(([c, n]) => c.repeat(n)),
  },
);

const oddNumber: fc.Arbitrary<number> = fc.oneof(
  fc.integer(),
  fc.constantFrom(0, -1, 1, 2 ** 31, 2 ** 53, -(2 ** 53), 1e308, -1e308, 0.1, 1.005, 5e-324),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
);

/** Any value of a wrong or odd type. */
export const oddValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: oddString },
  { weight: 2, arbitrary: oddNumber },
  { weight: 1, arbitrary: fc.boolean() },
  { weight: 1, arbitrary: fc.constant(null) },
  { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  { weight: 1, arbitrary: fc.array(oddString, { maxLength: 4 }) },
  { weight: 1, arbitrary: fc.dictionary(oddString, fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 }) },
);

export type FieldModel = Record<string, fc.Arbitrary<unknown>>;

/**
 * An object with some of the route's fields, each valid-looking or of a wrong type, plus strays.
 * `validWeight` makes valid values that many times likelier than odd ones; `required` fields are
 * always present.
 */
export function fieldObject(
  model: FieldModel,
  opts: { validWeight?: number; required?: string[]; strays?: boolean } = {},
): fc.Arbitrary<Record<string, unknown>> {
  const withOdd: FieldModel = {};
  for (const [k, valid] of Object.entries(model)) {
    withOdd[k] = fc.oneof(
      { weight: opts.validWeight ?? 1, arbitrary: valid },
      { weight: 1, arbitrary: oddValue },
    );
  }
  return fc
    .tuple(
      fc.record(withOdd, { requiredKeys: opts.required ?? [] }),
      fc.dictionary(oddString, oddValue, { maxKeys: 3 }),
      fc.boolean(),
    )
    .map(([fields, extra, withExtra]) =>
      withExtra && opts.strays !== false ? { ...extra, ...fields } : fields,
    );
}

const PROTO_KEYS = [
  '"__proto__":{"polluted":"yes","isAdmin":true}',
  '"constructor":{"prototype":{"polluted":"yes"}}',
  '"__proto__":[1,2,3]',
  '"__proto__":null',
  '"prototype":{"admin":true}',
  '"constructor":"x"',
  '"__proto__":{"__proto__":{"polluted":"deep"}}',
  '"hasOwnProperty":1',
  '"toString":"x"',
  '"valueOf":{}',
];

/** Inserts prototype-pollution members at the top of a JSON object text (and in nested objects). */
function withProtoKeys(model: FieldModel): fc.Arbitrary<string> {
  return fc
    .tuple(
      fieldObject(model),
      fc.subarray(PROTO_KEYS, { minLength: 1 }),
      fc.boolean(),
      fc.constantFrom(...Object.keys(model)),
    )
    .map(([obj, keys, nested, field]) => {
      let json = JSON.stringify(obj);
      const members = keys.join(",");
      if (nested) {
        // The same keys inside an object placed on one of the route's own fields.
        json = JSON.stringify({ ...obj, [field]: "§" }).replace('"§"', `{${members}}`);
      }
      return json === "{}" ? `{${members}}` : `{${members},${json.slice(1)}`;
    });
}

/** JSON text cut at a random place (usually invalid). */
function truncated(model: FieldModel): fc.Arbitrary<string> {
  return fc.tuple(fieldObject(model), fc.nat()).map(([obj, at]) => {
    const json = JSON.stringify(obj);
    return json.slice(0, json.length > 1 ? at % (json.length - 1) : 0);
  });
}

/** Deeply nested arrays or objects, on their own or as the value of one of the route's fields. */
function deepNesting(fields: string[]): fc.Arbitrary<string> {
  return fc
    .tuple(
      fc.integer({ min: 50, max: 50_000 }),
      fc.constantFrom("array", "object", "mixed"),
      fc.option(fc.constantFrom(...fields), { nil: undefined }),
    )
    .map(([depth, kind, field]) => {
      const open = kind === "array" ? "[" : kind === "object" ? '{"a":' : '[{"a":';
      const close = kind === "array" ? "]" : kind === "object" ? "}" : "}]";
      const inner = `${open.repeat(depth)}1${close.repeat(depth)}`;
      return field === undefined ? inner : `{"${field}":${inner}}`;
    });
}

/** Bytes that are not JSON: random, invalid UTF-8, BOM-prefixed, or a different encoding. */
export const randomBytes: fc.Arbitrary<Uint8Array> = fc.oneof(
  fc.uint8Array({ maxLength: 512 }),
  fc.constantFrom(
    new Uint8Array([0xff, 0xfe, 0x7b, 0x00, 0x7d, 0x00]),
    new Uint8Array([0xef, 0xbb, 0xbf, 0x7b, 0x7d]),
    new Uint8Array([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xc3, 0x28, 0x22, 0x7d]),
    new Uint8Array([0x7b, 0x22, 0xed, 0xa0, 0x80, 0x22, 0x3a, 0x31, 0x7d]),
    new Uint8Array([0x00]),
  ),
);

const CONSTANT_BODIES = [
  "",
  " ",
  "null",
  "true",
  "0",
  '""',
  "[]",
  "{}",
  "[{}]",
  "{",
  "}",
  '{"a":}',
  "{'a':1}",
  '{"a":1,}',
  '{"a":1}{"b":2}',
  '{"a":NaN}',
  '{"a":1e99999}',
  "\ufeff{}",
];

export type BodyKind = "json" | "fields" | "proto" | "truncated" | "deep" | "bytes" | "constant";

export interface Body {
  kind: BodyKind;
  data: string | Uint8Array;
}

/** Every kind of hostile body for a JSON route whose fields are described by `model`. */
export function hostileBody(model: FieldModel): fc.Arbitrary<Body> {
  const fields = Object.keys(model);
  const tag =
    (kind: BodyKind) =>
    (data: string | Uint8Array): Body => ({ kind, data });
  return fc.oneof(
    { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 4 }).map((v) => tag("json")(JSON.stringify(v))) },
    { weight: 5, arbitrary: fieldObject(model).map((o) => tag("fields")(JSON.stringify(o))) },
    { weight: 2, arbitrary: withProtoKeys(model).map(tag("proto")) },
    { weight: 1, arbitrary: truncated(model).map(tag("truncated")) },
    { weight: 1, arbitrary: deepNesting(fields).map(tag("deep")) },
    { weight: 1, arbitrary: randomBytes.map(tag("bytes")) },
    { weight: 1, arbitrary: fc.constantFrom(...CONSTANT_BODIES).map(tag("constant")) },
  );
}

/** Content types a client might send with a JSON body, right or wrong. */
export const jsonContentType: fc.Arbitrary<string | null> = fc.oneof(
  { weight: 6, arbitrary: fc.constant("application/json") },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      "application/json; charset=utf-8",
      "application/json; charset=windows-1251",
      "text/plain",
      "application/x-www-form-urlencoded",
      "multipart/form-data",
      "multipart/form-data; boundary=x",
      "application/octet-stream",
      "application/xml",
      "*/*",
      "",
    ),
  },
  { weight: 1, arbitrary: fc.constant(null) },
);

export const validDate = fc
  .date({ min: new Date("2026-09-01T00:00:00Z"), max: new Date("2026-11-20T00:00:00Z"), noInvalidDate: true })
  .map((d) => d.toISOString().slice(0, 10));
