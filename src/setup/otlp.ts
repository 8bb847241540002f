/**
 * The OTLP side of `startTelemetry()`: what it reads from the standard `OTEL_EXPORTER_OTLP_*` and
 * `OTEL_METRIC_EXPORT_*` environment variables, and the metric reader and span processor that push
 * over OTLP/HTTP with the exporters `@opentelemetry/sdk-node` brings, each exporter wrapped so that
 * it warns once when nothing answers at its endpoint and lets `shutdown()` bound its last pushes.
 * Its options are defined in `otlp-options.ts`.
 */
import { ToolCallResilienceSetupError } from "./errors.js";
import {
  INTERVAL_ERROR,
  MAX_INTERVAL_MILLIS,
  OTLP_PROTOCOLS,
  type OtlpProtocol,
  type ParsedOtlpOptions,
  protocolError,
} from "./otlp-options.js";
import {
  batchSpanProcessor,
  loadCore,
  loadSdkMetrics,
  loadSdkPackage,
  type OtlpHttpExporterConfig,
  type OtlpMetricExporterPackage,
  type OtlpTraceExporterPackage,
} from "./sdk.js";
import type { MetricProducer, MetricReader, SpanProcessor } from "./sdk-types.js";
import type { LastPushBound } from "./shutdown.js";

/** An OTLP signal and the names the specification gives it. */
interface Signal {
  /** The part of its `OTEL_EXPORTER_OTLP_<SIGNAL>_*` variables. */
  readonly variable: "METRICS" | "TRACES";
  /** What a warning calls what it pushes. */
  readonly noun: "metrics" | "spans";
  /** The path appended to a base endpoint. */
  readonly path: "v1/metrics" | "v1/traces";
  /** Its exporter package per protocol. */
  readonly packages: Readonly<Record<OtlpProtocol, string>>;
}

const METRICS: Signal = {
  variable: "METRICS",
  noun: "metrics",
  path: "v1/metrics",
  packages: {
    "http/protobuf": "@opentelemetry/exporter-metrics-otlp-proto",
    "http/json": "@opentelemetry/exporter-metrics-otlp-http",
  },
};

const TRACES: Signal = {
  variable: "TRACES",
  noun: "spans",
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
      `${name}: ${protocolError(value)}. Set it to one of those, or pass otlp.protocol.`,
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

/**
 * Where a signal is pushed, for a warning: the exporters' own reading of the option and the
 * variables, without the credentials, query or fragment a URL could hold.
 */
function endpointOf(signal: Signal, options: ParsedOtlpOptions): string {
  const base = options.endpoint ?? environmentValue("OTEL_EXPORTER_OTLP_ENDPOINT");
  const url =
    exporterConfig(signal, options).url ??
    environmentValue(`OTEL_EXPORTER_OTLP_${signal.variable}_ENDPOINT`) ??
    `${(base ?? "http://localhost:4318").replace(/\/+$/, "")}/${signal.path}`;
  try {
    const { protocol, host, pathname } = new URL(url);
    return `${protocol}//${host}${pathname}`;
  } catch {
    return `the OTLP ${signal.noun} endpoint`;
  }
}

/**
 * The time each export may take that the variables set, as the exporters read them, or
 * `undefined`; a value they would not take is left to them.
 */
function exportTimeoutOf(signal: Signal): number | undefined {
  for (const name of [
    `OTEL_EXPORTER_OTLP_${signal.variable}_TIMEOUT`,
    "OTEL_EXPORTER_OTLP_TIMEOUT",
  ]) {
    const milliseconds = Number(environmentValue(name));
    if (Number.isFinite(milliseconds) && milliseconds > 0) return milliseconds;
  }
  return undefined;
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

/** What an exporter reports of one export: `ExportResult` of `@opentelemetry/core`. */
interface PushResult {
  readonly code: number;
  readonly error?: Error;
}

/** An OTLP exporter of the SDK's, metrics' or spans', as far as {@link OtlpExporter} uses it. */
interface PushExporter<Items> {
  export(items: Items, resultCallback: (result: PushResult) => void): void;
  forceFlush?(): Promise<void>;
  shutdown(): Promise<void>;
}

/** The error codes that say nothing answered: no connection, no HTTP response at all. */
const UNANSWERED_CODES: ReadonlySet<unknown> = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
]);

/** The code of an error that says nothing answered, or `undefined`. */
function unansweredCode(error: unknown): string | undefined {
  // Node.js reports a host with several addresses, all refusing, as one AggregateError.
  const { code, errors } = (error ?? {}) as { code?: unknown; errors?: unknown };
  const codes = [code, ...(Array.isArray(errors) ? errors.map((each) => each?.code) : [])];
  return codes.find((each): each is string => UNANSWERED_CODES.has(each));
}

/** Shuts an exporter down without waiting for it, and whatever it throws. */
function stopQuietly(exporter: PushExporter<unknown>): void {
  Promise.resolve()
    .then(() => exporter.shutdown())
    .catch(() => {});
}

/** How long past the deadline a last push is still waited for, its own timeout having lapsed. */
const LAST_PUSH_GRACE_MILLIS = 250;

/**
 * An OTLP exporter of the SDK's, with two things more: the first push that finds nothing answering
 * at its endpoint (connection refused, the host unknown or unreachable) warns through
 * the console, once, and once `shutdown()` began, each push goes through a
 * new exporter whose timeout (retries included) ends at the deadline, so that no retry outlives it,
 * while a push still under way is no longer waited for and ends within its own timeout.
 */
class OtlpExporter<Items> implements LastPushBound {
  readonly #signal: Signal;
  readonly #endpoint: string;
  readonly #create: (timeoutMillis: number) => PushExporter<Items>;
  readonly #regular: PushExporter<Items>;
  readonly #failed: number;
  readonly #exportTimeout: number | undefined;
  #warned = false;
  #deadline: number | undefined;
  /** Releases the callers of the pushes under way through the regular exporter. */
  readonly #underWay = new Set<() => void>();
  /** The pushes since `shutdown()` began, each settled once it is reported. */
  readonly #lastPushes = new Set<Promise<void>>();

  /**
   * @param regular - the exporter of the pushes before `shutdown()`
   * @param create - a new exporter like it, whose exports take at most `timeoutMillis`
   */
  constructor(
    signal: Signal,
    options: ParsedOtlpOptions,
    regular: PushExporter<Items>,
    create: (timeoutMillis: number) => PushExporter<Items>,
  ) {
    this.#signal = signal;
    this.#endpoint = endpointOf(signal, options);
    this.#regular = regular;
    this.#create = create;
    this.#failed = loadCore(PURPOSE).ExportResultCode.FAILED;
    this.#exportTimeout = exportTimeoutOf(signal);
  }

  export(items: Items, resultCallback: (result: PushResult) => void): void {
    let reported = false;
    const report = (result: PushResult) => {
      if (reported) return;
      reported = true;
      this.#notice(result);
      resultCallback(result);
    };
    const fail = (error: unknown) =>
      report({
        code: this.#failed,
        error: error instanceof Error ? error : new Error(String(error)),
      });
    if (this.#deadline === undefined) {
      const release = () => fail(new Error("shutdown() began: its own push takes over"));
      this.#underWay.add(release);
      try {
        this.#regular.export(items, (result) => {
          this.#underWay.delete(release);
          report(result);
        });
      } catch (error) {
        this.#underWay.delete(release);
        fail(error);
      }
      return;
    }
    const left = this.#deadline - Date.now();
    if (left < 1) {
      fail(new Error(`shutdown() had no time left to push to ${this.#endpoint}`));
      return;
    }
    const pushed = new Promise<void>((settled) => {
      const end = (result: PushResult) => {
        clearTimeout(giveUp);
        report(result);
        settled();
      };
      const giveUp = setTimeout(
        () =>
          end({
            code: this.#failed,
            error: new Error(`shutdown() stopped waiting for ${this.#endpoint}`),
          }),
        left + LAST_PUSH_GRACE_MILLIS,
      );
      giveUp.unref();
      try {
        const exporter = this.#create(Math.min(left, this.#exportTimeout ?? left));
        exporter.export(items, (result) => {
          end(result);
          stopQuietly(exporter);
        });
      } catch (error) {
        end({ code: this.#failed, error: error as Error });
      }
    });
    this.#lastPushes.add(pushed);
    void pushed.then(() => this.#lastPushes.delete(pushed));
  }

  finishBy(deadline: number): void {
    this.#deadline = Math.min(deadline, this.#deadline ?? deadline);
    for (const release of this.#underWay) release();
    this.#underWay.clear();
  }

  async forceFlush(): Promise<void> {
    if (this.#deadline === undefined) await this.#regular.forceFlush?.();
    else await Promise.all(this.#lastPushes);
  }

  async shutdown(): Promise<void> {
    this.finishBy(Date.now());
    await Promise.all(this.#lastPushes);
    // Not waited for: it waits for the pushes it still has under way, which end within their own
    // timeout.
    stopQuietly(this.#regular);
  }

  /** Warns, the first time, that nothing answers at the endpoint. */
  #notice(result: PushResult): void {
    if (this.#warned || result.code !== this.#failed) return;
    const code = unansweredCode(result.error);
    if (code === undefined) return;
    this.#warned = true;
    // The console, not OpenTelemetry's diagnostic logger, which prints nothing unless set up:
    // the application asked for these pushes and would otherwise never learn they go nowhere.
    try {
      console.warn(
        `tool-call-resilience: nothing answers at ${this.#endpoint} (${code}): the ${this.#signal.noun} startTelemetry({ otlp }) pushes there are not delivered; every later push tries again.`,
      );
    } catch {
      // A console that throws changes nothing here.
    }
  }
}

/** A metric reader or span processor that pushes over OTLP, and its exporter. */
export interface OtlpPush<Pusher> {
  readonly pusher: Pusher;
  /** Its exporter, whose last pushes `shutdown()` bounds. */
  readonly exporter: LastPushBound;
}

/**
 * The reader that pushes metrics over OTLP every export interval, with what `metricProducers`
 * report beside the SDK's instruments.
 */
export function otlpMetricReader(
  options: ParsedOtlpOptions,
  metricProducers: readonly MetricProducer[] = [],
): OtlpPush<MetricReader> {
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
  const config = exporterConfig(METRICS, options);
  const regular = new exporters.OTLPMetricExporter(config);
  const exporter = new OtlpExporter(
    METRICS,
    options,
    regular,
    (timeoutMillis) => new exporters.OTLPMetricExporter({ ...config, timeoutMillis }),
  );
  const reader = new PeriodicExportingMetricReader({
    exporter: Object.assign(exporter, {
      // Read once, by the reader's constructor: the temporality and aggregation the exporter asks.
      selectAggregationTemporality: regular.selectAggregationTemporality?.bind(regular),
      selectAggregation: regular.selectAggregation?.bind(regular),
    }),
    exportIntervalMillis,
    exportTimeoutMillis,
    metricProducers: [...metricProducers],
  }) as MetricReader;
  return { pusher: reader, exporter };
}

/** The batch span processor that pushes spans over OTLP. */
export function otlpSpanProcessor(options: ParsedOtlpOptions): OtlpPush<SpanProcessor> {
  const protocol = protocolOf(TRACES, options);
  const exporters = loadSdkPackage<OtlpTraceExporterPackage>([TRACES.packages[protocol]], PURPOSE);
  const config = exporterConfig(TRACES, options);
  const exporter = new OtlpExporter(
    TRACES,
    options,
    new exporters.OTLPTraceExporter(config),
    (timeoutMillis) => new exporters.OTLPTraceExporter({ ...config, timeoutMillis }),
  );
  const processor = batchSpanProcessor(exporter, PURPOSE);
  return { pusher: processor as SpanProcessor, exporter };
}
