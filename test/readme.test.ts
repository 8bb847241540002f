/**
 * The README and the telemetry reference (docs/telemetry.md) promise what the code does: their
 * tables list exactly what the code has.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { USAGE } from "../src/cli/arguments.js";
import { PROBLEMS } from "../src/cli/audit-thread.js";
import { PLACEHOLDER_CATALOG, PLACEHOLDER_REASONS } from "../src/core/locales.js";
import { repairOptionsShape } from "../src/core/policy.js";
import { danglingToolCallMiddlewareOptionsSchema } from "../src/middleware.js";
import { otlpObjectSchema } from "../src/setup/otlp-options.js";
import { startTelemetryOptionsSchema } from "../src/setup/start-options.js";
import { threadMetricsProducerOptionsSchema } from "../src/setup/thread-metrics.js";
import { viewsOptionsSchema } from "../src/setup/views.js";
import { genAiProviderName } from "../src/telemetry/model-identity.js";
import * as semconv from "../src/telemetry/semconv.js";
import {
  packageNameOf,
  packageOfSpecifier,
  type ReadmeSnippet,
  readmeSnippets,
} from "./package/readme-installs.js";

/** The Node.js major version whose install lines the README's checks read (no Node.js 20 swaps). */
const NEWEST_NODE = 24;

const middlewareOptions: Record<string, { readonly description?: string | undefined }> =
  danglingToolCallMiddlewareOptionsSchema.shape;

const startTelemetryOptions: Record<string, { readonly description?: string | undefined }> =
  startTelemetryOptionsSchema.shape;
const otlpOptions: Record<string, { readonly description?: string | undefined }> =
  otlpObjectSchema.shape;

const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");
const telemetryDoc = readFileSync(new URL("../docs/telemetry.md", import.meta.url), "utf8");

function tableRowsAfter(heading: string, text = readme, name = "the README"): string[] {
  const start = text.indexOf(heading);
  if (start === -1) throw new Error(`${name} has no "${heading}"`);
  const section = text.slice(start);
  const table = section.slice(section.indexOf("\n|"));
  const rows = table.split("\n").slice(1);
  const end = rows.findIndex((row) => !row.startsWith("|"));
  return rows.slice(0, end === -1 ? rows.length : end).slice(2);
}

describe("README", () => {
  it("shows the npm install first, with the peers a LangChain user needs", () => {
    const firstBlock = codeBlocksOf(readme, "sh")[0] ?? "";
    expect(firstBlock).toMatch(/^npm install tool-call-resilience /m);
    // The optional peers a LangChain user needs, since npm installs no optional peer by itself;
    // not the setup entry's SDK, nor the PostgreSQL checkpointer the audit reads only with
    // --checkpointer.
    const manifest = JSON.parse(
      readFileSync(new URL("../package.json", import.meta.url), "utf8"),
    ) as {
      peerDependencies: Record<string, string>;
      peerDependenciesMeta: Record<string, { optional?: boolean }>;
    };
    const optional = Object.keys(manifest.peerDependencies).filter(
      (name) =>
        manifest.peerDependenciesMeta[name]?.optional === true &&
        name !== "@opentelemetry/sdk-node" &&
        name !== "@langchain/langgraph-checkpoint-postgres",
    );
    expect(optional).toContain("@langchain/core");
    const named = readmeSnippets(readme, NEWEST_NODE)[0]?.installs.flatMap((command) =>
      command.packages.map(packageNameOf),
    );
    for (const peer of optional) expect(named).toContain(peer);
    // Named in the line, npm would save `@opentelemetry/api` as ^1.10.0, which the SDK release
    // npm picks on Node.js 20 refuses; left out, npm installs it as a peer at a version both admit.
    expect(manifest.peerDependenciesMeta["@opentelemetry/api"]?.optional).not.toBe(true);
    expect(named).not.toContain("@opentelemetry/api");
  });

  it("names every package a TypeScript snippet imports in the npm install block before it", () => {
    // A snippet without an install block of its own builds on the top one's.
    const snippets = readmeSnippets(readme, NEWEST_NODE);
    const [top] = snippets;
    const namedBy = (snippet: ReadmeSnippet) =>
      new Set(snippet.installs.flatMap((command) => command.packages.map(packageNameOf)));
    expect(snippets.length).toBeGreaterThan(5);
    const unnamed = snippets.flatMap((snippet) => {
      const named = namedBy(snippet.installs.length > 0 || top === undefined ? snippet : top);
      return snippet.imports
        .map(packageOfSpecifier)
        .filter((name) => !named.has(name))
        .map((name) => `README line ${snippet.line}: ${name}`);
    });
    expect(unnamed).toEqual([]);
  });

  it("shows the two set-up commands first where it runs the demo and the tests", () => {
    const section = sectionOf(readme, "## Run the demo and the tests");
    const firstBlock = codeBlocksOf(section, "sh")[0] ?? "";
    expect(firstBlock).toContain("npm ci && npm start");
    expect(firstBlock).toContain("npm ci && npm test");
  });

  it("lists every option, and only those, in the options table", () => {
    const documented = firstColumn(tableRowsAfter("## Options"));
    expect([...documented].sort()).toEqual(Object.keys(middlewareOptions).sort());
    // The engine's options come first, as the text before the table says.
    const engine = Object.keys(repairOptionsShape);
    expect(documented.slice(0, engine.length).sort()).toEqual(engine.sort());
  });

  it("describes each option in the options table with the words of its schema", () => {
    const rows = tableRowsAfter("## Options").map(cellsOf);
    const documented = rows.map((cells) => [unquote(cells[0]), withoutLinks(cells[3] ?? "")]);
    const described = rows.map((cells) => {
      const name = unquote(cells[0]);
      return [name, middlewareOptions[name]?.description];
    });
    expect(documented).toEqual(described);
  });

  it("has a description for every option of the engine and of the middleware", () => {
    const shapes = [repairOptionsShape, middlewareOptions];
    const undescribed = shapes.flatMap((shape) =>
      Object.entries(shape)
        .filter(([, field]) => (field.description ?? "").trim() === "")
        .map(([name]) => name),
    );
    expect(undescribed).toEqual([]);
  });

  it("lists every option of the audit command, and only those, as its --help does", () => {
    const section = sectionOf(readme, "## Auditing stored histories");
    const documented = section
      .split("\n")
      .filter((row) => row.startsWith("| `-"))
      .flatMap((row) => [...(cellsOf(row)[0] ?? "").matchAll(/`(-{1,2}[a-z]+)/g)].map((m) => m[1]));
    const inUsage = [...USAGE.matchAll(/^ {2}(?:(-[a-z]), )?(--[a-z]+)/gm)].flatMap((match) =>
      match[1] === undefined ? [match[2]] : [match[1], match[2]],
    );
    expect(documented.sort()).toEqual(inUsage.sort());
  });

  it("names every problem the audit counts", () => {
    const section = readme.slice(readme.indexOf("## Auditing stored histories"));
    for (const problem of PROBLEMS) expect(section).toContain(`| \`${problem}\` |`);
  });

  it("lists every startTelemetry option, and only those", () => {
    const documented = firstColumn(
      tableRowsAfter("## Starting OpenTelemetry", telemetryDoc, "docs/telemetry.md"),
    );
    expect(documented.sort()).toEqual(Object.keys(startTelemetryOptionsSchema.shape).sort());
  });

  it("lists every OTLP option of startTelemetry, and only those", () => {
    const documented = firstColumn(
      tableRowsAfter("takes these options (`OtlpOptions`)", telemetryDoc, "docs/telemetry.md"),
    );
    expect(documented.sort()).toEqual(Object.keys(otlpObjectSchema.shape).sort());
  });

  it("describes each startTelemetry option in its table with the words of its schema", () => {
    const rows = tableRowsAfter("## Starting OpenTelemetry", telemetryDoc, "docs/telemetry.md").map(
      cellsOf,
    );
    const documented = rows.map((cells) => [unquote(cells[0]), withoutLinks(cells[3] ?? "")]);
    const described = rows.map((cells) => {
      const name = unquote(cells[0]);
      return [name, startTelemetryOptions[name]?.description];
    });
    expect(documented).toEqual(described);
  });

  it("describes each OTLP option of startTelemetry in its table with the words of its schema", () => {
    const rows = tableRowsAfter(
      "takes these options (`OtlpOptions`)",
      telemetryDoc,
      "docs/telemetry.md",
    ).map(cellsOf);
    const documented = rows.map((cells) => [unquote(cells[0]), withoutLinks(cells[3] ?? "")]);
    const described = rows.map((cells) => {
      const name = unquote(cells[0]);
      return [name, otlpOptions[name]?.description];
    });
    expect(documented).toEqual(described);
  });

  it("has a description for every option of the setup entry point", () => {
    const shapes: Record<string, Record<string, { readonly description?: string | undefined }>> = {
      startTelemetry: startTelemetryOptions,
      otlp: otlpOptions,
      recommendedViews: viewsOptionsSchema.shape,
      threadMetricsProducer: threadMetricsProducerOptionsSchema.shape,
    };
    const undescribed = Object.entries(shapes).flatMap(([owner, shape]) =>
      Object.entries(shape)
        .filter(([, field]) => (field.description ?? "").trim() === "")
        .map(([name]) => `${owner}: ${name}`),
    );
    expect(undescribed).toEqual([]);
  });

  it("names every telemetry constant the code has, in the README or the telemetry reference", () => {
    const values = Object.values(semconv).flatMap((value) =>
      typeof value === "string" ? [value] : Array.isArray(value) ? [] : Object.values(value),
    );
    const documentation = `${readme}\n${telemetryDoc}`;
    const missing = values.filter((value) => !documentation.includes(`\`${value}\``));
    expect(missing).toEqual([]);
  });

  it("lists exactly the metrics the code emits, with their Prometheus names", () => {
    const rows = tableRowsAfter("### Metrics").map(cellsOf);
    const metricNames = Object.entries(semconv)
      .filter(([name]) => name.startsWith("METRIC_"))
      .map(([, value]) => value);
    expect(rows.map((cells) => unquote(cells[0]))).toEqual(metricNames);
    for (const cells of rows) {
      const name = unquote(cells[0]).replaceAll(".", "_");
      const type = cells[1] ?? "";
      const exposed = type.startsWith("Counter")
        ? `${name}_total`
        : type.startsWith("Gauge")
          ? name
          : `${name}_bucket`;
      expect(cells[4]).toContain(`\`${exposed}\``);
    }
  });

  it("lists exactly the attributes the code sets", () => {
    const documented = firstColumn(tableRowsAfter("### Attributes"));
    const attributes = Object.entries(semconv)
      .filter(([name]) => name.startsWith("ATTR_"))
      .map(([, value]) => value);
    expect(documented.sort()).toEqual(attributes.sort());
  });

  it("maps each LangChain provider id in the table to the value the code records", () => {
    const rows = tableRowsAfter(
      "| LangChain | `gen_ai.provider.name` |",
      telemetryDoc,
      "docs/telemetry.md",
    ).map(cellsOf);
    expect(rows.length).toBeGreaterThan(10);
    for (const cells of rows) {
      const expected = unquote(cells[1]);
      expect(
        Object.entries(semconv)
          .filter(([name]) => name.startsWith("GEN_AI_PROVIDER_NAME_VALUE_"))
          .map(([, value]) => value),
      ).toContain(expected);
      for (const id of (cells[0] ?? "").split(", "))
        expect(genAiProviderName(unquote(id))).toBe(expected);
    }
  });

  it("prints the catalog exactly as the code has it", () => {
    const rows = tableRowsAfter("## The locale catalog");
    const catalog = Object.entries(PLACEHOLDER_CATALOG).map(
      ([locale, texts]) =>
        `| \`${locale}\` | ${PLACEHOLDER_REASONS.map((reason) => texts[reason]).join(" | ")} |`,
    );
    expect(rows).toEqual(catalog);
  });
});

/**
 * From the heading that starts with `heading` to the next heading of the same or a higher level,
 * outside code blocks.
 */
function sectionOf(text: string, heading: string): string {
  const lines = text.split("\n");
  const start = lines.findIndex((line) => line.startsWith(heading));
  if (start === -1) throw new Error(`no "${heading}"`);
  const level = /^#+/.exec(heading)?.[0].length ?? 2;
  let fenced = false;
  let end = start + 1;
  for (; end < lines.length; end++) {
    const line = lines[end] ?? "";
    if (line.startsWith("```")) fenced = !fenced;
    const depth = /^(#+) /.exec(line)?.[1]?.length;
    if (!fenced && depth !== undefined && depth <= level) break;
  }
  return lines.slice(start + 1, end).join("\n");
}

/** The bodies of the fenced code blocks of a language, in order. */
function codeBlocksOf(text: string, language: string): string[] {
  return [...text.matchAll(/^```(\S*)\n([\s\S]*?)^```$/gm)]
    .filter((match) => match[1] === language)
    .map((match) => match[2] ?? "");
}

function cellsOf(row: string): string[] {
  return row
    .slice(1, -1)
    .split(" | ")
    .map((cell) => cell.trim());
}

function firstColumn(rows: string[]): string[] {
  return rows.map((row) => unquote(cellsOf(row)[0]));
}

/** A table cell as plain words: each Markdown link `[text](target)` becomes its text. */
function withoutLinks(cell: string): string {
  return cell.replace(/\[([^\]]+)\]\([^)]+\)/g, "$1");
}

function unquote(cell: string | undefined): string {
  return /^`([^`]+)`$/.exec(cell ?? "")?.[1] ?? `not a code cell: ${cell}`;
}
