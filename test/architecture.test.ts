/**
 * The house a newcomer changes: ARCHITECTURE.md is a short page that stays true (every module of
 * `src/` with the tests that hold it, every path it names real), and no module grows past what one
 * reading holds without saying why.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("..", import.meta.url));
const architecture = readFileSync(join(root, "ARCHITECTURE.md"), "utf8");

/** About what a reader takes in ten minutes, at a careful 250 words a minute. */
const READING_WORDS = 2_500;

function filesUnder(folder: string, suffix: string): string[] {
  return readdirSync(join(root, folder), { recursive: true, encoding: "utf8" })
    .filter((path) => path.endsWith(suffix))
    .map((path) => join(folder, path).split("\\").join("/"))
    .sort();
}

/** The rows of the table under `## Modules and their tests`: module path → test paths (last column). */
function moduleTable(): Map<string, string[]> {
  const start = architecture.indexOf("## Modules and their tests");
  if (start === -1) throw new Error('ARCHITECTURE.md has no "## Modules and their tests"');
  const end = architecture.indexOf("\n## ", start + 1);
  const rows = architecture
    .slice(start, end === -1 ? undefined : end)
    .split("\n")
    .filter((line) => line.startsWith("| `"));
  const table = new Map<string, string[]>();
  for (const row of rows) {
    // | module | its one job | tests |
    const cells = row.split("|").slice(1, -1);
    const [module = "", tests = ""] = [cells[0], cells.at(-1)];
    const paths = (text: string) => [...text.matchAll(/`([^`]+)`/g)].map((match) => match[1] ?? "");
    for (const path of paths(module)) table.set(path, paths(tests));
  }
  return table;
}

describe("ARCHITECTURE.md", () => {
  it("reads in about ten minutes", () => {
    const words = architecture.split(/\s+/).filter(Boolean).length;
    expect(words, `ARCHITECTURE.md has ${words} words`).toBeLessThanOrEqual(READING_WORDS);
  });

  it("names every module of src/ once in its table, and no module that is gone", () => {
    const listed = [...moduleTable().keys()].sort();
    expect(listed).toEqual(filesUnder("src", ".ts"));
  });

  it("names for each module tests that exist and run it, through their imports", () => {
    for (const [module, tests] of moduleTable()) {
      expect(tests.length, `${module} has no tests in the table`).toBeGreaterThan(0);
      for (const test of tests) {
        expect(test, `${module}'s tests`).toMatch(/^test\/.*\.test\.ts$/);
        expect(existsSync(join(root, test)), `${test}, named for ${module}`).toBe(true);
        expect(reachableFrom(test).has(module), `${test} does not reach ${module}`).toBe(true);
      }
    }
  });
});

/** The layers of ARCHITECTURE.md, in order: a module imports from its own layer and those before. */
const LAYERS: readonly (readonly string[])[] = [
  ["src/core/", "src/version.ts"],
  ["src/telemetry/"],
  ["src/setup/"],
  ["src/attach/", "src/middleware.ts"],
  ["src/formats/", "src/stacks/"],
  ["src/cli/", "src/index.ts"],
];

function layerOf(path: string): number {
  const layer = LAYERS.findIndex((prefixes) => prefixes.some((prefix) => path.startsWith(prefix)));
  if (layer === -1) throw new Error(`${path} is in no layer of ARCHITECTURE.md`);
  return layer;
}

/** The modules of `src/` a module imports, by path. */
function importsOf(path: string): string[] {
  const source = readFileSync(join(root, path), "utf8");
  return [...source.matchAll(/(?:from|import)\s*\(?\s*"(\.{1,2}\/[^"]+)"/g)].map((match) =>
    join(dirname(path), (match[1] ?? "").replace(/\.js$/, ".ts"))
      .split("\\")
      .join("/"),
  );
}

/** The package's entry points, by the names tests and examples import them under. */
const PACKAGE_ENTRIES: Readonly<Record<string, string>> = {
  "tool-call-resilience": "src/index.ts",
  "tool-call-resilience/formats": "src/formats/index.ts",
  "tool-call-resilience/setup": "src/setup/index.ts",
  "tool-call-resilience/semconv": "src/telemetry/semconv.ts",
};

/**
 * What a test file runs, beyond its own imports: the package test installs the packed package and
 * runs every entry point and the command; the examples test runs every example by its path.
 */
const RUNS: Readonly<Record<string, readonly string[]>> = {
  "test/package/consumer.test.ts": [...Object.values(PACKAGE_ENTRIES), "src/cli/main.ts"],
  "test/examples.test.ts": filesUnder("examples", ".ts"),
};

/** Every file of the project a test file reaches through its imports (and what it runs). */
function reachableFrom(test: string): Set<string> {
  const reached = new Set<string>();
  const pending = [test];
  for (let path = pending.pop(); path !== undefined; path = pending.pop()) {
    if (reached.has(path) || !existsSync(join(root, path)) || !path.endsWith(".ts")) continue;
    reached.add(path);
    pending.push(...importsOf(path), ...(RUNS[path] ?? []));
    const source = readFileSync(join(root, path), "utf8");
    for (const [, name = ""] of source.matchAll(/from\s+"(tool-call-resilience[^"]*)"/g)) {
      const entry = PACKAGE_ENTRIES[name];
      if (entry !== undefined) pending.push(entry);
    }
  }
  return reached;
}

describe("the documentation", () => {
  it.each([
    "ARCHITECTURE.md",
    "docs/internals.md",
    "README.md",
    "RELIABILITY.md",
    "BENCHMARKS.md",
    "dashboards/README.md",
  ])("%s names only paths that exist", (document) => {
    const text = readFileSync(join(root, document), "utf8");
    const named = [
      ...text.matchAll(/`((?:src|test|demo|bench|dashboards|docs|examples)\/[^`\s*]*)`/g),
    ].map((match) => match[1] ?? "");
    expect(named.length).toBeGreaterThan(0);
    const missing = named.filter((path) => !existsSync(join(root, path)));
    expect(missing, `named in ${document}`).toEqual([]);
  });
});

describe("the modules of src/", () => {
  it("import from their own layer and the layers before it, never from a later one", () => {
    const upward = filesUnder("src", ".ts").flatMap((path) =>
      importsOf(path)
        .filter((imported) => layerOf(imported) > layerOf(path))
        .map((imported) => `${path} imports ${imported}`),
    );
    expect(upward).toEqual([]);
  });

  it("import each other in no circle, type imports included", () => {
    const modules = filesUnder("src", ".ts");
    const circles: string[] = [];
    // Depth-first, with the path walked so far: an import back onto it closes a circle.
    const finished = new Set<string>();
    const walk = (path: string, walked: string[]): void => {
      if (finished.has(path)) return;
      const at = walked.indexOf(path);
      if (at !== -1) {
        circles.push([...walked.slice(at), path].join(" -> "));
        return;
      }
      for (const imported of importsOf(path)) walk(imported, [...walked, path]);
      finished.add(path);
    };
    for (const path of modules) walk(path, []);
    expect(circles).toEqual([]);
  });
});
