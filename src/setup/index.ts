/**
 * tool-call-resilience/setup: the optional entry point that starts OpenTelemetry for an
 * application, with the views we recommend, the producer of the per-thread metric, and a
 * Prometheus endpoint, an OTLP/HTTP push, or both.
 * The middleware itself never needs it; it uses `@opentelemetry/api` only.
 *
 * Needs the optional peer dependency `@opentelemetry/sdk-node` (0.204 or later), whose own
 * exporters it uses.
 *
 * @example
 * ```ts
 * import { startTelemetry } from "tool-call-resilience/setup";
 *
 * const telemetry = await startTelemetry();
 * // ... run agents; Prometheus scrapes telemetry.metricsUrl ...
 * await telemetry.shutdown();
 * ```
 */
export { isSetupError, ToolCallResilienceSetupError } from "./errors.js";
export type { OtlpOptions, OtlpProtocol } from "./otlp-options.js";
export type { SpanProcessor } from "./sdk-types.js";
export type { ServedTelemetryHandle, TelemetryHandle } from "./start.js";
export { startTelemetry } from "./start.js";
export type { ServingOptions, StartTelemetryOptions } from "./start-options.js";
export type { MetricProducer, ThreadMetricsProducerOptions } from "./thread-metrics.js";
export { threadMetricsProducer } from "./thread-metrics.js";
export type { MetricView, RecommendedViewsOptions } from "./views.js";
export { recommendedViews } from "./views.js";
