/**
 * The metric views we recommend for the library's instruments: an attribute allow-list per
 * instrument, cardinality limits, and the duration histogram's buckets in seconds.
 */
import { z } from "zod/v4";
import { optionsError } from "../core/policy.js";
import {
  ATTR_GEN_AI_AGENT_NAME,
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
  METRIC_TOOL_CALLS,
  REPAIR_DURATION_BUCKETS,
} from "../telemetry/semconv.js";
import { loadSdkMetrics } from "./sdk.js";
import type { MetricView } from "./sdk-types.js";

export type { MetricView } from "./sdk-types.js";

/** Options of {@link recommendedViews}. */
export interface RecommendedViewsOptions {
  /**
   * Most series each instrument keeps, the overflow series included; further attribute sets are
   * added to the series labelled `otel.metric.overflow="true"`.
   * @default 2000
   */
  cardinalityLimit?: number;
}

const limitSchema = z
  .int({ error: "expected a whole number of series, 2 or more" })
  .min(2, { error: "expected a whole number of series, 2 or more (one is the overflow series)" });

const viewsOptionsSchema = z.strictObject({
  cardinalityLimit: limitSchema.default(2000),
  // Gone with the per-thread counter: named, so that code written for it learns where its bound went.
  threadCardinalityLimit: z
    .never({
      error:
        "no longer an option: the per-thread metric is no instrument, and the middleware's threadSeriesLimit bounds it",
    })
    .optional(),
});

const MODEL_ATTRIBUTES = [ATTR_GEN_AI_PROVIDER_NAME, ATTR_GEN_AI_REQUEST_MODEL];

/** The attributes each instrument may carry; anything else is dropped by the view. */
const ALLOWED_ATTRIBUTES: Readonly<Record<string, readonly string[]>> = {
  [METRIC_MODEL_CALLS]: [...MODEL_ATTRIBUTES, ATTR_GEN_AI_AGENT_NAME, ATTR_OUTCOME],
  [METRIC_TOOL_CALLS]: [...MODEL_ATTRIBUTES, ATTR_GEN_AI_TOOL_NAME],
  [METRIC_DANGLING_TOOL_CALLS]: [...MODEL_ATTRIBUTES, ATTR_GEN_AI_TOOL_NAME, ATTR_REASON],
  [METRIC_REPAIRS]: [...MODEL_ATTRIBUTES, ATTR_REPAIR_KIND],
  [METRIC_REPAIR_DURATION]: [ATTR_OUTCOME],
};

/**
 * Views for the library's instruments, to give a `MeterProvider` or `NodeSDK` along with your
 * own: each instrument keeps only its documented attributes and at most `cardinalityLimit` series,
 * and the duration histogram uses buckets from 1 µs to 100 ms. {@link startTelemetry} uses them by
 * default. The per-thread metric is no instrument, so no view applies to it: its producer
 * ({@link threadMetricsProducer}) reports it, bounded by the middleware's `threadSeriesLimit`.
 *
 * Needs the optional peer dependency `@opentelemetry/sdk-node`; the views are made with the
 * `@opentelemetry/sdk-metrics` it brings.
 *
 * @throws {ToolCallResilienceOptionsError} when `cardinalityLimit` is not a whole number of 2 or
 *   more, or an option is unknown (`threadCardinalityLimit` among them: it went with the
 *   per-thread counter).
 * @throws {ToolCallResilienceSetupError} when `@opentelemetry/sdk-node` is not installed.
 *
 * @example With your own SDK
 * ```ts
 * import { NodeSDK } from "@opentelemetry/sdk-node";
 * import { PrometheusExporter } from "@opentelemetry/exporter-prometheus"; // your own exporter
 * import { recommendedViews, threadMetricsProducer } from "tool-call-resilience/setup";
 *
 * new NodeSDK({
 *   metricReaders: [new PrometheusExporter({ metricProducers: [threadMetricsProducer()] })],
 *   views: [...recommendedViews(), ...myViews],
 * }).start();
 * ```
 */
export function recommendedViews(options: RecommendedViewsOptions = {}): MetricView[] {
  const parsed = viewsOptionsSchema.safeParse(options);
  if (!parsed.success) throw optionsError(parsed.error, "recommendedViews");
  const { cardinalityLimit } = parsed.data;
  const sdkMetrics = loadSdkMetrics("recommendedViews()");
  return Object.entries(ALLOWED_ATTRIBUTES).map(([instrumentName, allowed]) => {
    const view: MetricView = {
      meterName: INSTRUMENTATION_SCOPE_NAME,
      instrumentName,
      attributesProcessors: [sdkMetrics.createAllowListAttributesProcessor([...allowed])],
      aggregationCardinalityLimit: cardinalityLimit,
    };
    if (instrumentName === METRIC_REPAIR_DURATION) {
      view.aggregation = {
        type: sdkMetrics.AggregationType.EXPLICIT_BUCKET_HISTOGRAM,
        options: { boundaries: [...REPAIR_DURATION_BUCKETS] },
      };
    }
    return view;
  });
}
