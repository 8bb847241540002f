/**
 * The OTLP options of `startTelemetry()`, as types only: the public declarations reach this module
 * and nothing of the SDK's or of the validator's.
 */

/** An OTLP transport `startTelemetry()` can push with: protobuf or JSON over HTTP. */
export type OtlpProtocol = "http/protobuf" | "http/json";

/** What `startTelemetry()` pushes over OTLP, and where. */
export interface OtlpOptions {
  /**
   * Base URL of the OTLP/HTTP receiver; `/v1/metrics` and `/v1/traces` are appended, as for
   * `OTEL_EXPORTER_OTLP_ENDPOINT`. For a Collector, `http://collector:4318`; for Prometheus's OTLP
   * receiver, `http://prometheus:9090/api/v1/otlp`.
   * @default the exporters' reading of `OTEL_EXPORTER_OTLP_METRICS_ENDPOINT`,
   *   `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` and `OTEL_EXPORTER_OTLP_ENDPOINT`, else
   *   `http://localhost:4318`
   */
  endpoint?: string | undefined;
  /**
   * Headers sent with every export, such as an API key; merged over those of
   * `OTEL_EXPORTER_OTLP_HEADERS`. Their values never appear in an error this library throws.
   */
  headers?: Readonly<Record<string, string>> | undefined;
  /**
   * Encoding: `"http/protobuf"` (what Prometheus's OTLP receiver takes) or `"http/json"`.
   * @default `OTEL_EXPORTER_OTLP_METRICS_PROTOCOL` or `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL` (per
   *   signal), else `OTEL_EXPORTER_OTLP_PROTOCOL`, else `"http/protobuf"`
   */
  protocol?: OtlpProtocol | undefined;
  /**
   * Push the metrics.
   * @default true
   */
  metrics?: boolean | undefined;
  /**
   * Push spans too, through a batch span processor.
   * @default false
   */
  traces?: boolean | undefined;
  /**
   * Milliseconds between two metric exports. Each export is cut short after at most this long.
   * @default `OTEL_METRIC_EXPORT_INTERVAL`, else 60000
   */
  exportIntervalMillis?: number | undefined;
}
