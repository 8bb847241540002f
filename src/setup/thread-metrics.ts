/**
 * The producer of the per-thread metric, `tool_call_resilience.thread.recent_dangling_tool_calls`:
 * a gauge of the dangling calls each thread had in the last `threadWindow` seconds, for the
 * threads that had one, at most `threadSeriesLimit` of them.
 *
 * It is no instrument: under cumulative temporality the OpenTelemetry JS SDK reports every
 * attribute set an instrument ever had, for the life of the process, so no counter or gauge can
 * report only the threads that matter now. A `MetricProducer` can: a metric reader given one in
 * its `metricProducers` option calls it at each collection and reports exactly what it returns.
 * The middleware keeps the counts (`src/telemetry/thread-activity.ts`); this reads them.
 */
import { type MeterProvider, metrics, ValueType } from "@opentelemetry/api";
import { z } from "zod/v4";
import { optionsError } from "../core/errors.js";
import { THREAD_RECENT_DANGLING_DESCRIPTION } from "../telemetry/instruments.js";
import {
  ATTR_GEN_AI_CONVERSATION_ID,
  ATTR_GEN_AI_REQUEST_MODEL,
  INSTRUMENTATION_SCOPE_NAME,
  METRIC_THREAD_RECENT_DANGLING_TOOL_CALLS,
  UNIT_CALL,
} from "../telemetry/semconv.js";
import { threadActivityOf } from "../telemetry/thread-activity.js";
import { PACKAGE_VERSION } from "../version.js";
import { loadCore, loadResources, loadSdkMetrics } from "./sdk.js";
import type { MetricCollection, MetricProducer } from "./sdk-types.js";

export type { MetricProducer } from "./sdk-types.js";

/** The options of `threadMetricsProducer`, field by field. */
const threadMetricsProducerOptionsShape = {
  /**
   * The meter provider whose middleware's per-thread counts to report: the one the middleware
   * records to (its `meterProvider` option, else the global one).
   * @default metrics.getMeterProvider(), looked up at each collection
   */
  meterProvider: z
    .custom<MeterProvider>(
      (value) =>
        typeof value === "object" &&
        value !== null &&
        typeof (value as MeterProvider).getMeter === "function",
      { error: "expected a MeterProvider: an object with a getMeter(name, version) method" },
    )
    .optional()
    .describe(
      "The meter provider the middleware records to, whose per-thread counts to report; by default the global one, looked up at each collection.",
    ),
};

/**
 * The options of {@link threadMetricsProducer}, defined once: the validation, the TSDoc editors
 * show through {@link ThreadMetricsProducerOptions}, and a `describe` text for each.
 */
export const threadMetricsProducerOptionsSchema: z.ZodObject<
  typeof threadMetricsProducerOptionsShape,
  z.core.$strict
> = z.strictObject(threadMetricsProducerOptionsShape);

/**
 * Options of {@link threadMetricsProducer}. The type is what
 * {@link threadMetricsProducerOptionsSchema} accepts; each option is documented on its field.
 */
export type ThreadMetricsProducerOptions = z.input<typeof threadMetricsProducerOptionsSchema>;

type ScopeMetrics = MetricCollection["resourceMetrics"]["scopeMetrics"][number];

/**
 * A `MetricProducer` that reports the per-thread metric,
 * `tool_call_resilience.thread.recent_dangling_tool_calls` (Prometheus:
 * `tool_call_resilience_thread_recent_dangling_tool_calls`): a gauge, per thread and model, of the
 * dangling calls counted in the last `threadWindow` seconds, for the threads that had one, at most
 * `threadSeriesLimit` of them, the most first. A thread whose calls have left the window is no
 * longer reported, so its series ends. {@link startTelemetry} registers one on every reader it
 * makes; with an SDK of your own, give one to each metric reader, in its `metricProducers` option.
 * Without it, the per-thread metric is not exported at all (the other metrics are).
 *
 * A collection never fails because of it: an error is handed to the reader among the
 * collection's errors (which the SDK reports through its diagnostic logger), and the rest of the
 * metrics are exported.
 *
 * Needs the optional peer dependency `@opentelemetry/sdk-node`, whose `@opentelemetry/sdk-metrics`
 * gives the metric's data types.
 *
 * @throws {ToolCallResilienceOptionsError} when `meterProvider` is not a meter provider.
 * @throws {ToolCallResilienceSetupError} when `@opentelemetry/sdk-node` is not installed.
 *
 * @example With your own SDK
 * ```ts
 * import { NodeSDK } from "@opentelemetry/sdk-node";
 * import { PrometheusExporter } from "@opentelemetry/exporter-prometheus";
 * import { recommendedViews, threadMetricsProducer } from "tool-call-resilience/setup";
 *
 * new NodeSDK({
 *   metricReaders: [new PrometheusExporter({ metricProducers: [threadMetricsProducer()] })],
 *   views: recommendedViews(),
 * }).start();
 * ```
 */
export function threadMetricsProducer(options: ThreadMetricsProducerOptions = {}): MetricProducer {
  const parsed = threadMetricsProducerOptionsSchema.safeParse(options);
  if (!parsed.success) throw optionsError(parsed.error, "threadMetricsProducer");
  const { meterProvider } = parsed.data;
  const purpose = "threadMetricsProducer()";
  const { AggregationTemporality, DataPointType } = loadSdkMetrics(purpose);
  const { millisToHrTime } = loadCore(purpose);
  // Readers ignore a producer's resource and report the SDK's: this one only fills the shape.
  const resource = loadResources(purpose).emptyResource();
  const collected = (scopeMetrics: ScopeMetrics[], errors: unknown[] = []): MetricCollection =>
    ({ resourceMetrics: { resource, scopeMetrics }, errors }) as unknown as MetricCollection;
  return {
    async collect() {
      try {
        const provider = meterProvider ?? metrics.getMeterProvider();
        const series = threadActivityOf(provider)?.top() ?? [];
        // No thread in the window: no metric at all, rather than one without points.
        if (series.length === 0) return collected([]);
        const time = millisToHrTime(Date.now());
        const metric = {
          descriptor: {
            name: METRIC_THREAD_RECENT_DANGLING_TOOL_CALLS,
            description: THREAD_RECENT_DANGLING_DESCRIPTION,
            unit: UNIT_CALL,
            valueType: ValueType.INT,
          },
          aggregationTemporality: AggregationTemporality.CUMULATIVE,
          dataPointType: DataPointType.GAUGE,
          dataPoints: series.map(({ thread, model, count }) => ({
            startTime: time,
            endTime: time,
            attributes: {
              [ATTR_GEN_AI_CONVERSATION_ID]: thread,
              [ATTR_GEN_AI_REQUEST_MODEL]: model,
            },
            value: count,
          })),
        };
        return collected([
          {
            scope: { name: INSTRUMENTATION_SCOPE_NAME, version: PACKAGE_VERSION },
            metrics: [metric],
          } as unknown as ScopeMetrics,
        ]);
      } catch (error) {
        return collected([], [error]);
      }
    },
  };
}
