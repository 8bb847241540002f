/**
 * The PromQL of every dashboard panel and annotation, apart from how the panels lay it out. Each
 * query is assembled from the names in `names.ts`, the recorded series of `prometheus-rules.ts`
 * and the shapes of `promql.ts`, so a panel shows the figure the alerts evaluate, computed the same
 * way.
 */
import { bundleConfig } from "../config.js";
import {
  instrumentSelector,
  labels,
  overflowSelector,
  reportingSeries,
  type SeriesKey,
  scopeLabels,
  values,
} from "../names.js";
import { type Level, recordedWindows, seconds } from "../prometheus-rules.js";
import { growth, orZero, share } from "../promql.js";
import {
  chosenProcessMatchers,
  equals,
  type Filters,
  matchesVariable,
  PROCESS_VARIABLES,
  perProcess,
  summedAway,
} from "./filters.js";

/**
 * The windows of the ratio and burn-rate panels: the short and the long window of the first
 * paging pair (5m and 1h by default), the windows of the fastest page.
 */
export const PANEL_WINDOWS: readonly string[] = (() => {
  const [first] = bundleConfig.burnRate.page;
  if (first === undefined) throw new Error("bundleConfig.burnRate.page holds no pair of windows");
  const windows = [first.short, first.long];
  const missing = windows.filter(
    (window) => !recordedWindows.model.includes(window) || !recordedWindows.tool.includes(window),
  );
  if (
    missing.length > 0 ||
    !recordedWindows.instance.includes(bundleConfig.instanceOutlier.window)
  ) {
    throw new Error("the dashboards' windows are not among the recorded ones");
  }
  return Object.freeze(windows);
})();

/**
 * The fewest tool calls a window must hold for a share or burn rate to be drawn for it: the number
 * at which a single dangling call is the default objective (50 at 2 %). Below it a share is mostly
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

/** `expr` summed over every label but those in `without`. */
function sumWithout(without: readonly string[], expr: string): string {
  return `sum without (${without.join(", ")}) (${expr})`;
}

function sumAll(expr: string): string {
  return `sum(${expr})`;
}

/** The per-second rate of a counter over Grafana's `$__rate_interval`. */
function rate(selector: string): string {
  return `rate(${selector}[$__rate_interval])`;
}

/**
 * What a counter grew by over the dashboard's time range, per series ({@link growth}):
 * `increase()`, except for a series born inside the range (a model's first dangling call, a new
 * process, one killed since), which `increase()` would miss the first value of and which counts
 * with its whole value instead.
 */
function growthOverRange(selector: string): string {
  return growth(selector, "$__range");
}

/** `expr` only where the level's series held at least {@link MINIMUM_TOOL_CALLS} in `window`. */
function withTraffic(filters: Filters, level: Level, window: string, expr: string): string {
  return `${expr} and ${filters.recorded(level, "toolCalls", window)} * ${seconds(window)} >= ${MINIMUM_TOOL_CALLS}`;
}

/** The dangling share of a level over `window`, drawn only where the window holds enough calls. */
export function guardedShare(filters: Filters, level: Level, window: string): string {
  return withTraffic(filters, level, window, filters.recorded(level, "ratio", window));
}

/** The burn rate of each model over `window`, as the alerts evaluate it. */
export function modelBurnRate(filters: Filters, window: string): string {
  return filters.recorded("model", "burnRate", window);
}

/** The summary stats over the dashboard's time range, each 0 only where telemetry arrives. */
export interface SummaryQueries {
  /** Tool calls the models issued. */
  readonly toolCalls: string;
  /** Tool calls left without a result. */
  readonly dangling: string;
  /** Dangling tool calls per tool call. */
  readonly share: string;
  /** Model calls that went out unrepaired because the repair failed. */
  readonly failedOpen: string;
  /** Overflow series of the library now, one per instrument and process over its limit. */
  readonly overflowSeries: string;
}

/** The queries of the summary stats. */
export function summaryQueries(filters: Filters): SummaryQueries {
  const { select } = filters;
  const toolCalls = sumAll(growthOverRange(select("toolCalls")));
  const dangling = sumAll(growthOverRange(select("danglingToolCalls")));
  const failedOpen = sumAll(
    growthOverRange(select("modelCalls", equals(labels.outcome, values.outcomeFailedOpen))),
  );
  // The selector the CardinalityOverflow alert counts: one series per overflowing instrument.
  const chosen = chosenProcessMatchers();
  const overflowSeries = `count(${overflowSelector(...chosen)})`;
  // Each count is 0 where the series it would be counted among are there, and stays missing (No
  // data, not a green 0) where no telemetry arrives.
  const everySeries = `count(${instrumentSelector(...chosen)})`;
  return {
    toolCalls,
    dangling: orZero(dangling, toolCalls),
    share: share(dangling, toolCalls),
    failedOpen: orZero(failedOpen, sumAll(growthOverRange(select("modelCalls")))),
    overflowSeries: orZero(overflowSeries, everySeries),
  };
}

/** A counter's rate per model (and provider), summed over processes and the other attributes. */
export function ratePerModel(filters: Filters, key: SeriesKey): string {
  return sumWithout(summedAway.model, rate(filters.select(key)));
}

/**
 * The labels a counter's series are summed without to make one series per process: the scope and
 * the library's attributes it records. Whatever else the series carry (`job`, `instance`, `pod`,
 * the topology, any other target label) stays, so every figure of a process has the same labels,
 * those of its `up`, and the table merges them into one row.
 */
const perInstanceAway = {
  modelCalls: [...scopeLabels, labels.provider, labels.model, labels.agent, labels.outcome],
  calls: [...scopeLabels, labels.provider, labels.model, labels.tool, labels.reason],
} as const;

/** The figures of the Instances table, by the ref id of their query, in column order. */
export type InstanceFigure =
  | "up"
  | "last_report"
  | "model_calls"
  | "share"
  | "peers"
  | "failed_open";

/**
 * The queries of the Instances table, by ref id: one row per process of the chosen jobs and
 * topology (and Instance), each figure over {@link INSTANCE_WINDOW} unless said.
 *
 * - `up`: whether Prometheus's last scrape of the process succeeded, 1 or 0 (scraped processes
 *   only: pushed ones have no `up`). A target that service discovery dropped has none either.
 * - `last_report`: seconds since the process's newest model-call sample, over the window: a few
 *   seconds while it reports, the time since it died once it stopped (killed, or its scrapes
 *   failing). A process silent for longer than the window has no row.
 * - `model_calls`: its model calls per second.
 * - `share`: the share of its tool calls that dangled, where it had at least
 *   {@link MINIMUM_TOOL_CALLS}.
 * - `peers`: the same share over every other process of its job and topology (the fleet's
 *   dangling calls less its own, over the fleet's tool calls less its own), whatever Instance
 *   says, which is what ToolCallResilienceInstanceDanglingOutlier compares it with.
 * - `failed_open`: its model calls that went out unrepaired because the library failed
 *   ({@link growth}, so a process killed since counts), 0 where it reports model calls.
 *
 * Every sum across processes is a `sum without` the process labels of per-series rates; every
 * other aggregation keeps the process.
 */
export function instanceQueries(filters: Filters): Readonly<Record<InstanceFigure, string>> {
  const { select, selectEveryInstance } = filters;
  const window = INSTANCE_WINDOW;
  const processLabels = bundleConfig.processLabels;
  const perInstance = (key: "toolCalls" | "danglingToolCalls") =>
    sumWithout(perInstanceAway.calls, `rate(${select(key)}[${window}])`);
  const fleet = (key: "toolCalls" | "danglingToolCalls") =>
    sumWithout(
      [...processLabels, ...perInstanceAway.calls],
      `rate(${selectEveryInstance(key)}[${window}])`,
    );
  /** The fleet's figure less the process's own, one per process. */
  const peers = (fleetFigure: string, own: string) =>
    `(${fleetFigure} - ignoring (${processLabels.join(", ")}) group_right () ${own})`;
  const toolCalls = perInstance("toolCalls");
  const dangling = perInstance("danglingToolCalls");
  const modelCalls = sumWithout(
    perInstanceAway.modelCalls,
    `rate(${select("modelCalls")}[${window}])`,
  );
  const failedOpen = sumWithout(
    perInstanceAway.modelCalls,
    growth(select("modelCalls", equals(labels.outcome, values.outcomeFailedOpen)), window),
  );
  const modelCallSeries = select("modelCalls");
  const up = `${reportingSeries.up}{${chosenProcessMatchers().join(", ")}}`;
  return {
    // `== bool 1` drops the metric name, which the other columns do not have either.
    up: `${up} == bool 1`,
    last_report: `time() - ${newestPerProcess(
      perInstanceAway.modelCalls,
      `timestamp(${modelCallSeries}) or max_over_time(timestamp(${modelCallSeries})[${window}:1m])`,
    )}`,
    model_calls: modelCalls,
    share: `${share(dangling, toolCalls)} and ${toolCalls} * ${seconds(window)} >= ${MINIMUM_TOOL_CALLS}`,
    peers: share(
      peers(fleet("danglingToolCalls"), `(${orZero(dangling, toolCalls)})`),
      peers(fleet("toolCalls"), toolCalls),
    ),
    failed_open: orZero(failedOpen, modelCalls),
  };
}

/**
 * The newest of a process's values (`max without` the labels of its attributes): a maximum of
 * timestamps within one process, never across processes.
 */
function newestPerProcess(without: readonly string[], expr: string): string {
  return `max without (${without.join(", ")}) (${expr})`;
}

/** Model calls per second of each process, whatever their model or outcome. */
export function modelCallsPerInstance(filters: Filters): string {
  return sumWithout(perInstanceAway.modelCalls, rate(filters.select("modelCalls")));
}

/** The share of each model's calls whose request needed a repair. */
export function repairedShare(filters: Filters): string {
  const { select } = filters;
  const perModel = [...perProcess, labels.agent, labels.outcome];
  const repaired = sumWithout(
    perModel,
    rate(select("modelCalls", equals(labels.outcome, values.outcomeRepaired))),
  );
  const all = sumWithout(perModel, rate(select("modelCalls")));
  return share(repaired, all);
}

/** Repairs per second by kind, across every model. */
export function repairsByKind(filters: Filters): string {
  return sumWithout(
    [...perProcess, labels.provider, labels.model],
    rate(filters.select("repairs")),
  );
}

/** Repairs per second per model and kind. */
export function repairsByKindPerModel(filters: Filters): string {
  return sumWithout(perProcess, rate(filters.select("repairs")));
}

/** Dangling tool calls per second per model and reason. */
export function danglingByReason(filters: Filters): string {
  return sumWithout(
    [...perProcess, labels.provider, labels.tool],
    rate(filters.select("danglingToolCalls")),
  );
}

/** Model calls per second per agent, model and outcome. */
export function modelCallsByOutcome(filters: Filters): string {
  return sumWithout(perProcess, rate(filters.select("modelCalls")));
}

/** Inspections of a request per second, per duration bucket (`le`). */
export function repairDurationBuckets(filters: Filters): string {
  return `sum by (le) (${rate(filters.select("repairDurationBucket"))})`;
}

/** One quantile of the repair duration, named after it (`p95`). */
export interface QuantileQuery {
  /** `p` and the percentile: the query's ref id and legend text. */
  readonly name: string;
  /** The PromQL. */
  readonly expr: string;
}

/** Each of {@link LATENCY_QUANTILES} of the repair duration, summing `without` from the buckets. */
export function repairDurationQuantiles(
  filters: Filters,
  without: readonly string[],
): QuantileQuery[] {
  const buckets = sumWithout(without, rate(filters.select("repairDurationBucket")));
  return LATENCY_QUANTILES.map((quantile) => ({
    name: `p${quantile * 100}`,
    expr: `histogram_quantile(${quantile}, ${buckets})`,
  }));
}

/** A thread's recent dangling calls, summed over the processes that report it. */
function perThread(filters: Filters): string {
  return sumWithout(perProcess, filters.select("threadRecentDanglingToolCalls"));
}

/** The `count` threads with the most recent dangling calls. */
export function topThreads(filters: Filters, count: number): string {
  return `topk(${count}, ${perThread(filters)})`;
}

/** Tool calls, dangling calls and their share per model or per tool, over the time range. */
export interface TotalsQueries {
  /** Tool calls issued. */
  readonly toolCalls: string;
  /** Dangling tool calls, 0 where tool calls are counted. */
  readonly dangling: string;
  /** Dangling calls per tool call. */
  readonly ratio: string;
}

/** The queries of a totals table of `level`. */
export function totalsQueries(filters: Filters, level: "model" | "tool"): TotalsQueries {
  const toolCalls = sumWithout(summedAway[level], growthOverRange(filters.select("toolCalls")));
  const dangling = sumWithout(
    summedAway[level],
    growthOverRange(filters.select("danglingToolCalls")),
  );
  return {
    toolCalls,
    dangling: orZero(dangling, toolCalls),
    ratio: share(dangling, toolCalls),
  };
}

/**
 * Every `ToolCallResilience…` alert firing in the chosen jobs and topology, from the `ALERTS`
 * series of the Prometheus that evaluates the rules.
 */
export function firingAlerts(): string {
  const where = PROCESS_VARIABLES.filter((variable) => variable !== labels.instance).map((v) =>
    matchesVariable(v, v),
  );
  return `ALERTS{${['alertname=~"ToolCallResilience.*"', 'alertstate="firing"', ...where].join(", ")}}`;
}
