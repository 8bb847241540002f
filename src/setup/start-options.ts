/**
 * The options of `startTelemetry()`, defined once: a zod schema whose fields carry the validation,
 * the TSDoc editors show through {@link StartTelemetryOptions}, and the `describe` text the
 * telemetry reference's options table repeats. It takes only types from the SDK, and the OTLP
 * options from `otlp-options.ts` rather than `otlp.ts`, so importing it loads no module of the
 * SDK's or of the exporters'.
 */
import { z } from "zod/v4";
import { otlpOptionsSchema } from "./otlp-options.js";
import type { MetricView, SpanProcessor } from "./sdk-types.js";

/** The options that configure the Prometheus endpoint, refused when it is not served. */
const PROMETHEUS_KEYS = ["host", "port", "endpoint"] as const;

/** The options of `startTelemetry`, field by field, each documented where it is defined. */
const startTelemetryOptionsShape = {
  /**
   * Serve the metrics for Prometheus to scrape, on `host`, `port` and `endpoint`.
   * @default true, unless `otlp` is given
   */
  prometheus: z
    .boolean({ error: "expected true or false" })
    .optional()
    .describe(
      "Serve the metrics for Prometheus to scrape. With `otlp`, set it to serve them beside the push.",
    ),
  /**
   * Interface the Prometheus endpoint listens on. Use `"0.0.0.0"` to be scraped from elsewhere.
   * @default "127.0.0.1"
   */
  host: z
    .string()
    .min(1, { error: "expected a host name or address" })
    .optional()
    .describe(
      'Interface the Prometheus endpoint listens on; `"0.0.0.0"` to be scraped from other hosts.',
    ),
  /**
   * Port of the Prometheus endpoint.
   * @default 9464
   */
  port: z
    .int({ error: "expected a TCP port, a whole number from 1 to 65535" })
    .min(1, { error: "expected a TCP port, a whole number from 1 to 65535" })
    .max(65535, { error: "expected a TCP port, a whole number from 1 to 65535" })
    .optional()
    .describe("Port of the Prometheus endpoint."),
  /**
   * Path of the Prometheus endpoint.
   * @default "/metrics"
   */
  endpoint: z
    .string()
    .startsWith("/", { error: 'expected a path that starts with "/", such as "/metrics"' })
    .optional()
    .describe("Path of the Prometheus endpoint."),
  /**
   * Push the metrics (and, when asked, the spans) over OTLP/HTTP, to a Collector, Prometheus's
   * OTLP receiver or a vendor: `true`, or the `OtlpOptions`. `true` pushes the metrics where
   * the standard `OTEL_EXPORTER_OTLP_*` environment variables say, by default
   * `http://localhost:4318`. Without `prometheus`, nothing is served for scraping.
   * @default false
   */
  otlp: otlpOptionsSchema.describe(
    "Push over OTLP/HTTP, as the OTLP options say. `true` pushes the metrics with every setting from the environment.",
  ),
  /**
   * `service.name` of the resource; also read from `OTEL_SERVICE_NAME`. Over OTLP it becomes
   * Prometheus's `job` label.
   * @default the SDK's default, `unknown_service:node`
   */
  serviceName: z
    .string()
    .min(1, { error: "expected a non-empty service name" })
    .optional()
    .describe("`service.name` of the resource; over OTLP, Prometheus's `job`."),
  /**
   * Metric views. Keep the recommended ones when you add your own.
   * @default recommendedViews()
   */
  views: z
    .array(
      z.custom<MetricView>((value) => typeof value === "object" && value !== null),
      {
        error: "expected an array of view objects, such as recommendedViews()",
      },
    )
    .readonly()
    .optional()
    .describe("Metric views; keep the recommended ones when you add yours."),
  /**
   * Span processors, such as a `BatchSpanProcessor` with an exporter of your own. With none, and
   * no `otlp.traces`, no tracer provider and no context manager are registered, and spans are
   * not recorded.
   * @default []
   */
  spanProcessors: z
    .array(
      z.custom<SpanProcessor>(
        (value) =>
          typeof value === "object" &&
          value !== null &&
          typeof (value as SpanProcessor).onEnd === "function" &&
          typeof (value as SpanProcessor).shutdown === "function",
      ),
      { error: "expected an array of span processors, such as new BatchSpanProcessor(exporter)" },
    )
    .readonly()
    .default([])
    .describe(
      "Span processors of your own. Without any, and without `otlp.traces`, spans are not recorded and no tracer provider or context manager is registered.",
    ),
};

/**
 * The options of `startTelemetry`, checked once when it is called: each field, documented where it
 * is defined, and the combinations that would export nothing or configure an endpoint that is not
 * served.
 */
export const startTelemetryOptionsSchema: z.ZodObject<
  typeof startTelemetryOptionsShape,
  z.core.$strict
> = z.strictObject(startTelemetryOptionsShape).superRefine((options, issues) => {
  const { otlp } = options;
  const prometheus = options.prometheus ?? otlp === undefined;
  if (!prometheus) {
    for (const key of PROMETHEUS_KEYS) {
      if (options[key] === undefined) continue;
      issues.addIssue({
        code: "custom",
        path: [key],
        message: `configures the Prometheus endpoint, which is not served${options.prometheus === false ? " (prometheus: false)" : " when otlp is given"}; set prometheus: true to serve it beside OTLP`,
      });
    }
  }
  if (!prometheus && otlp?.metrics !== true) {
    issues.addIssue({
      code: "custom",
      path: otlp === undefined ? ["prometheus"] : ["otlp", "metrics"],
      message:
        "the metrics would go nowhere: serve them for Prometheus (prometheus: true) or push them over OTLP (otlp: true)",
    });
  }
  if (otlp !== undefined && !otlp.metrics && !otlp.traces) {
    issues.addIssue({
      code: "custom",
      path: ["otlp"],
      message: "pushes nothing: set otlp.metrics or otlp.traces to true, or leave otlp out",
    });
  }
});

/**
 * Options of `startTelemetry`. The type is what {@link startTelemetryOptionsSchema} accepts; each
 * option is documented on its field.
 */
export type StartTelemetryOptions = z.input<typeof startTelemetryOptionsSchema>;

/** Options with which `startTelemetry` serves a Prometheus endpoint. */
export type ServingOptions = StartTelemetryOptions &
  ({ prometheus: true } | { prometheus?: true | undefined; otlp?: false | undefined });
