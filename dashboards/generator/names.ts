/**
 * The Prometheus names of everything the library emits, derived from `src/telemetry/semconv.ts`,
 * on both paths the series take to Prometheus (see {@link SHAPES}). Every query of the dashboards
 * and rules is written with these constants, so a renamed instrument or attribute changes the
 * generated files (and fails the drift test) instead of leaving a query that matches nothing.
 */
import {
  ATTR_GEN_AI_AGENT_NAME,
  ATTR_GEN_AI_CONVERSATION_ID,
  ATTR_GEN_AI_PROVIDER_NAME,
  ATTR_GEN_AI_REQUEST_MODEL,
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_OUTCOME,
  ATTR_REASON,
  ATTR_REPAIR_KIND,
  GEN_AI_TOOL_NAME_VALUE_OTHER,
  METRIC_DANGLING_TOOL_CALLS,
  METRIC_MODEL_CALLS,
  METRIC_REPAIR_DURATION,
  METRIC_REPAIRS,
  METRIC_THREAD_RECENT_DANGLING_TOOL_CALLS,
  METRIC_TOOL_CALLS,
  OUTCOME_VALUE_CLEAN,
  OUTCOME_VALUE_FAILED_OPEN,
  OUTCOME_VALUE_REPAIRED,
  UNIT_CALL,
  UNIT_REPAIR,
  UNIT_SECONDS,
} from "../../src/telemetry/semconv.js";

/**
 * The two shapes in which the library's series reach Prometheus. The bundle reads both, so one
 * bundle serves every fleet, and a fleet that moves from one path to the other.
 *
 * - `scrape`: the OpenTelemetry JavaScript Prometheus exporter in each process, scraped by
 *   Prometheus. No unit suffix; every series carries `otel_scope_name`; `job` and `instance` come
 *   from the scrape configuration, which also writes `up`.
 * - `otlp`: OTLP pushed to Prometheus's OTLP receiver (default translation, scope labels not
 *   promoted), or through an OpenTelemetry Collector. The unit `s` adds `_seconds`; there is no
 *   `otel_scope_name`; `job` is the resource's `service.name` (`service.namespace/service.name`)
 *   and `instance` its `service.instance.id`; there is no `up`, and a series no longer pushed
 *   disappears after Prometheus's lookback (5 minutes) instead of going stale at once.
 *
 * On both, the counters keep their names and labels, and `target_info` carries each process's
 * resource with its `job` and `instance`.
 */
export const SHAPES = ["scrape", "otlp"] as const;

/** One of {@link SHAPES}. */
export type Shape = (typeof SHAPES)[number];

/** A metric or attribute name as Prometheus stores it: dots (and any other symbol) become `_`. */
export function prometheusName(openTelemetryName: string): string {
  return openTelemetryName.replace(/[^a-zA-Z0-9_:]/g, "_");
}

/**
 * The suffix a path adds to a metric name for its unit. The JavaScript Prometheus exporter adds
 * none; the OTLP translation drops UCUM annotations (`{call}`) and spells out the others. Only the
 * units the library uses are known: a new one must be looked up, not guessed.
 */
function unitSuffix(shape: Shape, unit: string): string {
  if (shape === "scrape" || /^\{[^}]*\}$/.test(unit)) return "";
  const spelled: Record<string, string> = { [UNIT_SECONDS]: "seconds" };
  const suffix = spelled[unit];
  if (suffix === undefined) throw new Error(`no OTLP unit suffix known for the unit ${unit}`);
  return `_${suffix}`;
}

function seriesOf(shape: Shape) {
  const counter = (name: string, unit: string) =>
    `${prometheusName(name)}${unitSuffix(shape, unit)}_total`;
  const gauge = (name: string, unit: string) => `${prometheusName(name)}${unitSuffix(shape, unit)}`;
  const histogram = `${prometheusName(METRIC_REPAIR_DURATION)}${unitSuffix(shape, UNIT_SECONDS)}`;
  return Object.freeze({
    modelCalls: counter(METRIC_MODEL_CALLS, UNIT_CALL),
    toolCalls: counter(METRIC_TOOL_CALLS, UNIT_CALL),
    danglingToolCalls: counter(METRIC_DANGLING_TOOL_CALLS, UNIT_CALL),
    repairs: counter(METRIC_REPAIRS, UNIT_REPAIR),
    threadRecentDanglingToolCalls: gauge(METRIC_THREAD_RECENT_DANGLING_TOOL_CALLS, UNIT_CALL),
    repairDurationBucket: `${histogram}_bucket`,
    repairDurationSum: `${histogram}_sum`,
    repairDurationCount: `${histogram}_count`,
  });
}

/**
 * Series names of the instruments on each path. The counters are named alike on both; the
 * histogram is `tool_call_resilience_repair_duration_*` when scraped and
 * `tool_call_resilience_repair_duration_seconds_*` when pushed.
 */
export const seriesByShape: Readonly<Record<Shape, ReturnType<typeof seriesOf>>> = Object.freeze({
  scrape: seriesOf("scrape"),
  otlp: seriesOf("otlp"),
});

/**
 * Series names as a process's `/metrics` endpoint exposes them (the scrape path), for reading an
 * exposition. Queries select with {@link seriesSelector}, which reads both paths.
 */
export const series = seriesByShape.scrape;

/** An instrument's series, by the key both {@link series} and {@link seriesByShape} use. */
export type SeriesKey = keyof typeof series;

/** The names of one series on every path, each once. */
export function namesOf(key: SeriesKey): readonly string[] {
  return [...new Set(SHAPES.map((shape) => seriesByShape[shape][key]))];
}

/**
 * A selector of one series on both paths: `name{matchers}` where the paths name it alike,
 * `{__name__=~"scraped|pushed", matchers}` where they do not (the histogram). Without matchers
 * and with one name, the bare name.
 */
export function seriesSelector(key: SeriesKey, ...matchers: readonly string[]): string {
  const names = namesOf(key);
  if (names.length === 1) {
    return matchers.length === 0 ? `${names[0]}` : `${names[0]}{${matchers.join(", ")}}`;
  }
  return `{${[`__name__=~"${names.join("|")}"`, ...matchers].join(", ")}}`;
}

/** Label names (Prometheus) of the attributes, the same on both paths. */
export const labels = {
  provider: prometheusName(ATTR_GEN_AI_PROVIDER_NAME),
  model: prometheusName(ATTR_GEN_AI_REQUEST_MODEL),
  agent: prometheusName(ATTR_GEN_AI_AGENT_NAME),
  thread: prometheusName(ATTR_GEN_AI_CONVERSATION_ID),
  tool: prometheusName(ATTR_GEN_AI_TOOL_NAME),
  outcome: prometheusName(ATTR_OUTCOME),
  reason: prometheusName(ATTR_REASON),
  repairKind: prometheusName(ATTR_REPAIR_KIND),
  /** Set by the SDK on the overflow series of an instrument past its cardinality limit. */
  overflow: "otel_metric_overflow",
  /**
   * The scrape configuration's job, or the pushed resource's `service.name` (prefixed with
   * `service.namespace/` when it has one).
   */
  job: "job",
  /** The scraped `host:port`, or the pushed resource's `service.instance.id`. */
  instance: "instance",
} as const;

/**
 * The labels the Prometheus exporter adds to every series for the instrumentation scope (the last
 * one only for a scope with a schema URL). The OTLP path drops them. Every rule sums them away, so
 * a rolling upgrade of the library does not split a model's series in two.
 */
export const scopeLabels = [
  "otel_scope_name",
  "otel_scope_version",
  "otel_scope_schema_url",
] as const;

/**
 * Series that are not the library's but tell whether a job reports at all. `otel_scope_name` is
 * not among the labels the bundle reads: the OTLP path drops it.
 */
export const reportingSeries = {
  /** Written by Prometheus for every scrape target, 1 when the scrape succeeded: scrape path only. */
  up: "up",
  /**
   * The resource of each process, 1, with its `job` and `instance`: exposed by the Prometheus
   * exporter, and written by Prometheus's OTLP receiver (or a Collector) with every push.
   */
  targetInfo: "target_info",
} as const;

/** Label values the queries select on. */
export const values = {
  outcomeClean: OUTCOME_VALUE_CLEAN,
  outcomeRepaired: OUTCOME_VALUE_REPAIRED,
  outcomeFailedOpen: OUTCOME_VALUE_FAILED_OPEN,
  otherTool: GEN_AI_TOOL_NAME_VALUE_OTHER,
} as const;

/**
 * A regular expression matching one series name per instrument and path, and no other series of
 * the library: each counter's `_total` and the histogram's `_count` (its `_bucket` and `_sum` would
 * count the same instrument again; the per-thread gauge, the library's own, never overflows). No
 * other library writes these names, so they select the library's series without `otel_scope_name`.
 */
export const INSTRUMENT_SERIES_PATTERN = `${prometheusName(METRIC_MODEL_CALLS).replace(/model_calls$/, "")}.+_(total|count)`;

/**
 * The overflow series of the library's instruments, one per overflowing instrument and process:
 * the selector the overflow records count. `matchers` are appended.
 */
export function overflowSelector(...matchers: readonly string[]): string {
  const pattern = `__name__=~"${INSTRUMENT_SERIES_PATTERN}"`;
  return `{${[pattern, `${labels.overflow}="true"`, ...matchers].join(", ")}}`;
}
