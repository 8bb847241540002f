/** The README promises what the code does: its tables list exactly what the code has. */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { repairOptionsShape } from "../src/core/policy.js";
import { PLACEHOLDER_CATALOG, PLACEHOLDER_REASONS } from "../src/index.js";

const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");

function tableRowsAfter(heading: string): string[] {
  const section = readme.slice(readme.indexOf(heading));
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
    const documented = tableRowsAfter("## Options").map((row) => /^\| `(\w+)`/.exec(row)?.[1]);
    const options = [...Object.keys(repairOptionsShape), "logger", "persist"];
    expect(documented.sort()).toEqual(options.sort());
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
