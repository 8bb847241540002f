/**
 * The OTLP side of `startTelemetry()`: its options, what it reads from the standard
 * `OTEL_EXPORTER_OTLP_*` and `OTEL_METRIC_EXPORT_*` environment variables, and the metric reader
 * and span processor that push over OTLP/HTTP with the exporters `@opentelemetry/sdk-node` brings.
 */
import { z } from "zod/v4";
import { ToolCallResilienceSetupError } from "./errors.js";
import {
  batchSpanProcessor,
  loadSdkMetrics,
  loadSdkPackage,
  type OtlpHttpExporterConfig,
  type OtlpMetricExporterPackage,
  type OtlpTraceExporterPackage,
} from "./sdk.js";
import type { MetricReader, SpanProcessor } from "./sdk-types.js";

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
  endpoint?: string;
  /**
   * Headers sent with every export, such as an API key; merged over those of
   * `OTEL_EXPORTER_OTLP_HEADERS`. Their values never appear in an error this library throws.
   */
  headers?: Readonly<Record<string, string>>;
  /**
   * Encoding: `"http/protobuf"` (what Prometheus's OTLP receiver takes) or `"http/json"`.
   * @default `OTEL_EXPORTER_OTLP_METRICS_PROTOCOL` or `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL` (per
   *   signal), else `OTEL_EXPORTER_OTLP_PROTOCOL`, else `"http/protobuf"`
   */
  protocol?: OtlpProtocol;
  /**
   * Push the metrics.
   * @default true
   */
  metrics?: boolean;
  /**
   * Push spans too, through a batch span processor.
   * @default false
   */
  traces?: boolean;
  /**
   * Milliseconds between two metric exports. Each export is cut short after at most this long.
   * @default `OTEL_METRIC_EXPORT_INTERVAL`, else 60000
   */
  exportIntervalMillis?: number;
}

const PROTOCOLS = ["http/protobuf", "http/json"] as const satisfies readonly OtlpProtocol[];

const protocolError = `expected "http/protobuf" or "http/json" (startTelemetry pushes OTLP over HTTP)`;

const otlpObjectSchema = z.strictObject(
  {
    endpoint: z
      .url({
        protocol: /^https?$/,
        error: 'expected an http:// or https:// URL, such as "http://localhost:4318"',
      })
      .optional(),
    headers: z
      .record(z.string(), z.string({ error: "expected every header value to be a string" }), {
        error: "expected an object of header names and string values",
      })
      .optional(),
    protocol: z.enum(PROTOCOLS, { error: protocolError }).optional(),
    metrics: z.boolean({ error: "expected true or false" }).default(true),
    traces: z.boolean({ error: "expected true or false" }).default(false),
    exportIntervalMillis: z
      .int({ error: "expected a whole number of milliseconds, 1 or more" })
      .min(1, { error: "expected a whole number of milliseconds, 1 or more" })
      .optional(),
  },
  { error: "expected true, false or an object of OTLP options" },
);

/** The OTLP option names, for checks that the docs list every one; not part of the public surface. */
export const otlpOptionNames: readonly string[] = Object.keys(otlpObjectSchema.shape);

/**
 * The schema of {@link OtlpOptions}: `true` stands for `{}`, and `false` (like leaving it out) for
 * no OTLP at all.
 */
export const otlpOptionsSchema = z.preprocess(
  (value) => (value === true ? {} : value === false ? undefined : value),
  otlpObjectSchema.optional(),
);

/** {@link OtlpOptions} after validation, when OTLP is asked for. */
export type ParsedOtlpOptions = z.output<typeof otlpObjectSchema>;

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
    if ((PROTOCOLS as readonly string[]).includes(value)) return value as OtlpProtocol;
    throw new ToolCallResilienceSetupError(
      `${name} is "${value}": ${protocolError}. Set it to one of those, or pass otlp.protocol.`,
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
  if (!Number.isInteger(milliseconds) || milliseconds < 1) {
    throw new ToolCallResilienceSetupError(
      `${name} is "${value}": expected a whole number of milliseconds, 1 or more.`,
    );
  }
  return milliseconds;
}

/** The reader that pushes metrics over OTLP every export interval. */
export function otlpMetricReader(options: ParsedOtlpOptions): MetricReader {
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
