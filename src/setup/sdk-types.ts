/**
 * The SDK's types the setup entry point exposes, taken from `@opentelemetry/sdk-node`'s own
 * configuration type, so they are those of whichever release of the SDK the application installed.
 */
import type { NodeSDKConfiguration } from "@opentelemetry/sdk-node";

/** A metric view, as `NodeSDK` and the `MeterProvider` of `@opentelemetry/sdk-metrics` take it. */
export type MetricView = NodeSDKConfiguration["views"][number];

/** A metric reader, such as a `PeriodicExportingMetricReader` or a `PrometheusExporter`. */
export type MetricReader = NonNullable<NodeSDKConfiguration["metricReaders"]>[number];

/** A span processor, such as a `BatchSpanProcessor` with an OTLP exporter. */
export type SpanProcessor = NonNullable<NodeSDKConfiguration["spanProcessors"]>[number];
