/** The README promises what the code does: its tables list exactly what the code has. */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { PROBLEMS } from "../src/cli/audit-thread.js";
import { USAGE } from "../src/cli/run.js";
import { repairOptionsShape } from "../src/core/policy.js";
import { genAiProviderName, PLACEHOLDER_CATALOG, PLACEHOLDER_REASONS } from "../src/index.js";
import { middlewareOptionNames } from "../src/middleware.js";
import { startTelemetryOptionNames } from "../src/setup/start.js";
import * as semconv from "../src/telemetry/semconv.js";

const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");

function tableRowsAfter(heading: string): string[] {
  const start = readme.indexOf(heading);
  if (start === -1) throw new Error(`the README has no "${heading}"`);
  const section = readme.slice(start);
  const table = section.slice(section.indexOf("\n|"));
  const rows = table.split("\n").slice(1);
  const end = rows.findIndex((row) => !row.startsWith("|"));
  return rows.slice(0, end === -1 ? rows.length : end).slice(2);
}

describe("README", () => {
  it("shows the two set-up commands first: the demo and the tests", () => {
    const firstBlock = readme.slice(
      readme.indexOf("```sh"),
      readme.indexOf("```", readme.indexOf("```sh") + 5),
    );
    expect(firstBlock).toContain("npm ci && npm start");
    expect(firstBlock).toContain("npm ci && npm test");
  });

  it("lists every option, and only those, in the options table", () => {
    const documented = firstColumn(tableRowsAfter("## Options"));
    expect([...documented].sort()).toEqual([...middlewareOptionNames].sort());
    // The engine's options come first, as the text before the table says.
    const engine = Object.keys(repairOptionsShape);
    expect(documented.slice(0, engine.length).sort()).toEqual(engine.sort());
  });

  it("lists every option of the audit command, and only those, as its --help does", () => {
    const section = readme.slice(
      readme.indexOf("## Auditing stored histories"),
      readme.indexOf("## Telemetry: how often"),
    );
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
    const documented = firstColumn(tableRowsAfter("### Starting OpenTelemetry"));
    expect(documented.sort()).toEqual([...startTelemetryOptionNames].sort());
  });

  it("names every telemetry constant the code has", () => {
    const values = Object.values(semconv).flatMap((value) =>
      typeof value === "string" ? [value] : Array.isArray(value) ? [] : Object.values(value),
    );
    const missing = values.filter((value) => !readme.includes(`\`${value}\``));
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
      const exposed = cells[1]?.startsWith("Counter") ? `${name}_total` : `${name}_bucket`;
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
    const rows = tableRowsAfter("| LangChain | `gen_ai.provider.name` |").map(cellsOf);
    expect(rows.length).toBeGreaterThan(10);
    for (const cells of rows) {
      const expected = unquote(cells[1]);
      expect(Object.values(semconv.GEN_AI_PROVIDER_NAME_VALUES)).toContain(expected);
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

function cellsOf(row: string): string[] {
  return row
    .slice(1, -1)
    .split(" | ")
    .map((cell) => cell.trim());
}

function firstColumn(rows: string[]): string[] {
  return rows.map((row) => unquote(cellsOf(row)[0]));
}

function unquote(cell: string | undefined): string {
  return /^`([^`]+)`$/.exec(cell ?? "")?.[1] ?? `not a code cell: ${cell}`;
}
