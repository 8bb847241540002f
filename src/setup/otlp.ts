/**
 * The OTLP side of `startTelemetry()`: what it reads from the standard `OTEL_EXPORTER_OTLP_*` and
 * `OTEL_METRIC_EXPORT_*` environment variables, and the metric reader and span processor that push
 * over OTLP/HTTP with the exporters `@opentelemetry/sdk-node` brings. Its options are defined in
 * `otlp-options.ts`.
 */
import { ToolCallResilienceSetupError } from "./errors.js";
import {
  INTERVAL_ERROR,
  MAX_INTERVAL_MILLIS,
  OTLP_PROTOCOLS,
  type OtlpProtocol,
  type ParsedOtlpOptions,
  PROTOCOL_ERROR,
} from "./otlp-options.js";
import {
  batchSpanProcessor,
  loadSdkMetrics,
  loadSdkPackage,
  type OtlpHttpExporterConfig,
  type OtlpMetricExporterPackage,
  type OtlpTraceExporterPackage,
} from "./sdk.js";
import type { MetricProducer, MetricReader, SpanProcessor } from "./sdk-types.js";

/** An OTLP signal and the names the specification gives it. */
interface Signal {
  /** The part of its `OTEL_EXPORTER_OTLP_<SIGNAL>_*` variables. */
  readonly variable: "METRICS" | "TRACES";
  /** The path appended to a base endpoint. */
  readonly path: "v1/metrics" | "v1/traces";
  /** Its exporter package per protocol. */
  readonly packages: Readonly<Record<OtlpProtocol, string>>;
}

const METRICS: Signal = {
  variable: "METRICS",
  path: "v1/metrics",
  packages: {
    "http/protobuf": "@opentelemetry/exporter-metrics-otlp-proto",
    "http/json": "@opentelemetry/exporter-metrics-otlp-http",
  },
};

const TRACES: Signal = {
  variable: "TRACES",
  path: "v1/traces",
  packages: {
    "http/protobuf": "@opentelemetry/exporter-trace-otlp-proto",
    "http/json": "@opentelemetry/exporter-trace-otlp-http",
  },
};

const PURPOSE = "startTelemetry({ otlp })";

/** A variable's value, or `undefined` when it is unset or blank, as the SDK reads them. */
function environmentValue(name: string): string | undefined {
  const value = process.env[name]?.trim();
  return value === undefined || value === "" ? undefined : value;
}

/** The protocol of a signal: the option, else the signal's variable, else the general one. */
function protocolOf(signal: Signal, options: ParsedOtlpOptions): OtlpProtocol {
  if (options.protocol !== undefined) return options.protocol;
  for (const name of [
    `OTEL_EXPORTER_OTLP_${signal.variable}_PROTOCOL`,
    "OTEL_EXPORTER_OTLP_PROTOCOL",
  ]) {
    const value = environmentValue(name);
    if (value === undefined) continue;
    if ((OTLP_PROTOCOLS as readonly string[]).includes(value)) return value as OtlpProtocol;
    throw new ToolCallResilienceSetupError(
      `${name} is "${value}": ${PROTOCOL_ERROR}. Set it to one of those, or pass otlp.protocol.`,
    );
  }
  return "http/protobuf";
}

/** The exporter configuration: the options, leaving everything else to the environment. */
function exporterConfig(signal: Signal, options: ParsedOtlpOptions): OtlpHttpExporterConfig {
  const config: OtlpHttpExporterConfig = {};
  if (options.endpoint !== undefined) {
    config.url = `${options.endpoint.replace(/\/+$/, "")}/${signal.path}`;
  }
  if (options.headers !== undefined) config.headers = { ...options.headers };
  return config;
}

/** A positive whole number of milliseconds from a variable, or `undefined` when it is unset. */
function millisecondsFrom(name: string): number | undefined {
  const value = environmentValue(name);
  if (value === undefined) return undefined;
  const milliseconds = Number(value);
  if (!Number.isInteger(milliseconds) || milliseconds < 1 || milliseconds > MAX_INTERVAL_MILLIS) {
    throw new ToolCallResilienceSetupError(`${name} is "${value}": ${INTERVAL_ERROR}.`);
  }
  return milliseconds;
}

/**
 * The reader that pushes metrics over OTLP every export interval, with what `metricProducers`
 * report beside the SDK's instruments.
 */
export function otlpMetricReader(
  options: ParsedOtlpOptions,
  metricProducers: readonly MetricProducer[] = [],
): MetricReader {
  const protocol = protocolOf(METRICS, options);
  const exporters = loadSdkPackage<OtlpMetricExporterPackage>(
    [METRICS.packages[protocol]],
    PURPOSE,
  );
  const { PeriodicExportingMetricReader } = loadSdkMetrics(PURPOSE);
  const exportIntervalMillis =
    options.exportIntervalMillis ?? millisecondsFrom("OTEL_METRIC_EXPORT_INTERVAL") ?? 60_000;
  const exportTimeoutMillis = Math.min(
    millisecondsFrom("OTEL_METRIC_EXPORT_TIMEOUT") ?? 30_000,
    exportIntervalMillis,
  );
  return new PeriodicExportingMetricReader({
    exporter: new exporters.OTLPMetricExporter(exporterConfig(METRICS, options)),
    exportIntervalMillis,
    exportTimeoutMillis,
    metricProducers: [...metricProducers],
  }) as MetricReader;
}

/** The batch span processor that pushes spans over OTLP. */
export function otlpSpanProcessor(options: ParsedOtlpOptions): SpanProcessor {
  const protocol = protocolOf(TRACES, options);
  const exporters = loadSdkPackage<OtlpTraceExporterPackage>([TRACES.packages[protocol]], PURPOSE);
  return batchSpanProcessor(
    new exporters.OTLPTraceExporter(exporterConfig(TRACES, options)),
    PURPOSE,
  ) as SpanProcessor;
}
