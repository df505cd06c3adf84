// Cuts Tochka's published OpenAPI document down to the operations svc calls and writes it to
// test/fixtures/tochka-openapi.json, which the fake Tochka server and its contract checks read.
//
//   bun scripts/tochka-fixture.ts [path/to/openapi.json [output.json]]
//
// The source path may also come from TOCHKA_OPENAPI; the default is the copy in shared/ beside the
// repository. Another output path lets a test compare a fresh cut with the committed one. Prose (description, example(s), summary) is dropped so that a diff of the fixture shows
// only changes that matter to the contract; keys are sorted for the same reason.
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

/** The operations svc uses, by path, with the methods it calls on each. */
const OPERATIONS: Readonly<Record<string, readonly string[]>> = {
  "/open-banking/v1.0/accounts": ["get"],
  "/open-banking/v1.0/accounts/{accountId}/balances": ["get"],
  "/open-banking/v1.0/statements": ["post"],
  "/open-banking/v1.0/accounts/{accountId}/statements/{statementId}": ["get"],
  "/payment/v1.0/for-sign": ["post"],
  "/payment/v1.0/status/{requestId}": ["get"],
  "/consent/v1.0/consents": ["post"],
};

const PROSE = new Set(["description", "example", "examples", "summary"]);

/**
 * Objects whose keys are names (of properties, paths, status codes, media types...) rather than
 * keywords: a schema property called "description" must survive the stripping.
 */
const NAME_MAPS = new Set([
  "properties",
  "patternProperties",
  "$defs",
  "definitions",
  "dependentSchemas",
  "schemas",
  "paths",
  "responses",
  "content",
  "headers",
  "encoding",
  "links",
  "callbacks",
  "securitySchemes",
  "scopes",
  "variables",
  "mapping",
]);

const repoRoot = resolve(dirname(import.meta.path), "..");
const source = resolve(
  repoRoot,
  process.argv[2] ?? process.env["TOCHKA_OPENAPI"] ?? "../shared/banks/tochka/openapi.json",
);
const target = resolve(repoRoot, process.argv[3] ?? "test/fixtures/tochka-openapi.json");

function isObject(value: Json | undefined): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function objectAt(value: Json | undefined, what: string): JsonObject {
  if (!isObject(value)) throw new Error(`${what}: expected an object in ${source}`);
  return value;
}

/** Drops prose keywords; `inNameMap` says the keys of this object are names, not keywords. */
function stripProse(value: Json, inNameMap = false): Json {
  if (Array.isArray(value)) return value.map((item) => stripProse(item));
  if (!isObject(value)) return value;
  const out: JsonObject = {};
  for (const [key, child] of Object.entries(value)) {
    if (!inNameMap && PROSE.has(key)) continue;
    out[key] = stripProse(child, !inNameMap && NAME_MAPS.has(key));
  }
  return out;
}

function sortKeys(value: Json): Json {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (!isObject(value)) return value;
  const out: JsonObject = {};
  for (const key of Object.keys(value).sort()) out[key] = sortKeys(value[key] as Json);
  return out;
}

/** Every "#/components/<kind>/<name>" reachable from `roots`, following references transitively. */
function referencedComponents(doc: JsonObject, roots: Json[]): Map<string, Set<string>> {
  const components = objectAt(doc["components"], "components");
  const found = new Map<string, Set<string>>();
  const queue = [...roots];
  while (queue.length > 0) {
    const node = queue.pop() as Json;
    if (Array.isArray(node)) {
      queue.push(...node);
      continue;
    }
    if (!isObject(node)) continue;
    const ref = node["$ref"];
    if (typeof ref === "string") {
      const match = /^#\/components\/([^/]+)\/([^/]+)$/.exec(ref);
      if (match === null) throw new Error(`unsupported $ref ${ref}`);
      const [, kind, name] = match as unknown as [string, string, string];
      const names = found.get(kind) ?? new Set<string>();
      if (!names.has(name)) {
        names.add(name);
        found.set(kind, names);
        const target = objectAt(components[kind], `components.${kind}`)[name];
        if (target === undefined) throw new Error(`dangling $ref ${ref}`);
        queue.push(target);
      }
    }
    queue.push(...Object.values(node));
  }
  return found;
}

const doc = objectAt(JSON.parse(readFileSync(source, "utf8")) as Json, "document");
const info = objectAt(doc["info"], "info");
const paths = objectAt(doc["paths"], "paths");

const keptPaths: JsonObject = {};
const securityNames = new Set<string>();
for (const [path, methods] of Object.entries(OPERATIONS)) {
  const item = objectAt(paths[path], `paths["${path}"]`);
  const kept: JsonObject = {};
  // Path-level parameters and servers apply to every method of the path.
  for (const key of ["parameters", "servers"]) if (item[key] !== undefined) kept[key] = item[key];
  for (const method of methods) {
    const operation = objectAt(item[method], `${method.toUpperCase()} ${path}`);
    kept[method] = operation;
    const security = operation["security"] ?? doc["security"];
    if (Array.isArray(security)) {
      for (const requirement of security)
        if (isObject(requirement)) for (const k in requirement) securityNames.add(k);
    }
  }
  keptPaths[path] = kept;
}

const allComponents = objectAt(doc["components"], "components");
const keptComponents: JsonObject = {};
for (const [kind, names] of referencedComponents(doc, Object.values(keptPaths))) {
  const all = objectAt(allComponents[kind], `components.${kind}`);
  const kept: JsonObject = {};
  for (const name of names) kept[name] = all[name] as Json;
  keptComponents[kind] = kept;
}
if (securityNames.size > 0) {
  const schemes = objectAt(allComponents["securitySchemes"], "components.securitySchemes");
  const kept: JsonObject = {};
  for (const name of securityNames) kept[name] = schemes[name] ?? null;
  keptComponents["securitySchemes"] = kept;
}

const fixture: JsonObject = {
  openapi: doc["openapi"] ?? null,
  info: { title: info["title"] ?? null, version: info["version"] ?? null },
  servers: doc["servers"] ?? [],
  paths: keptPaths,
  components: keptComponents,
};

// The repository's formatter folds short arrays onto one line; formatting here keeps the file
// unchanged by `biome check --write`, so regenerating shows only real differences.
const biome = Bun.spawnSync(
  [
    resolve(repoRoot, "node_modules/.bin/biome"),
    "format",
    "--stdin-file-path=test/fixtures/tochka-openapi.json",
  ],
  {
    stdin: Buffer.from(`${JSON.stringify(sortKeys(stripProse(fixture)), null, 2)}\n`),
    stdout: "pipe",
    stderr: "pipe",
  },
);
if (biome.exitCode !== 0) throw new Error(`biome format failed: ${biome.stderr.toString()}`);
writeFileSync(target, biome.stdout);
const schemaCount = Object.keys(objectAt(keptComponents["schemas"] ?? {}, "schemas")).length;
console.log(`${target}: ${Object.keys(keptPaths).length} paths, ${schemaCount} schemas (${info["version"]})`);
