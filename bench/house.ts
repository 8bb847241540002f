/**
 * The shape of the codebase, measured: how much source there is, how much of it the `createAgent`
 * path loads, how many names each entry point exports, and how many words the docs take; printed
 * as a Markdown table (or JSON) for ARCHITECTURE.md's before/after table.
 *
 * Static by default, and fast. `--tests` also times the test suites; `--step` also measures what
 * our middleware adds to one `createAgent` step over a middleware that does nothing.
 *
 * Run it from the repository: `node --import tsx bench/house.ts [--tests] [--step] [--json]`.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import ts from "typescript";
import type { Paired } from "./measure.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));

const USAGE = `Usage: node --import tsx bench/house.ts [--tests] [--step] [--json]

  --tests  also time \`npm test\` and \`npm run test:long\` (wall clock)
  --step   also measure the createAgent step cost of the middleware
  --json   print the measures as JSON instead of a Markdown table
  --help   print this`;

/** The docs whose words are counted, besides every Markdown file under `docs/`. */
const DOCS = [
  "README.md",
  "ARCHITECTURE.md",
  "RELIABILITY.md",
  "BENCHMARKS.md",
  "CHANGELOG.md",
  "dashboards/README.md",
];

/** The agent step's history: 19 messages, clean, so that the step is mostly framework. */
const STEP_HISTORY_SIZE = 19;
const STEP_ROUNDS = 5;
const STEP_CALLS_PER_ROUND = 300;

/** Files and lines of a set of TypeScript files. */
interface SourceSize {
  readonly files: number;
  readonly lines: number;
  /** Lines that are neither blank nor only comment. */
  readonly codeLines: number;
}

/** The names one entry point exports. */
interface EntryExports {
  readonly entry: string;
  readonly file: string;
  readonly values: number;
  readonly types: number;
}

/** How much one side of a comparison costs over the other, over several rounds. */
interface StepCost {
  readonly subject: string;
  readonly baseline: string;
  readonly subjectMs: number;
  readonly baselineMs: number;
  /** The median of the rounds' ratios. */
  readonly ratio: number;
  readonly lowestRatio: number;
  readonly highestRatio: number;
}

/** Everything the script measures; the optional parts only when asked for. */
interface HouseMeasures {
  readonly src: SourceSize;
  readonly createAgentPath: SourceSize;
  readonly exports: readonly EntryExports[];
  readonly words: readonly { readonly doc: string; readonly words: number }[];
  readonly testSeconds?: { readonly test: number | string; readonly testLong: number | string };
  readonly step?: { readonly historySize: number; readonly costs: readonly StepCost[] };
}

/** A path relative to the repository, with forward slashes whatever the platform. */
function fromRoot(path: string): string {
  return relative(ROOT, path).split("\\").join("/");
}

/** Every `.ts` file under `folder`, sorted. */
function typeScriptFiles(folder: string): string[] {
  return readdirSync(folder, { recursive: true, encoding: "utf8" })
    .filter((name) => name.endsWith(".ts"))
    .map((name) => join(folder, name))
    .sort();
}

/** Counts the lines of a file, and those with a token on them that are not blank. */
function linesOf(path: string): { lines: number; codeLines: number } {
  const text = readFileSync(path, "utf8");
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true);
  const lineTexts = text.split("\n");
  if (text.endsWith("\n")) lineTexts.pop();
  const withToken = new Set<number>();
  const visit = (node: ts.Node): void => {
    // JSDoc comments are nodes of the tree; they are comments all the same.
    if (node.kind >= ts.SyntaxKind.FirstJSDocNode && node.kind <= ts.SyntaxKind.LastJSDocNode)
      return;
    const children = node.getChildren(source);
    if (children.length > 0) {
      for (const child of children) visit(child);
      return;
    }
    const start = node.getStart(source);
    const end = node.getEnd();
    if (end <= start) return;
    const first = source.getLineAndCharacterOfPosition(start).line;
    const last = source.getLineAndCharacterOfPosition(end - 1).line;
    for (let line = first; line <= last; line++) withToken.add(line);
  };
  visit(source);
  // A shebang is trivia to the parser, but no comment.
  if (text.startsWith("#!")) withToken.add(0);
  // A blank line inside a multi-line template literal has a token on it, but is still blank.
  const codeLines = [...withToken].filter((line) => lineTexts[line]?.trim()).length;
  return { lines: lineTexts.length, codeLines };
}

/** Files, lines and code lines of `paths`. */
function sizeOf(paths: readonly string[]): SourceSize {
  let lines = 0;
  let codeLines = 0;
  for (const path of paths) {
    const counted = linesOf(path);
    lines += counted.lines;
    codeLines += counted.codeLines;
  }
  return { files: paths.length, lines, codeLines };
}

/** Whether every specifier of a named import or export list is marked `type`. */
function allTypeOnly(elements: ts.NodeArray<ts.ImportSpecifier | ts.ExportSpecifier>): boolean {
  return elements.length > 0 && elements.every((element) => element.isTypeOnly);
}

/** The relative modules `source` loads at run time: type-only imports and exports left out. */
function runtimeImportsOf(source: ts.SourceFile): string[] {
  const specifiers: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const clause = node.importClause;
      const typeOnly =
        clause !== undefined &&
        (clause.isTypeOnly ||
          (clause.name === undefined &&
            clause.namedBindings !== undefined &&
            ts.isNamedImports(clause.namedBindings) &&
            allTypeOnly(clause.namedBindings.elements)));
      if (!typeOnly) specifiers.push(node.moduleSpecifier.text);
    } else if (
      ts.isExportDeclaration(node) &&
      node.moduleSpecifier !== undefined &&
      ts.isStringLiteral(node.moduleSpecifier)
    ) {
      const typeOnly =
        node.isTypeOnly ||
        (node.exportClause !== undefined &&
          ts.isNamedExports(node.exportClause) &&
          allTypeOnly(node.exportClause.elements));
      if (!typeOnly) specifiers.push(node.moduleSpecifier.text);
    } else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] !== undefined &&
      ts.isStringLiteralLike(node.arguments[0])
    ) {
      specifiers.push(node.arguments[0].text);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return specifiers.filter((specifier) => specifier.startsWith("."));
}

/** `start` and every file it loads at run time through relative imports, sorted. */
function runtimeClosure(start: string): string[] {
  const seen = new Set<string>();
  const pending = [start];
  for (let path = pending.pop(); path !== undefined; path = pending.pop()) {
    if (seen.has(path)) continue;
    seen.add(path);
    const source = ts.createSourceFile(path, readFileSync(path, "utf8"), ts.ScriptTarget.Latest);
    for (const specifier of runtimeImportsOf(source)) {
      const target = resolve(dirname(path), specifier.replace(/\.js$/, ".ts"));
      if (!existsSync(target)) throw new Error(`${fromRoot(path)} imports ${specifier}: not found`);
      pending.push(target);
    }
  }
  return [...seen].sort();
}

/** The package's entry points (`"."`, `"./formats"`, …) and the source file of each. */
function entryPoints(): { entry: string; file: string }[] {
  const manifest = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
    exports: Record<string, string | { default?: string }>;
  };
  const entries: { entry: string; file: string }[] = [];
  for (const [entry, target] of Object.entries(manifest.exports)) {
    const built = typeof target === "string" ? target : target.default;
    const match = built?.match(/^\.\/dist\/(.+)\.js$/);
    if (match?.[1] !== undefined) entries.push({ entry, file: `src/${match[1]}.ts` });
  }
  return entries;
}

/** Whether an alias is declared `type` (`export type { X }`, `export { type X }`, `import type`). */
function isTypeOnlyAlias(symbol: ts.Symbol): boolean {
  return (symbol.declarations ?? []).some(ts.isTypeOnlyImportOrExportDeclaration);
}

/** Counts the value and type names each entry point exports, through the type checker. */
function exportsOfEntryPoints(): EntryExports[] {
  const configPath = join(ROOT, "tsconfig.json");
  const { config, error } = ts.readConfigFile(configPath, ts.sys.readFile);
  if (error !== undefined)
    throw new Error(ts.flattenDiagnosticMessageText(error.messageText, "\n"));
  const { options } = ts.parseJsonConfigFileContent(config, ts.sys, ROOT, undefined, configPath);
  const entries = entryPoints();
  const program = ts.createProgram(
    entries.map(({ file }) => join(ROOT, file)),
    options,
  );
  const checker = program.getTypeChecker();
  return entries.map(({ entry, file }) => {
    const source = program.getSourceFile(join(ROOT, file));
    const module = source && checker.getSymbolAtLocation(source);
    if (module === undefined) throw new Error(`${file}: not a module`);
    let values = 0;
    let types = 0;
    for (const exported of checker.getExportsOfModule(module)) {
      // A value re-exported with `type` anywhere along the chain is a type to whoever imports it.
      let symbol = exported;
      let typeOnly = false;
      while (symbol.flags & ts.SymbolFlags.Alias && !typeOnly) {
        typeOnly = isTypeOnlyAlias(symbol);
        symbol = checker.getImmediateAliasedSymbol(symbol) ?? checker.getAliasedSymbol(symbol);
      }
      if (!typeOnly && symbol.flags & ts.SymbolFlags.Value) values++;
      else types++;
    }
    return { entry, file, values, types };
  });
}

/** The docs that exist, with their whitespace-separated tokens counted (code blocks included). */
function wordsPerDoc(): { doc: string; words: number }[] {
  const docsFolder = join(ROOT, "docs");
  const underDocs = existsSync(docsFolder)
    ? readdirSync(docsFolder, { recursive: true, encoding: "utf8" })
        .filter((name) => name.endsWith(".md"))
        .map((name) => `docs/${name.split("\\").join("/")}`)
        .sort()
    : [];
  return [...DOCS, ...underDocs]
    .filter((doc) => existsSync(join(ROOT, doc)))
    .map((doc) => ({
      doc,
      words: readFileSync(join(ROOT, doc), "utf8").split(/\s+/).filter(Boolean).length,
    }));
}

/** Runs an npm script with its output on stderr; its wall-clock seconds, or why there are none. */
function timeNpmScript(script: string): number | string {
  const manifest = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
    scripts?: Record<string, string>;
  };
  if (manifest.scripts?.[script] === undefined) return "n/a";
  const started = performance.now();
  const run = spawnSync("npm", ["run", script], { cwd: ROOT, stdio: ["ignore", 2, 2] });
  const seconds = (performance.now() - started) / 1e3;
  return run.status === 0 ? seconds : `${seconds.toFixed(1)} (failed: exit ${run.status})`;
}

/**
 * What our middleware adds to a `createAgent` step over a pass-through middleware, and what that
 * one adds over none, with a `MemorySaver` and the OpenTelemetry SDK recording, started as
 * `npm run bench` starts it. Loaded only when asked: it brings LangChain and the SDK in.
 */
async function measureStep(): Promise<{ historySize: number; costs: StepCost[] }> {
  const { agentStep } = await import("./agent-step.js");
  const { buildHistory } = await import("./histories.js");
  const { interleaved, median } = await import("./measure.js");
  const { freePort, scrape } = await import("../test/helpers/prometheus.js");
  const { startTelemetry } = await import("tool-call-resilience/setup");
  const { METRIC_MODEL_CALLS } = await import("tool-call-resilience/semconv");

  const history = buildHistory(STEP_HISTORY_SIZE, "clean").messages;
  const steps = {
    ours: agentStep(history, "ours", "memory-saver"),
    "pass-through": agentStep(history, "pass-through", "memory-saver"),
    none: agentStep(history, "none", "memory-saver"),
  };
  const pairs = [
    ["ours", "pass-through"],
    ["pass-through", "none"],
  ] as const;
  const telemetry = await startTelemetry({ port: await freePort() });
  try {
    const rounds = pairs.map((): Paired[] => []);
    // The pairs take turns round by round, so that a slow minute falls on both.
    for (let round = 0; round < STEP_ROUNDS; round++) {
      for (const [index, [subject, baseline]] of pairs.entries()) {
        const calls = STEP_CALLS_PER_ROUND;
        rounds[index]?.push(await interleaved(steps[subject], steps[baseline], calls, calls / 4));
      }
    }
    const name = `${METRIC_MODEL_CALLS.replaceAll(".", "_")}_total`;
    if ((await scrape(telemetry.metricsUrl)).sum(name) === 0)
      throw new Error(`no ${name} scraped: the telemetry recorded nothing`);
    const costs = pairs.map(([subject, baseline], index) => {
      const measured = rounds[index] ?? [];
      const ratios = measured.map((round) => round.ratio);
      return {
        subject,
        baseline,
        subjectMs: median(measured.map((round) => round.subjectNs)) / 1e6,
        baselineMs: median(measured.map((round) => round.baselineNs)) / 1e6,
        ratio: median(ratios),
        lowestRatio: Math.min(...ratios),
        highestRatio: Math.max(...ratios),
      };
    });
    return { historySize: STEP_HISTORY_SIZE, costs };
  } finally {
    await telemetry.shutdown();
  }
}

/** A ratio as a signed percentage over 1: `1.042` is `+4.2 %`. */
function overhead(ratio: number): string {
  const percent = (ratio - 1) * 100;
  return `${percent >= 0 ? "+" : "−"}${Math.abs(percent).toFixed(1)} %`;
}

/** The measures as a two-column Markdown table. */
function markdown(measures: HouseMeasures): string {
  const number = (value: number) => value.toLocaleString("en-US");
  const size = ({ files, lines, codeLines }: SourceSize) =>
    `${number(files)} files, ${number(lines)} lines (${number(codeLines)} neither blank nor comment)`;
  const rows: [string, string][] = [
    ["`src/`: `.ts` files and lines", size(measures.src)],
    [
      "`createAgent` path: runtime import closure of `src/middleware.ts`",
      size(measures.createAgentPath),
    ],
  ];
  for (const { entry, file, values, types } of measures.exports) {
    rows.push([`Exports of \`${entry}\` (\`${file}\`)`, `${values} values + ${types} types`]);
  }
  const values = measures.exports.reduce((sum, entry) => sum + entry.values, 0);
  const types = measures.exports.reduce((sum, entry) => sum + entry.types, 0);
  rows.push(["Exports, all entry points (sum)", `${values} values + ${types} types`]);
  for (const { doc, words } of measures.words) {
    rows.push([`Words in ${doc} (whitespace-separated tokens, code included)`, number(words)]);
  }
  const words = measures.words.reduce((sum, doc) => sum + doc.words, 0);
  rows.push(["Words, all docs above", number(words)]);
  if (measures.testSeconds !== undefined) {
    const seconds = (value: number | string) =>
      typeof value === "number" ? `${value.toFixed(1)} s` : value;
    rows.push(["`npm test`, wall clock", seconds(measures.testSeconds.test)]);
    rows.push(["`npm run test:long`, wall clock", seconds(measures.testSeconds.testLong)]);
  }
  if (measures.step !== undefined) {
    const described = { ours: "our middleware", "pass-through": "a pass-through middleware" };
    for (const cost of measures.step.costs) {
      const baseline = cost.baseline === "none" ? "no middleware" : described["pass-through"];
      rows.push([
        `\`createAgent\` step (${measures.step.historySize} messages, clean, MemorySaver, ` +
          `telemetry on): ${described[cost.subject as keyof typeof described]} over ${baseline}`,
        `${overhead(cost.ratio)}: median of ${STEP_ROUNDS} rounds' ratios, which range ` +
          `${overhead(cost.lowestRatio)} to ${overhead(cost.highestRatio)} ` +
          `(a step ${cost.subjectMs.toFixed(2)} ms vs ${cost.baselineMs.toFixed(2)} ms)`,
      ]);
    }
  }
  const lines = ["| Measure | Value |", "| --- | --- |"];
  for (const [measure, value] of rows) lines.push(`| ${measure} | ${value} |`);
  return lines.join("\n");
}

/** Parses the options, measures, and prints; resolves to the exit code. */
async function main(): Promise<number> {
  let values: { tests?: boolean; step?: boolean; json?: boolean; help?: boolean };
  try {
    ({ values } = parseArgs({
      options: {
        tests: { type: "boolean" },
        step: { type: "boolean" },
        json: { type: "boolean" },
        help: { type: "boolean" },
      },
    }));
  } catch (error) {
    console.error(`${(error as Error).message}\n\n${USAGE}`);
    return 2;
  }
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const measures: HouseMeasures = {
    src: sizeOf(typeScriptFiles(join(ROOT, "src"))),
    createAgentPath: sizeOf(runtimeClosure(join(ROOT, "src", "middleware.ts"))),
    exports: exportsOfEntryPoints(),
    words: wordsPerDoc(),
    ...(values.tests
      ? { testSeconds: { test: timeNpmScript("test"), testLong: timeNpmScript("test:long") } }
      : {}),
    ...(values.step ? { step: await measureStep() } : {}),
  };
  console.log(values.json ? JSON.stringify(measures, null, 2) : markdown(measures));
  return 0;
}

process.exitCode = await main();
