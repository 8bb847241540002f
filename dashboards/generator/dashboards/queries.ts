/**
 * The PromQL of every dashboard panel and annotation, apart from how the panels lay it out. Each
 * query reads the recorded series of `prometheus-rules.ts` (the alerts' own) and of
 * `dashboard-rules.ts`, filtered by the variables of their level, so a panel shows the figure the
 * alerts evaluate and stays short enough to read in Explore.
 */
import { bundleConfig } from "../config.js";
import { dashboardRecords as records } from "../dashboard-rules.js";
import { labels, reportingSeries, values } from "../names.js";
import { type Level, recordName, seconds } from "../prometheus-rules.js";
import { equals, type Filters, LEVEL_VARIABLES, matchesVariable } from "./filters.js";

/**
 * The windows of the ratio and burn-rate panels: the short and the long window of the first
 * paging pair (5m and 1h by default), the windows of the fastest page, which the rules record per
 * model and per tool.
 */
export const PANEL_WINDOWS: readonly string[] = Object.freeze(
  bundleConfig.burnRate.page.slice(0, 1).flatMap((pair) => [pair.short, pair.long]),
);

/**
 * The fewest tool calls a window must hold for a share or burn rate to be drawn for it: the number
 * at which a single dangling call is the default objective (200 at 0.5 %). Below it a share is mostly
 * chance (one dangling call of ten is 10 %), and the alerts ask for dangling calls in numbers too.
 */
export const MINIMUM_TOOL_CALLS = Math.ceil(1 / bundleConfig.objective.default);

/**
 * The window of the Instances row's table: that of `ToolCallResilienceInstanceDanglingOutlier`,
 * so that the table compares each process with its peers as the alert does.
 */
export const INSTANCE_WINDOW: string = bundleConfig.instanceOutlier.window;

/** The share of a process's tool calls at which the outlier alert may start to warn. */
export const OUTLIER_SHARE =
  bundleConfig.instanceOutlier.minimumBurnRate * bundleConfig.objective.default;

/** The quantiles of the repair duration the latency panels draw. */
const LATENCY_QUANTILES = [0.5, 0.95, 0.99] as const;

/** The dashboard's time range, as Grafana fills it in. */
const RANGE = "$__range";

/** The dangling share of a level over `window`, drawn only where the window holds enough calls. */
export function guardedShare(filters: Filters, level: Level, window: string): string {
  // `and` keeps the filtered left side's series only: the right one needs no filter of its own.
  return `${filters.recorded(recordName(level, "ratio", window), level)} and ${recordName(level, "toolCalls", window)} * ${seconds(window)} >= ${MINIMUM_TOOL_CALLS}`;
}

/** Tool calls or dangling tool calls per second per model, over the shortest recorded window. */
export function ratePerModel(filters: Filters, quantity: "toolCalls" | "dangling"): string {
  return filters.recorded(recordName("model", quantity, records.rateWindow), "model");
}

/** What a counter counted in the dashboard's time range, per series of a level. */
function counted(
  filters: Filters,
  level: "model" | "tool",
  key: "toolCalls" | "danglingToolCalls" | "modelCalls",
  ...matchers: string[]
): string {
  return `sum_over_time(${filters.recorded(records.increase(level, key), level, ...matchers)}[${RANGE}])`;
}

/**
 * The queries of the summary stats over the dashboard's time range, summed over every model
 * chosen: tool calls, dangling tool calls (0 where tool calls are counted), failed-open model
 * calls (0 where model calls are), and the overflow series now (0 where the library reports).
 */
export function summaryQueries(filters: Filters) {
  const failedOpen = equals(labels.outcome, values.outcomeFailedOpen);
  return {
    toolCalls: `sum(${counted(filters, "model", "toolCalls")})`,
    dangling: `sum(${counted(filters, "model", "danglingToolCalls")})`,
    failedOpen: `sum(${counted(filters, "model", "modelCalls", failedOpen)})`,
    overflowSeries: `sum(${filters.recorded(records.overflowSeries, "process")})`,
  };
}

/** The figures of the Instances table, by the ref id of their query, in column order. */
export type InstanceFigure =
  | "reporting"
  | "last_report"
  | "model_calls"
  | "share"
  | "peers"
  | "failed_open";

/**
 * The queries of the Instances table, by ref id: one row per process of the chosen jobs, topology
 * and instances, whatever the attribute variables say, each figure over {@link INSTANCE_WINDOW}
 * unless said.
 *
 * - `reporting`: 1 while the process reports, 0 once not: where Prometheus scrapes it, whether
 *   the last scrape succeeded (`up`); where it pushes (no `up`), 1 while its series arrive.
 * - `last_report`: seconds since the process's newest model-call sample, over the window.
 * - `model_calls`: its model calls per second.
 * - `share`: the share of its tool calls that dangled, where it had at least
 *   {@link MINIMUM_TOOL_CALLS}.
 * - `peers`: the same share over every other process of its job and topology, whatever Instance
 *   says, which is what ToolCallResilienceInstanceDanglingOutlier compares it with.
 * - `failed_open`: its model calls that went out unrepaired because the library failed, 0 where
 *   it reports model calls.
 */
export function instanceQueries(filters: Filters): Readonly<Record<InstanceFigure, string>> {
  const window = INSTANCE_WINDOW;
  const up = filters.recorded(reportingSeries.up, "process");
  const lastSample = filters.recorded(records.lastSample, "process");
  const failedOpen = filters.recorded(
    records.increase("instance", "modelCalls"),
    "process",
    equals(labels.outcome, values.outcomeFailedOpen),
  );
  return {
    // `== bool 1` and `> bool 0` drop the metric name, which the other columns do not have either.
    reporting: `${up} == bool 1 or ${lastSample} > bool 0`,
    last_report: `time() - max_over_time(${lastSample}[${window}])`,
    model_calls: filters.recorded(records.processRate("modelCalls", window), "process"),
    share: `${filters.recorded(records.processRatio(window), "process")} and ${records.processRate("toolCalls", window)} * ${seconds(window)} >= ${MINIMUM_TOOL_CALLS}`,
    peers: filters.recorded(records.peersRatio(window), "process"),
    failed_open: `sum without (${[labels.provider, labels.model, labels.outcome].join(", ")}) (sum_over_time(${failedOpen}[${window}]))`,
  };
}

/** One quantile of the repair duration, named after it (`p95`). */
export interface QuantileQuery {
  /** `p` and the percentile: the query's ref id and legend text. */
  readonly name: string;
  /** The PromQL. */
  readonly expr: string;
}

/** Each of {@link LATENCY_QUANTILES} of the repair duration, per outcome or across them. */
export function repairDurationQuantiles(filters: Filters, perOutcome: boolean): QuantileQuery[] {
  const buckets = filters.recorded(records.durationBuckets, "job");
  const summed = perOutcome ? buckets : `sum without (${labels.outcome}) (${buckets})`;
  return LATENCY_QUANTILES.map((quantile) => ({
    name: `p${quantile * 100}`,
    expr: `histogram_quantile(${quantile}, ${summed})`,
  }));
}

/** The `count` threads with the most recent dangling calls, summed over the processes. */
export function topThreads(filters: Filters, count: number): string {
  return `topk(${count}, ${filters.recorded(records.threads, "thread")})`;
}

/**
 * The queries of a totals table of `level` over the time range: tool calls, dangling tool calls (0
 * where tool calls are counted) and their share (at most 1, none without a tool call).
 */
export function totalsQueries(filters: Filters, level: "model" | "tool") {
  const dangling = counted(filters, level, "danglingToolCalls");
  return {
    toolCalls: counted(filters, level, "toolCalls"),
    dangling,
    // The dangling calls are recorded 0 wherever tool calls are: no `or` is needed.
    ratio: `clamp_max(${dangling} / (sum_over_time(${records.increase(level, "toolCalls")}[${RANGE}]) > 0), 1)`,
  };
}

/**
 * Every `ToolCallResilience…` alert firing in the chosen jobs and topology, from the `ALERTS`
 * series of the Prometheus that evaluates the rules.
 */
export function firingAlerts(): string {
  const where = LEVEL_VARIABLES.job.map((variable) => matchesVariable(variable, variable));
  return `ALERTS{${['alertname=~"ToolCallResilience.*"', 'alertstate="firing"', ...where].join(", ")}}`;
}
