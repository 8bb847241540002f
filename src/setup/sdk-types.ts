/**
 * The SDK's types the setup entry point exposes, taken from `@opentelemetry/sdk-node`'s own
 * configuration type, so they are those of whichever release of the SDK the application installed.
 */
import type { NodeSDKConfiguration } from "@opentelemetry/sdk-node";

type SdkMetricView = NodeSDKConfiguration["views"][number];
type SdkSpanProcessor = NonNullable<NodeSDKConfiguration["spanProcessors"]>[number];

// MetricView and SpanProcessor are interfaces, not aliases: declarations then name them, where an
// alias would be written out as the SDK package that defines it, which an application on the
// setup entry point need not have installed where its compiler looks.

/** A metric view, as `NodeSDK` and the `MeterProvider` of `@opentelemetry/sdk-metrics` take it. */
export interface MetricView extends SdkMetricView {}

/** A metric reader, such as a `PeriodicExportingMetricReader` or a `PrometheusExporter`. */
export type MetricReader = NonNullable<NodeSDKConfiguration["metricReaders"]>[number];

/** A span processor, such as a `BatchSpanProcessor` with an OTLP exporter. */
export interface SpanProcessor extends SdkSpanProcessor {}

/** What a metric reader's collection returns: the resource and its scopes' metrics. */
export type MetricCollection = Awaited<ReturnType<MetricReader["collect"]>>;

/**
 * A source of metrics that a metric reader collects beside the SDK's own instruments, given in
 * its `metricProducers` option (`PrometheusExporter`, `PeriodicExportingMetricReader`).
 */
export interface MetricProducer {
  /** What the reader reports, as it is, at each collection; the resource is the SDK's. */
  collect(options?: { timeoutMillis?: number }): Promise<MetricCollection>;
}
