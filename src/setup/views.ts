/**
 * The metric views we recommend for the library's instruments: an attribute allow-list per
 * instrument, cardinality limits, and the duration histogram's buckets in seconds.
 */
import { z } from "zod/v4";
import { optionsError } from "../core/errors.js";
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

const limitSchema = z
  .int({ error: "expected a whole number of series, 2 or more" })
  .min(2, { error: "expected a whole number of series, 2 or more (one is the overflow series)" });

/** The options of `recommendedViews`, field by field. */
const viewsOptionsShape = {
  /**
   * Most series each instrument keeps, the overflow series included; further attribute sets are
   * added to the series labelled `otel.metric.overflow="true"`.
   * @default 2000
   */
  cardinalityLimit: limitSchema
    .default(2000)
    .describe(
      "Most series each instrument keeps, the overflow series included; further attribute sets go to the overflow series.",
    ),
  // Named rather than unknown, so that code written for the per-thread counter learns where its
  // bound went: at run time from the error, in an editor from the deprecation.
  /**
   * Refused: the per-thread metric is no instrument, and the middleware's `threadSeriesLimit`
   * bounds it. Its type admits only `undefined`, so a value is a type error as well.
   * @deprecated No longer an option; set `threadSeriesLimit` on the middleware instead.
   */
  threadCardinalityLimit: z
    .never({
      error:
        "was removed; set threadSeriesLimit on danglingToolCallMiddleware (or whichever attachment records) instead: the per-thread metric is no instrument, so no view bounds it",
    })
    .optional()
    .describe(
      "No longer an option, refused: the per-thread metric is no instrument, and the middleware's `threadSeriesLimit` bounds it.",
    ),
};

/**
 * The options of {@link recommendedViews}, defined once: the validation, the TSDoc editors show
 * through {@link RecommendedViewsOptions}, and a `describe` text for each.
 */
export const viewsOptionsSchema: z.ZodObject<typeof viewsOptionsShape, z.core.$strict> =
  z.strictObject(viewsOptionsShape);

/**
 * Options of {@link recommendedViews}. The type is what {@link viewsOptionsSchema} accepts; each
 * option is documented on its field.
 */
export type RecommendedViewsOptions = z.input<typeof viewsOptionsSchema>;

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
