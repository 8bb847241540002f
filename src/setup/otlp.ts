/**
 * The OTLP side of `startTelemetry()`: the schema of its options, what it reads from the standard
 * `OTEL_EXPORTER_OTLP_*` and `OTEL_METRIC_EXPORT_*` environment variables, and the metric reader
 * and span processor that push over OTLP/HTTP with the exporters `@opentelemetry/sdk-node` brings.
 */
import { z } from "zod/v4";
import { ToolCallResilienceSetupError } from "./errors.js";
import type { OtlpProtocol } from "./otlp-options.js";
import {
  batchSpanProcessor,
  loadSdkMetrics,
  loadSdkPackage,
  type OtlpHttpExporterConfig,
  type OtlpMetricExporterPackage,
  type OtlpTraceExporterPackage,
} from "./sdk.js";
import type { MetricProducer, MetricReader, SpanProcessor } from "./sdk-types.js";

const PROTOCOLS = ["http/protobuf", "http/json"] as const satisfies readonly OtlpProtocol[];

const protocolError = `expected "http/protobuf" or "http/json" (startTelemetry pushes OTLP over HTTP)`;

/** The longest interval a Node.js timer keeps; a longer one fires at once, every millisecond. */
const MAX_INTERVAL_MILLIS = 2_147_483_647;

const intervalError = `expected a whole number of milliseconds, from 1 to ${MAX_INTERVAL_MILLIS}`;

const otlpObjectSchema = z.strictObject(
  {
    endpoint: z
      .url({
        protocol: /^https?$/,
        error: 'expected an http:// or https:// URL, such as "http://localhost:4318"',
      })
      .refine((url) => !/[?#]/.test(url), {
        error: "expected a base URL without a query or a fragment",
      })
      .refine((url) => !/\/v1\/(metrics|traces)\/*$/.test(url), {
        error:
          'expected the base URL, to which /v1/metrics and /v1/traces are appended, such as "http://localhost:4318"',
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
      .int({ error: intervalError })
      .min(1, { error: intervalError })
      .max(MAX_INTERVAL_MILLIS, { error: intervalError })
      .optional(),
  },
  { error: "expected true, false or an object of OTLP options" },
);

/** The OTLP option names, for checks that the docs list every one; not part of the public surface. */
export const otlpOptionNames: readonly string[] = Object.keys(otlpObjectSchema.shape);

/**
 * The schema of `OtlpOptions`: `true` stands for `{}`, and `false` (like leaving it out) for
 * no OTLP at all.
 */
export const otlpOptionsSchema = z.preprocess(
  (value) => (value === true ? {} : value === false ? undefined : value),
  otlpObjectSchema.optional(),
);

/** `OtlpOptions` after validation, when OTLP is asked for. */
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
  if (!Number.isInteger(milliseconds) || milliseconds < 1 || milliseconds > MAX_INTERVAL_MILLIS) {
    throw new ToolCallResilienceSetupError(`${name} is "${value}": ${intervalError}.`);
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
