/**
 * The Prometheus names of everything the library emits, derived from `src/telemetry/semconv.ts`
 * the way the OpenTelemetry Prometheus exporter derives them: dots become underscores, counters get
 * `_total`, histograms `_bucket`, `_sum` and `_count`, and no unit suffix is added. Every query of
 * the dashboards and rules is written with these constants, so a renamed instrument or attribute
 * changes the generated files (and fails the drift test) instead of leaving a query that matches
 * nothing.
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
  INSTRUMENTATION_SCOPE_NAME,
  METRIC_DANGLING_TOOL_CALLS,
  METRIC_MODEL_CALLS,
  METRIC_REPAIR_DURATION,
  METRIC_REPAIRS,
  METRIC_THREAD_DANGLING_TOOL_CALLS,
  METRIC_TOOL_CALLS,
  OUTCOME_VALUE_CLEAN,
  OUTCOME_VALUE_FAILED_OPEN,
  OUTCOME_VALUE_REPAIRED,
  TOOL_NAME_VALUE_OTHER,
} from "../../src/telemetry/semconv.js";

/** A metric or attribute name as the Prometheus exporter writes it. */
export function prometheusName(openTelemetryName: string): string {
  return openTelemetryName.replace(/[^a-zA-Z0-9_:]/g, "_");
}

/** Series names (Prometheus exposition) of the instruments. */
export const series = {
  modelCalls: `${prometheusName(METRIC_MODEL_CALLS)}_total`,
  toolCalls: `${prometheusName(METRIC_TOOL_CALLS)}_total`,
  danglingToolCalls: `${prometheusName(METRIC_DANGLING_TOOL_CALLS)}_total`,
  repairs: `${prometheusName(METRIC_REPAIRS)}_total`,
  threadDanglingToolCalls: `${prometheusName(METRIC_THREAD_DANGLING_TOOL_CALLS)}_total`,
  repairDurationBucket: `${prometheusName(METRIC_REPAIR_DURATION)}_bucket`,
  repairDurationSum: `${prometheusName(METRIC_REPAIR_DURATION)}_sum`,
  repairDurationCount: `${prometheusName(METRIC_REPAIR_DURATION)}_count`,
} as const;

/** Label names (Prometheus exposition) of the attributes. */
export const labels = {
  provider: prometheusName(ATTR_GEN_AI_PROVIDER_NAME),
  model: prometheusName(ATTR_GEN_AI_REQUEST_MODEL),
  agent: prometheusName(ATTR_GEN_AI_AGENT_NAME),
  thread: prometheusName(ATTR_GEN_AI_CONVERSATION_ID),
  tool: prometheusName(ATTR_GEN_AI_TOOL_NAME),
  outcome: prometheusName(ATTR_OUTCOME),
  reason: prometheusName(ATTR_REASON),
  repairKind: prometheusName(ATTR_REPAIR_KIND),
  /** Added by the exporter to every series. */
  scope: "otel_scope_name",
  /** Set by the SDK on the overflow series of an instrument past its cardinality limit. */
  overflow: "otel_metric_overflow",
  /** Added by Prometheus from the scrape configuration. */
  job: "job",
  instance: "instance",
} as const;

/** Label values the queries select on. */
export const values = {
  scope: INSTRUMENTATION_SCOPE_NAME,
  outcomeClean: OUTCOME_VALUE_CLEAN,
  outcomeRepaired: OUTCOME_VALUE_REPAIRED,
  outcomeFailedOpen: OUTCOME_VALUE_FAILED_OPEN,
  otherTool: TOOL_NAME_VALUE_OTHER,
} as const;

/**
 * The series that carry an instrument's overflow, one each: the counters and the histogram's
 * `_count` (its `_bucket` and `_sum` series would count the same overflow again).
 */
export const overflowSeries: readonly string[] = Object.freeze(
  Object.values(series).filter(
    (name) => name !== series.repairDurationBucket && name !== series.repairDurationSum,
  ),
);

/**
 * The overflow series of the library's instruments, one per overflowing instrument and process:
 * the selector both the `ToolCallResilienceCardinalityOverflow` alert and the overview's
 * *Overflow series* stat count. `matchers` are appended (the dashboards add their `job` filter).
 */
export function overflowSelector(...matchers: readonly string[]): string {
  const all = [
    `__name__=~"${overflowSeries.join("|")}"`,
    `${labels.scope}="${values.scope}"`,
    `${labels.overflow}="true"`,
    ...matchers,
  ];
  return `{${all.join(", ")}}`;
}
