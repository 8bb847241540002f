/**
 * The printed table: medians per workload and contender with their ratios, then the other
 * comparisons and the bytes allocated per clean call. Markdown, so that BENCHMARKS.md quotes it
 * as printed.
 */
import type { Comparison, Measurements } from "./targets.js";

/**
 * One workload: medians of floor, engine, middleware and peer; engine/floor, middleware/peer.
 * `undefined` where a contender was not run.
 */
export interface Row {
  readonly workload: string;
  readonly cells: readonly [
    floor: number,
    engine: number,
    middleware: number | undefined,
    peer: number | undefined,
  ];
  readonly ratios: readonly [engineOverFloor: number, middlewareOverPeer: number | undefined];
}

const NOT_RUN = "not run";

/** `812 ns`, `3.4 µs`, `12.0 ms`, `1.20 s` */
export function duration(ns: number): string {
  if (ns < 1e3) return `${ns.toFixed(0)} ns`;
  if (ns < 1e6) return `${(ns / 1e3).toFixed(ns < 1e4 ? 2 : 1)} µs`;
  if (ns < 1e9) return `${(ns / 1e6).toFixed(ns < 1e7 ? 2 : 1)} ms`;
  return `${(ns / 1e9).toFixed(2)} s`;
}

/** `1.23x`, `0.045x` */
export function ratio(value: number): string {
  return `${value < 0.1 ? value.toFixed(3) : value.toFixed(2)}x`;
}

/** A Markdown table, the first column left-aligned and the others right-aligned. */
export function table(header: readonly string[], lines: readonly (readonly string[])[]): string {
  const widths = header.map((title, column) =>
    Math.max(title.length, ...lines.map((line) => (line[column] ?? "").length)),
  );
  const format = (cells: readonly string[]) =>
    `| ${cells.map((cell, column) => (column === 0 ? cell.padEnd(widths[column] ?? 0) : cell.padStart(widths[column] ?? 0))).join(" | ")} |`;
  const rule = `|${widths.map((width, column) => (column === 0 ? `-${"-".repeat(width)}-` : `-${"-".repeat(width)}:`)).join("|")}|`;
  return [format(header), rule, ...lines.map(format)].join("\n");
}

/** The whole report: workloads, other comparisons, allocation. */
export function formatTable(
  rows: readonly Row[],
  comparisons: readonly Comparison[],
  bytes: Measurements["bytesPerCall"],
): string {
  const workloads = table(
    [
      "workload (shape, messages)",
      "floor",
      "engine",
      "middleware",
      "peer",
      "engine / floor",
      "middleware / peer",
    ],
    rows.map((row) => [
      row.workload,
      ...row.cells.map((cell) => (cell === undefined ? NOT_RUN : duration(cell))),
      ratio(row.ratios[0]),
      row.ratios[1] === undefined ? NOT_RUN : ratio(row.ratios[1]),
    ]),
  );
  const others = table(
    ["measurement", "median", "against", "median", "ratio"],
    comparisons.map((comparison) => [
      comparison.subject,
      duration(comparison.subjectNs),
      comparison.baseline,
      duration(comparison.baselineNs),
      ratio(comparison.ratio),
    ]),
  );
  const sizes = [...new Set(bytes.flatMap((entry) => [...entry.bySize.keys()]))].sort(
    (a, b) => a - b,
  );
  const allocation = table(
    ["bytes per clean call", ...sizes.map((size) => `${size.toLocaleString("en-US")} messages`)],
    bytes.map((entry) => [
      entry.contender,
      ...sizes.map((size) => {
        const value = entry.bySize.get(size);
        return value === undefined ? "" : `${Math.round(value)} B`;
      }),
    ]),
  );
  return [workloads, others, allocation].join("\n\n");
}
