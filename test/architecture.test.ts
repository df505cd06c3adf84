// lanes: sqlite
// The walls of the house (../shared/DESIGN.md, "Rules of the house"), read from the imports of
// src/: agents and 1C's statement login have no path to money, the shared layers import no
// feature (the codecs nothing of ours), the banks know nothing of HTTP or agents, and no
// module imports itself back. Type-only imports count: a wall is about what a module knows.
//
// KNOWN_BREACHES are the imports that break a wall today, each to be moved to where it belongs;
// the test fails on any other breach, and on a listed one that is gone (take it off the list).
// The storage dialects differ only inside src/db/: no code outside it asks which one it runs on
// (KNOWN_DIALECT_BRANCHES lists the places that still do, on the same terms).
import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

const SRC = resolve(import.meta.dir, "../src");

/** Top-level folders that are features (everything in src/ that is not a shared layer). */
const FEATURES = [
  "admin",
  "audit",
  "banks",
  "directbank",
  "mcp",
  "oauth",
  "ops",
  "payments",
  "statements",
  "sync",
] as const;
/** Modules at the top of src/: the composition root and its wiring, which may import anything. */
const ROOT_MODULES = ["app", "container", "main", "demo", "config", "row-types-check"];

/** What each shared layer may import besides itself. */
const SHARED_LAYERS: Record<string, string[]> = {
  core: [],
  formats: [],
  db: ["core", "formats"],
  auth: ["core", "formats", "db"],
  http: ["core", "auth"],
};

const KNOWN_BREACHES = new Set<string>([]);

/** Lines outside src/db/ that still branch on the dialect ("<file>: <line, trimmed>"). */
const KNOWN_DIALECT_BRANCHES = new Set<string>([]);

/** A branch on the dialect: a port's or store's `dialect`, or a `kind` compared with a dialect's name. */
const DIALECT_BRANCH =
  /\bdialect\s*[!=]==|\bkind\s*[!=]==\s*["'](?:postgres|sqlite)["']|["'](?:postgres|sqlite)["']\s*[!=]==\s*[\w.]*\bkind\b/;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return /\.tsx?$/.test(name) && !name.endsWith(".d.ts") ? [path] : [];
  });
}

/** Every line of src/ outside db/ that branches on the dialect, as "<file>: <line, trimmed>". */
function dialectBranches(): string[] {
  return sourceFiles(SRC)
    .map((file) => relative(SRC, file))
    .filter((file) => !file.startsWith("db/"))
    .flatMap((file) =>
      readFileSync(join(SRC, file), "utf8")
        .split("\n")
        .map((line) => line.trim())
        .filter((line) => !line.startsWith("//") && !line.startsWith("*") && DIALECT_BRANCH.test(line))
        .map((line) => `${file}: ${line}`),
    );
}

const IMPORT =
  /(?:^|\n)\s*(?:import|export)\s[^;]*?from\s+["']([^"']+)["']|import\s*\(\s*["']([^"']+)["']\s*\)|(?:^|\n)\s*import\s+["']([^"']+)["']/g;

function resolveImport(from: string, specifier: string): string | null {
  if (!specifier.startsWith(".")) return null;
  const base = resolve(dirname(from), specifier);
  for (const candidate of [
    base,
    `${base}.ts`,
    `${base}.tsx`,
    join(base, "index.ts"),
    join(base, "index.tsx"),
  ]) {
    if (existsSync(candidate) && statSync(candidate).isFile()) return candidate;
  }
  throw new Error(`${relative(SRC, from)}: cannot resolve "${specifier}"`);
}

/** Every import of src/ as [importer, imported], both relative to src/; packages as "pkg:<name>". */
function importsOfSrc(): [string, string][] {
  const edges: [string, string][] = [];
  for (const file of sourceFiles(SRC)) {
    for (const match of readFileSync(file, "utf8").matchAll(IMPORT)) {
      const specifier = match[1] ?? match[2] ?? match[3] ?? "";
      const target = resolveImport(file, specifier);
      // Files outside src/ (the embedded migrations, package.json) count as packages do.
      const inSrc = target !== null && !relative(SRC, target).startsWith("..");
      edges.push([relative(SRC, file), inSrc ? relative(SRC, target) : `pkg:${specifier}`]);
    }
  }
  return edges;
}

/** The top-level folder of a module, or its name without extension for a module at the top. */
const areaOf = (module: string): string =>
  module.includes("/") ? (module.split("/")[0] ?? module) : module.replace(/\.tsx?$/, "");

const edges = importsOfSrc();
const ours = edges.filter(([, to]) => !to.startsWith("pkg:"));

function breaches(rule: (fromArea: string, toArea: string, from: string, to: string) => boolean): string[] {
  return edges
    .filter(([from, to]) => rule(areaOf(from), areaOf(to), from, to))
    .map(([from, to]) => `${from} -> ${to}`)
    .filter((edge) => !KNOWN_BREACHES.has(edge));
}

/** Every module reachable from the modules of `area`. */
function reachableFrom(area: string): Set<string> {
  const next = new Map<string, string[]>();
  for (const [from, to] of ours) next.set(from, [...(next.get(from) ?? []), to]);
  const seen = new Set<string>();
  const stack = ours.map(([from]) => from).filter((m) => areaOf(m) === area);
  while (stack.length > 0) {
    const module = stack.pop() as string;
    if (seen.has(module)) continue;
    seen.add(module);
    stack.push(...(next.get(module) ?? []));
  }
  return seen;
}

describe("the walls of src/", () => {
  test("the import reader sees the house (a module of each area, and its imports)", () => {
    const areas = new Set(sourceFiles(SRC).map((file) => areaOf(relative(SRC, file))));
    for (const area of ["core", "db", "auth", "http", "formats", "banks", "statements", "mcp", "payments"]) {
      expect(areas.has(area)).toBe(true);
    }
    expect(ours).toContainEqual(["app.ts", "statements/routes.ts"]);
    expect(ours).toContainEqual(["mcp/tools/registry.ts", "auth/access-policy.ts"]);
  });

  test("agents, OAuth and 1C's statement login have no path to payments, not even through another module", () => {
    for (const area of ["mcp", "oauth", "directbank"]) {
      const reached = [...reachableFrom(area)].filter((m) => areaOf(m) === "payments");
      expect({ area, reached }).toEqual({ area, reached: [] });
    }
  });

  test("mcp/ never imports admin/", () => {
    expect(breaches((from, to) => from === "mcp" && to === "admin")).toEqual([]);
  });

  test("the shared layers (core, formats, db, auth, http) import no feature and nothing above them", () => {
    const found = breaches((from, to, _f, target) => {
      const allowed = SHARED_LAYERS[from];
      if (!allowed || target.startsWith("pkg:")) return false;
      return to !== from && !allowed.includes(to);
    });
    expect(found).toEqual([]);
  });

  test("banks/ knows nothing of HTTP or agents", () => {
    const found = breaches(
      (from, to, _f, target) =>
        from === "banks" &&
        (["http", "mcp", "oauth", "admin", ...ROOT_MODULES].includes(to) || target === "pkg:elysia"),
    );
    expect(found).toEqual([]);
  });

  test("no feature imports the composition root", () => {
    const found = breaches(
      (from, to) =>
        (FEATURES as readonly string[]).includes(from) && ["app", "container", "main"].includes(to),
    );
    expect(found).toEqual([]);
  });

  test("no module imports itself back through others (no cycles)", () => {
    const next = new Map<string, string[]>();
    for (const [from, to] of ours) {
      if (!KNOWN_BREACHES.has(`${from} -> ${to}`)) next.set(from, [...(next.get(from) ?? []), to]);
    }
    const cycles: string[][] = [];
    const state = new Map<string, "open" | "done">();
    const path: string[] = [];
    const visit = (module: string) => {
      state.set(module, "open");
      path.push(module);
      for (const to of next.get(module) ?? []) {
        if (state.get(to) === "open") cycles.push([...path.slice(path.indexOf(to)), to]);
        else if (!state.has(to)) visit(to);
      }
      path.pop();
      state.set(module, "done");
    };
    for (const module of next.keys()) if (!state.has(module)) visit(module);
    expect(cycles).toEqual([]);
  });

  test("the dialect reader sees a branch on the dialect, and only such a branch", () => {
    for (const line of [
      'if (port.dialect === "sqlite") {',
      "this.port.dialect !== 'postgres'",
      'store.kind === "postgres" ? a : b',
      'if (kind !== "sqlite") return;',
      '"postgres" === store.kind',
    ]) {
      expect({ line, branch: DIALECT_BRANCH.test(line) }).toEqual({ line, branch: true });
    }
    for (const line of [
      'outcome.kind === "created"',
      'kind: "postgres",',
      'dialect: "sqlite",',
      'kind === "sqlite_busy"',
    ]) {
      expect({ line, branch: DIALECT_BRANCH.test(line) }).toEqual({ line, branch: false });
    }
  });

  test("no code outside db/ branches on the storage dialect (db/ answers for each one)", () => {
    expect(dialectBranches().filter((line) => !KNOWN_DIALECT_BRANCHES.has(line))).toEqual([]);
  });

  test("every known dialect branch still exists (a moved one comes off the list)", () => {
    const present = new Set(dialectBranches());
    expect([...KNOWN_DIALECT_BRANCHES].filter((line) => !present.has(line))).toEqual([]);
  });

  test("every known breach still exists (a mended one comes off the list)", () => {
    const present = new Set(edges.map(([from, to]) => `${from} -> ${to}`));
    expect([...KNOWN_BREACHES].filter((edge) => !present.has(edge))).toEqual([]);
  });
});
