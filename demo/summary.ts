/**
 * The figures the demo reports, read from the library's own counters on its `/metrics` endpoint
 * (the numbers the dashboards show), and the table that prints them next to the scripts' ground
 * truth.
 */
import { labels, series, values } from "../dashboards/generator/names.js";
import type { Exposition } from "./exposition.js";
import type { CountsByModelAndTool, GroundTruth } from "./fleet.js";

/** One row of the summary: a model or a tool. */
export interface SummaryRow {
  readonly name: string;
  /** The provider, for a model's row. */
  readonly provider?: string;
  readonly toolCalls: number;
  readonly dangling: number;
  /** Dangling calls per tool call issued; `null` before any tool call. */
  readonly rate: number | null;
}

/** What the counters say. */
export interface Figures {
  readonly modelCalls: number;
  readonly repairedModelCalls: number;
  readonly repairs: number;
  /** The repairs by kind (`placeholder_inserted`, `turn_inserted`, ...), the kinds made only. */
  readonly repairsByKind: Readonly<Record<string, number>>;
  readonly toolCalls: number;
  readonly dangling: number;
  readonly models: readonly SummaryRow[];
  readonly tools: readonly SummaryRow[];
}

function rateOf(dangling: number, toolCalls: number): number | null {
  return toolCalls === 0 ? null : dangling / toolCalls;
}

function rows(
  exposition: Exposition,
  label: string,
  providerOf?: (name: string) => string | undefined,
): SummaryRow[] {
  // A model (or tool) may have dangling calls in a scrape without tool calls: a process that only
  // answered calls others had issued.
  const names = new Set(
    [...exposition.find(series.toolCalls), ...exposition.find(series.danglingToolCalls)]
      .map((sample) => sample.labels[label])
      .filter((name): name is string => name !== undefined),
  );
  return [...names].sort().map((name) => {
    const toolCalls = exposition.sum(series.toolCalls, { [label]: name });
    const dangling = exposition.sum(series.danglingToolCalls, { [label]: name });
    const provider = providerOf?.(name);
    return {
      name,
      ...(provider === undefined ? {} : { provider }),
      toolCalls,
      dangling,
      rate: rateOf(dangling, toolCalls),
    };
  });
}

function repairsByKind(exposition: Exposition): Record<string, number> {
  const kinds = new Set(
    exposition
      .find(series.repairs)
      .map((sample) => sample.labels[labels.repairKind])
      .filter((kind): kind is string => kind !== undefined),
  );
  const byKind: Record<string, number> = {};
  for (const kind of [...kinds].sort()) {
    const count = exposition.sum(series.repairs, { [labels.repairKind]: kind });
    if (count > 0) byKind[kind] = count;
  }
  return byKind;
}

/**
 * Reads the summary's figures from a scrape of the demo's own endpoint.
 *
 * @example
 * const figures = figuresFrom(await scrape(telemetry.metricsUrl));
 */
export function figuresFrom(exposition: Exposition): Figures {
  const providerOf = (model: string) =>
    [
      ...exposition.find(series.toolCalls, { [labels.model]: model }),
      ...exposition.find(series.danglingToolCalls, { [labels.model]: model }),
    ][0]?.labels[labels.provider];
  return {
    modelCalls: exposition.sum(series.modelCalls),
    repairedModelCalls: exposition.sum(series.modelCalls, {
      [labels.outcome]: values.outcomeRepaired,
    }),
    repairs: exposition.sum(series.repairs),
    repairsByKind: repairsByKind(exposition),
    toolCalls: exposition.sum(series.toolCalls),
    dangling: exposition.sum(series.danglingToolCalls),
    models: rows(exposition, labels.model, providerOf),
    tools: rows(exposition, labels.tool),
  };
}

/** The scripts' ground truth in the shape of the counters' rows. */
export function truthRows(truth: GroundTruth): {
  models: Map<string, { toolCalls: number; dangling: number }>;
  tools: Map<string, { toolCalls: number; dangling: number }>;
} {
  const models = new Map<string, { toolCalls: number; dangling: number }>();
  const tools = new Map<string, { toolCalls: number; dangling: number }>();
  const fold = (counts: CountsByModelAndTool, field: "toolCalls" | "dangling") => {
    for (const [model, byTool] of Object.entries(counts)) {
      for (const [tool, count] of Object.entries(byTool)) {
        for (const [map, key] of [
          [models, model],
          [tools, tool],
        ] as const) {
          const row = map.get(key) ?? { toolCalls: 0, dangling: 0 };
          row[field] += count;
          map.set(key, row);
        }
      }
    }
  };
  fold(truth.toolCalls, "toolCalls");
  fold(truth.dangling, "dangling");
  return { models, tools };
}

/**
 * Where the counters and the scripts disagree, one line each; empty when they agree on every
 * model's and every tool's tool calls and dangling calls.
 */
export function disagreements(figures: Figures, truth: GroundTruth): string[] {
  const expected = truthRows(truth);
  const found: string[] = [];
  for (const [kind, counted, scripted] of [
    ["model", figures.models, expected.models],
    ["tool", figures.tools, expected.tools],
  ] as const) {
    const names = new Set([...counted.map((row) => row.name), ...scripted.keys()]);
    for (const name of names) {
      const row = counted.find((candidate) => candidate.name === name);
      const script = scripted.get(name) ?? { toolCalls: 0, dangling: 0 };
      if (row?.toolCalls !== script.toolCalls || row.dangling !== script.dangling) {
        found.push(
          `${kind} ${name}: counted ${row?.toolCalls ?? 0} tool calls / ${row?.dangling ?? 0} dangling, the scripts say ${script.toolCalls} / ${script.dangling}`,
        );
      }
    }
  }
  return found;
}

function percent(rate: number | null): string {
  return rate === null ? "-" : `${(rate * 100).toFixed(2)}%`;
}

function table(header: readonly string[], body: readonly (readonly string[])[]): string {
  const widths = header.map((title, column) =>
    Math.max(title.length, ...body.map((row) => (row[column] ?? "").length)),
  );
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, column) =>
        column === 0 || (column === 1 && header.length === 5)
          ? cell.padEnd(widths[column] ?? 0)
          : cell.padStart(widths[column] ?? 0),
      )
      .join("  ")
      .trimEnd();
  return [
    line(header),
    widths.map((width) => "-".repeat(width)).join("  "),
    ...body.map(line),
  ].join("\n");
}

/**
 * The line under the totals: the repairs by kind, and why one repaired model call makes several
 * repairs (and, without `persist`, why the same dangling call is repaired again).
 *
 * @example
 * repairsExplained({ ...figures, repairs: 25, repairsByKind: { placeholder_inserted: 16, turn_inserted: 9 } }, true);
 * // "25 repairs: 16 placeholder_inserted, 9 turn_inserted. One model call repairs all of its
 * //  thread's dangling calls at once, and with persist none is repaired twice."
 */
function repairsExplained(
  figures: Pick<Figures, "repairs" | "repairsByKind">,
  persist: boolean,
): string {
  const kinds = Object.entries(figures.repairsByKind)
    .map(([kind, count]) => `${count} ${kind}`)
    .join(", ");
  const why = persist
    ? "with persist none is repaired twice"
    : "without persist each later model call of the thread repairs them again";
  return `${figures.repairs} repairs: ${kinds}. One model call repairs all of its thread's dangling calls at once, and ${why}.`;
}

/**
 * The summary as text: totals, a table per model and per tool, and whether the counters agree
 * with the scripts.
 *
 * @param persist - whether the middleware ran with `persist`, which the line under the totals
 *   explains (default: it did, as in the demo's own process)
 */
export function formatSummary(
  figures: Figures,
  truth: GroundTruth | undefined,
  persist = true,
): string {
  const share = figures.modelCalls === 0 ? null : figures.repairedModelCalls / figures.modelCalls;
  const lines = [
    `${figures.modelCalls} model calls, ${figures.repairedModelCalls} repaired (${percent(share)}); ${figures.toolCalls} tool calls, ${figures.dangling} dangling (${percent(rateOf(figures.dangling, figures.toolCalls))}); ${figures.repairs} repairs`,
    ...(figures.repairs > 0 ? [repairsExplained(figures, persist)] : []),
    "",
    table(
      ["model", "provider", "tool calls", "dangling", "rate"],
      figures.models.map((row) => [
        row.name,
        row.provider ?? "",
        String(row.toolCalls),
        String(row.dangling),
        percent(row.rate),
      ]),
    ),
    "",
    table(
      ["tool", "tool calls", "dangling", "rate"],
      figures.tools.map((row) => [
        row.name,
        String(row.toolCalls),
        String(row.dangling),
        percent(row.rate),
      ]),
    ),
    "",
  ];
  if (truth !== undefined) {
    const found = disagreements(figures, truth);
    const interruptions = Object.entries(truth.interruptions)
      .map(([kind, count]) => `${count} ${kind}`)
      .join(", ");
    lines.push(
      `Interrupted runs: ${interruptions}, out of ${truth.runs} runs on ${truth.threads} threads.`,
    );
    lines.push(
      found.length === 0
        ? "The counters agree with the scripts' ground truth for every model and every tool."
        : `The counters disagree with the scripts' ground truth:\n  ${found.join("\n  ")}`,
    );
  }
  return lines.join("\n");
}
