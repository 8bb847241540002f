/**
 * tool-call-resilience/setup: the optional entry point that starts OpenTelemetry for an
 * application, with a Prometheus endpoint and the views we recommend. The middleware itself never
 * needs it; it uses `@opentelemetry/api` only.
 *
 * Needs the optional peer dependencies `@opentelemetry/sdk-node` and
 * `@opentelemetry/exporter-prometheus`.
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
export type { OtlpOptions, OtlpProtocol } from "./otlp.js";
export type {
  ServedTelemetryHandle,
  ServingOptions,
  SpanProcessor,
  StartTelemetryOptions,
  TelemetryHandle,
} from "./start.js";
export { startTelemetry, ToolCallResilienceSetupError } from "./start.js";
export type { MetricView, RecommendedViewsOptions } from "./views.js";
export { recommendedViews } from "./views.js";
