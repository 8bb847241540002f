/**
 * Starts OpenTelemetry for an application: the Node SDK with the recommended views, a Prometheus
 * endpoint to scrape, an OTLP push, or both, and gives back a handle that stops all of it.
 */
import { randomUUID } from "node:crypto";
import {
  context,
  createContextKey,
  createNoopMeter,
  diag,
  metrics,
  ProxyTracerProvider,
  propagation,
  ROOT_CONTEXT,
  trace,
} from "@opentelemetry/api";
import type { NodeSDK } from "@opentelemetry/sdk-node";
import { z } from "zod/v4";
import { optionsError } from "../core/policy.js";
import { INSTRUMENTATION_SCOPE_NAME } from "../telemetry/semconv.js";
import { PACKAGE_VERSION } from "../version.js";
import { ToolCallResilienceSetupError } from "./errors.js";
import { otlpMetricReader, otlpOptionsSchema, otlpSpanProcessor } from "./otlp.js";
import type { OtlpOptions } from "./otlp-options.js";
import { loadPrometheusExporter, loadResources, loadSdkNode } from "./sdk.js";
import type { MetricReader, MetricView, SpanProcessor } from "./sdk-types.js";
import { threadMetricsProducer } from "./thread-metrics.js";
import { recommendedViews } from "./views.js";

export { ToolCallResilienceSetupError } from "./errors.js";
export type { SpanProcessor } from "./sdk-types.js";

/** Options of {@link startTelemetry}. */
export interface StartTelemetryOptions {
  /**
   * Serve the metrics for Prometheus to scrape, on {@link host}, {@link port} and
   * {@link endpoint}.
   * @default true, unless {@link otlp} is given
   */
  prometheus?: boolean | undefined;
  /**
   * Interface the Prometheus endpoint listens on. Use `"0.0.0.0"` to be scraped from elsewhere.
   * @default "127.0.0.1"
   */
  host?: string | undefined;
  /**
   * Port of the Prometheus endpoint.
   * @default 9464
   */
  port?: number | undefined;
  /**
   * Path of the Prometheus endpoint.
   * @default "/metrics"
   */
  endpoint?: string | undefined;
  /**
   * Push the metrics (and, when asked, the spans) over OTLP/HTTP, to a Collector, Prometheus's
   * OTLP receiver or a vendor. `true` pushes the metrics where the standard
   * `OTEL_EXPORTER_OTLP_*` environment variables say, by default `http://localhost:4318`.
   * Without {@link prometheus}, nothing is served for scraping.
   * @default false
   */
  otlp?: boolean | OtlpOptions | undefined;
  /**
   * `service.name` of the resource; also read from `OTEL_SERVICE_NAME`. Over OTLP it becomes
   * Prometheus's `job` label.
   * @default the SDK's default, `unknown_service:node`
   */
  serviceName?: string | undefined;
  /**
   * Metric views. Keep the recommended ones when you add your own.
   * @default recommendedViews()
   */
  views?: readonly MetricView[] | undefined;
  /**
   * Span processors, such as a `BatchSpanProcessor` with an exporter of your own. With none, and
   * no `otlp.traces`, no tracer provider and no context manager are registered, and spans are not
   * recorded.
   * @default []
   */
  spanProcessors?: readonly SpanProcessor[] | undefined;
}

/** What {@link startTelemetry} returns. */
export interface TelemetryHandle {
  /**
   * Where Prometheus scrapes the metrics, for example `http://127.0.0.1:9464/metrics`;
   * `undefined` when no Prometheus endpoint is served.
   */
  readonly metricsUrl: string | undefined;
  /** `false` when `OTEL_SDK_DISABLED=true`: nothing was started, served or pushed. */
  readonly enabled: boolean;
  /**
   * Pushes what is still to be pushed over OTLP, stops the endpoint and the SDK, and unregisters
   * the global providers it registered, so the process is as it was and `startTelemetry` can be
   * called again. Calling it twice is harmless.
   */
  shutdown(): Promise<void>;
}

/** What {@link startTelemetry} returns when it serves a Prometheus endpoint. */
export interface ServedTelemetryHandle extends TelemetryHandle {
  /** Where Prometheus scrapes the metrics, for example `http://127.0.0.1:9464/metrics`. */
  readonly metricsUrl: string;
}

/** Options with which {@link startTelemetry} serves a Prometheus endpoint. */
export type ServingOptions = StartTelemetryOptions &
  ({ prometheus: true } | { prometheus?: true | undefined; otlp?: false | undefined });

const PROMETHEUS_KEYS = ["host", "port", "endpoint"] as const;

/** `service.instance.id`: the resource attribute that tells the processes of a service apart. */
const ATTR_SERVICE_INSTANCE_ID = "service.instance.id";

const optionsSchema = z
  .strictObject({
    prometheus: z.boolean({ error: "expected true or false" }).optional(),
    host: z.string().min(1, { error: "expected a host name or address" }).optional(),
    port: z
      .int({ error: "expected a TCP port, a whole number from 1 to 65535" })
      .min(1, { error: "expected a TCP port, a whole number from 1 to 65535" })
      .max(65535, { error: "expected a TCP port, a whole number from 1 to 65535" })
      .optional(),
    endpoint: z
      .string()
      .startsWith("/", { error: 'expected a path that starts with "/", such as "/metrics"' })
      .optional(),
    otlp: otlpOptionsSchema,
    serviceName: z.string().min(1, { error: "expected a non-empty service name" }).optional(),
    views: z
      .array(
        z.custom<MetricView>((value) => typeof value === "object" && value !== null),
        {
          error: "expected an array of view objects, such as recommendedViews()",
        },
      )
      .optional(),
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
      .default([]),
  })
  .superRefine((options, issues) => {
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

/** The option names, for checks that the docs list every one; not part of the public surface. */
export const startTelemetryOptionNames: readonly string[] = Object.keys(optionsSchema.shape);

/**
 * Starts the OpenTelemetry Node SDK with {@link recommendedViews}, and the per-thread metric's
 * producer ({@link threadMetricsProducer}) on every metric reader, for an application that has no
 * OpenTelemetry set up yet: it serves the metrics for Prometheus to scrape (the default), pushes
 * them over OTLP/HTTP (`otlp`), or both. It resolves once the endpoint listens. Only metrics are
 * exported unless span processors or `otlp.traces` are given; no propagator, no instrumentation
 * and no log exporter are set up.
 *
 * Every process gets a random `service.instance.id` (unless `OTEL_RESOURCE_ATTRIBUTES` sets one),
 * so that, over OTLP, the processes of one service stay apart as Prometheus `instance`s.
 *
 * Needs the optional peer dependency `@opentelemetry/sdk-node` (0.204 or later), whose own
 * Prometheus and OTLP exporters it uses. Honors `OTEL_SDK_DISABLED`, `OTEL_SERVICE_NAME`,
 * `OTEL_RESOURCE_ATTRIBUTES`, and for OTLP the standard `OTEL_EXPORTER_OTLP_*`,
 * `OTEL_METRIC_EXPORT_INTERVAL` and `OTEL_METRIC_EXPORT_TIMEOUT` variables.
 *
 * @param options.prometheus - serve the metrics for scraping (default: unless `otlp` is given)
 * @param options.host - interface to listen on (default `"127.0.0.1"`)
 * @param options.port - port to listen on (default `9464`)
 * @param options.endpoint - path to serve (default `"/metrics"`)
 * @param options.otlp - push over OTLP/HTTP: `true`, or {@link OtlpOptions}
 * @param options.serviceName - `service.name` of the resource
 * @param options.views - metric views (default {@link recommendedViews})
 * @param options.spanProcessors - span processors (default none)
 * @throws {ToolCallResilienceOptionsError} when an option is invalid.
 * @throws {ToolCallResilienceSetupError} when `@opentelemetry/sdk-node` (or an exporter it should
 *   bring) is missing, an `OTEL_*` variable it reads is invalid, a global meter provider, tracer
 *   provider or context manager is already registered, or the endpoint cannot listen (the port is
 *   taken, say).
 *
 * @example Metrics for Prometheus on 127.0.0.1:9464/metrics
 * ```ts
 * import { startTelemetry } from "tool-call-resilience/setup";
 *
 * const telemetry = await startTelemetry({ serviceName: "support-agent" });
 * process.on("SIGTERM", () => void telemetry.shutdown());
 * ```
 *
 * @example Metrics and spans pushed to an OpenTelemetry Collector
 * ```ts
 * // OTEL_EXPORTER_OTLP_ENDPOINT=http://otel-collector:4318
 * const telemetry = await startTelemetry({
 *   serviceName: "support-agent",
 *   otlp: { traces: true },
 * });
 * ```
 */
export async function startTelemetry(options?: ServingOptions): Promise<ServedTelemetryHandle>;
export async function startTelemetry(options: StartTelemetryOptions): Promise<TelemetryHandle>;
export async function startTelemetry(
  options: StartTelemetryOptions = {},
): Promise<TelemetryHandle> {
  const parsed = optionsSchema.safeParse(options);
  if (!parsed.success) throw optionsError(parsed.error, "startTelemetry");
  const { serviceName, views, spanProcessors: givenProcessors } = parsed.data;
  const { otlp } = parsed.data;
  const prometheus = parsed.data.prometheus ?? otlp === undefined;
  const host = parsed.data.host ?? "127.0.0.1";
  const port = parsed.data.port ?? 9464;
  const endpoint = parsed.data.endpoint ?? "/metrics";
  const metricsUrl = prometheus
    ? `http://${host.includes(":") ? `[${host}]` : host}:${port}${endpoint}`
    : undefined;
  if (process.env.OTEL_SDK_DISABLED?.trim().toLowerCase() === "true") {
    return { metricsUrl, enabled: false, shutdown: async () => {} };
  }
  const tracing = givenProcessors.length > 0 || otlp?.traces === true;
  const taken = registeredGlobals(tracing);
  if (taken.length > 0) throw alreadyRegistered(taken);

  // Everything that can fail for a missing package or a bad variable, before anything runs.
  const purpose = "startTelemetry()";
  const { NodeSDK } = loadSdkNode(purpose);
  const resources = loadResources(purpose);
  const recommended = views === undefined ? recommendedViews() : undefined;
  // The per-thread metric, on every reader: the global meter provider's, which is the SDK's.
  const metricProducers = [threadMetricsProducer()];
  const readers: MetricReader[] = [];
  const spanProcessors = [...givenProcessors];
  if (otlp?.metrics) readers.push(otlpMetricReader(otlp, metricProducers));
  if (otlp?.traces) spanProcessors.push(otlpSpanProcessor(otlp));

  let prometheusExporter:
    | InstanceType<ReturnType<typeof loadPrometheusExporter>["PrometheusExporter"]>
    | undefined;
  if (prometheus) {
    const { PrometheusExporter } = loadPrometheusExporter(purpose);
    const exporter = new PrometheusExporter({
      host,
      port,
      endpoint,
      preventServerStart: true,
      metricProducers,
    });
    try {
      await exporter.startServer();
    } catch (error) {
      await exporter.stopServer();
      throw new ToolCallResilienceSetupError(
        `The Prometheus endpoint could not listen on ${host}:${port}: ${(error as Error).message}`,
        { cause: error },
      );
    }
    prometheusExporter = exporter;
    readers.push(exporter as MetricReader);
  }

  // Checked again with no await before the registration: a concurrent call may have registered
  // while this one's endpoint was starting.
  const takenMeanwhile = registeredGlobals(tracing);
  if (takenMeanwhile.length > 0) {
    await prometheusExporter?.stopServer();
    throw alreadyRegistered(takenMeanwhile);
  }
  let sdk: NodeSDK | undefined;
  let started = false;
  const stop = async () => {
    try {
      // With spans, the SDK's shutdown() stops waiting for the metrics' last push as soon as a
      // span export fails (Prometheus's OTLP receiver refuses spans): each reader and span
      // processor pushes what is left on its own first, at the cost of one more metrics push.
      if (started && spanProcessors.length > 0) {
        await settle(
          "push what was left",
          [...readers, ...spanProcessors].map((flushable) => flushable.forceFlush()),
        );
      }
      await settle("stop the SDK", [sdk?.shutdown()]);
    } finally {
      await settle("stop the Prometheus endpoint", [prometheusExporter?.stopServer()]);
      metrics.disable();
      if (tracing) {
        trace.disable();
        context.disable();
      }
    }
  };
  try {
    startWithoutExtras(() => {
      sdk = new NodeSDK({
        serviceName,
        // Detected attributes (OTEL_RESOURCE_ATTRIBUTES among them) are merged over this one.
        resource: resources
          .defaultResource()
          .merge(resources.resourceFromAttributes({ [ATTR_SERVICE_INSTANCE_ID]: randomUUID() })),
        metricReaders: readers,
        views: [...(views ?? recommended ?? [])],
        spanProcessors,
        // null: register no context manager and no propagator that this handle would then own.
        contextManager: tracing ? undefined : null,
        textMapPropagator: null,
      } as ConstructorParameters<typeof NodeSDK>[0]);
      sdk.start();
      started = true;
    });
  } catch (error) {
    // A view or span processor the SDK refuses: leave nothing running or registered.
    await stop().catch(() => {});
    throw new ToolCallResilienceSetupError(
      `The OpenTelemetry SDK could not start: ${(error as Error).message}`,
      { cause: error },
    );
  }

  let stopped: Promise<void> | undefined;
  return {
    metricsUrl,
    enabled: true,
    shutdown() {
      stopped ??= stop();
      return stopped;
    },
  };
}

function alreadyRegistered(taken: readonly string[]): ToolCallResilienceSetupError {
  return new ToolCallResilienceSetupError(
    `startTelemetry() sets up OpenTelemetry for an application that has none, but this process already registered a global ${taken.join(", ")}. Shut that SDK down first, or add recommendedViews() and a PrometheusExporter to it instead.`,
  );
}

/**
 * The variables from which NodeSDK sets up exporters of its own where it is given none: a logger
 * provider always (an OTLP log exporter by default), and on 0.2xx metric readers beside the ones
 * it is given (a Prometheus exporter that listens at once, for `prometheus`). `none` is their
 * documented way to set up nothing. Some releases read them when NodeSDK is constructed, others
 * when it starts.
 */
const SDK_EXPORTER_VARIABLES = [
  "OTEL_LOGS_EXPORTER",
  "OTEL_METRICS_EXPORTER",
  "OTEL_TRACES_EXPORTER",
];

/**
 * Runs `setUp` (the SDK's construction and start) so that it sets up nothing but what it is
 * given: {@link SDK_EXPORTER_VARIABLES} read `none` while it runs, synchronously, and are restored
 * at once, so the application's own providers, registered before or after, are never shadowed or
 * removed; and a propagator the SDK registers despite `textMapPropagator: null` (0.2xx does with
 * spans) is unregistered, unless the application had one already.
 */
function startWithoutExtras(setUp: () => void): void {
  const before = SDK_EXPORTER_VARIABLES.map((name) => [name, process.env[name]] as const);
  const hadPropagator = propagation.fields().length > 0;
  for (const name of SDK_EXPORTER_VARIABLES) process.env[name] = "none";
  try {
    setUp();
  } finally {
    for (const [name, value] of before) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
    if (!hadPropagator && propagation.fields().length > 0) propagation.disable();
  }
}

/**
 * Waits for every one of `steps` to settle and reports those that failed through OpenTelemetry's
 * diagnostic logger, so that shutting down never rejects: an export that fails (a receiver down or
 * refusing) is the SDK's to report, not the application's to handle.
 */
async function settle(what: string, steps: readonly (Promise<unknown> | undefined)[]) {
  for (const result of await Promise.allSettled(steps)) {
    if (result.status === "fulfilled") continue;
    try {
      diag.warn(
        `tool-call-resilience: shutdown() could not ${what}: ${(result.reason as Error)?.message ?? String(result.reason)}`,
      );
    } catch {
      // A diagnostic logger that throws changes nothing here.
    }
  }
}

const PROBE = createContextKey("tool-call-resilience.setup.probe");

/** The global providers already registered that {@link startTelemetry} would have to register. */
function registeredGlobals(tracing: boolean): string[] {
  const taken: string[] = [];
  if (metrics.getMeter(INSTRUMENTATION_SCOPE_NAME, PACKAGE_VERSION) !== createNoopMeter()) {
    taken.push("MeterProvider");
  }
  if (tracing) {
    const provider = trace.getTracerProvider();
    if (
      !(provider instanceof ProxyTracerProvider) ||
      provider.getDelegateTracer(INSTRUMENTATION_SCOPE_NAME) !== undefined
    ) {
      taken.push("TracerProvider");
    }
    const probe = ROOT_CONTEXT.setValue(PROBE, true);
    if (context.with(probe, () => context.active() === probe)) taken.push("ContextManager");
  }
  return taken;
}
