/**
 * The OTLP options of `startTelemetry()`, defined once: a zod schema whose fields carry the
 * validation, the TSDoc editors show through {@link OtlpOptions}, and the `describe` text the
 * telemetry reference's OTLP table repeats. It imports nothing but zod, so the options of
 * `startTelemetry()` and the public declarations reach no code of the SDK's or of the exporters'.
 */
import { z } from "zod/v4";
import { notOneOf } from "../core/errors.js";

/** The OTLP transports `startTelemetry()` can push with: protobuf or JSON over HTTP. */
export const OTLP_PROTOCOLS = ["http/protobuf", "http/json"] as const;

/** An OTLP transport `startTelemetry()` can push with: protobuf or JSON over HTTP. */
export type OtlpProtocol = (typeof OTLP_PROTOCOLS)[number];

/** What a protocol other than those gets, from the option or from an `OTEL_*` variable. */
export function protocolError(got: unknown): string {
  return `${notOneOf(OTLP_PROTOCOLS, got)} (startTelemetry pushes OTLP over HTTP)`;
}

/** The longest interval a Node.js timer keeps; a longer one fires at once, every millisecond. */
export const MAX_INTERVAL_MILLIS = 2_147_483_647;

/** What an export interval out of range gets, from the option or from an `OTEL_*` variable. */
export const INTERVAL_ERROR = `expected a whole number of milliseconds, from 1 to ${MAX_INTERVAL_MILLIS}`;

/** The OTLP options, field by field, each documented where it is defined. */
const otlpOptionsShape = {
  /**
   * Base URL of the OTLP/HTTP receiver; `/v1/metrics` and `/v1/traces` are appended, as for
   * `OTEL_EXPORTER_OTLP_ENDPOINT`. For a Collector, `http://collector:4318`; for Prometheus's
   * OTLP receiver, `http://prometheus:9090/api/v1/otlp`.
   * @default the exporters' reading of `OTEL_EXPORTER_OTLP_METRICS_ENDPOINT`,
   *   `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` and `OTEL_EXPORTER_OTLP_ENDPOINT`, else
   *   `http://localhost:4318`
   */
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
    .optional()
    .describe("Base URL of the receiver; `/v1/metrics` and `/v1/traces` are appended."),
  /**
   * Headers sent with every export, such as an API key; merged over those of
   * `OTEL_EXPORTER_OTLP_HEADERS`. Their values never appear in an error this library throws.
   */
  headers: z
    .record(z.string(), z.string({ error: "expected every header value to be a string" }), {
      error: "expected an object of header names and string values",
    })
    .readonly()
    .optional()
    .describe(
      "Headers sent with every export, such as an API key, merged over the variables' headers.",
    ),
  /**
   * Encoding: `"http/protobuf"` (what Prometheus's OTLP receiver takes) or `"http/json"`.
   * @default `OTEL_EXPORTER_OTLP_METRICS_PROTOCOL` or `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL` (per
   *   signal), else `OTEL_EXPORTER_OTLP_PROTOCOL`, else `"http/protobuf"`
   */
  protocol: z
    .enum(OTLP_PROTOCOLS, { error: (issue) => protocolError(issue.input) })
    .optional()
    .describe(
      "The encoding. gRPC is refused: a Collector takes OTLP/HTTP on 4318, Prometheus only OTLP/HTTP.",
    ),
  /**
   * Push the metrics.
   * @default true
   */
  metrics: z
    .boolean({ error: "expected true or false" })
    .default(true)
    .describe("Push the metrics."),
  /**
   * Push spans too, through a batch span processor.
   * @default false
   */
  traces: z
    .boolean({ error: "expected true or false" })
    .default(false)
    .describe("Push the spans too, through a batch span processor."),
  /**
   * Milliseconds between two metric exports. Each export is cut short after at most this long.
   * @default `OTEL_METRIC_EXPORT_INTERVAL`, else 60000
   */
  exportIntervalMillis: z
    .int({ error: INTERVAL_ERROR })
    .min(1, { error: INTERVAL_ERROR })
    .max(MAX_INTERVAL_MILLIS, { error: INTERVAL_ERROR })
    .optional()
    .describe(
      "Milliseconds between two metric pushes; each push gives up after `OTEL_METRIC_EXPORT_TIMEOUT` (30 s), at most this long.",
    ),
};

/** The OTLP options as an object, each field documented where it is defined. */
export const otlpObjectSchema: z.ZodObject<typeof otlpOptionsShape, z.core.$strict> =
  z.strictObject(otlpOptionsShape, { error: "expected true, false or an object of OTLP options" });

/**
 * What `startTelemetry()` pushes over OTLP, and where. The type is what {@link otlpObjectSchema}
 * accepts; each option is documented on its field.
 */
export type OtlpOptions = z.input<typeof otlpObjectSchema>;

/** `OtlpOptions` after validation, when OTLP is asked for. */
export type ParsedOtlpOptions = z.output<typeof otlpObjectSchema>;

/**
 * The `otlp` option of `startTelemetry()`: `true` stands for `{}`, and `false` (like leaving it
 * out) for no OTLP at all. Declared as an optional `ZodType` of what it takes and gives, since
 * the type of a preprocessed schema differs between the zod releases the package admits (in the
 * lowest, it has another name and takes `unknown`); the declared input names {@link OtlpOptions},
 * so that editors lead to the documented fields.
 */
export const otlpOptionsSchema: z.ZodOptional<
  z.ZodType<ParsedOtlpOptions | undefined, boolean | OtlpOptions | undefined>
> = z
  .preprocess(
    (value: boolean | OtlpOptions | undefined) =>
      value === true ? {} : value === false ? undefined : value,
    otlpObjectSchema.optional(),
  )
  .optional();
