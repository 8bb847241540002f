/**
 * Starts OpenTelemetry for an application: the Node SDK with the recommended views, a Prometheus
 * endpoint to scrape, an OTLP push, or both, and gives back a handle that stops all of it. The
 * options live in `start-options.ts`, the endpoint in `prometheus-endpoint.ts`, the guard on
 * global providers in `global-registration.ts`, and the way back in `shutdown.ts`.
 */
import { randomUUID } from "node:crypto";
import { optionsError } from "../core/errors.js";
import { ToolCallResilienceSetupError } from "./errors.js";
import { alreadyRegistered, registeredGlobals, startWithoutExtras } from "./global-registration.js";
import { otlpMetricReader, otlpSpanProcessor } from "./otlp.js";
import type { OtlpOptions } from "./otlp-options.js";
import { type PrometheusEndpoint, startPrometheusEndpoint } from "./prometheus-endpoint.js";
import { loadResources, loadSdkNode } from "./sdk.js";
import type { MetricReader } from "./sdk-types.js";
import { type LastPushBound, type RunningTelemetry, stopTelemetry } from "./shutdown.js";
import {
  type ServingOptions,
  type StartTelemetryOptions,
  startTelemetryOptionsSchema,
} from "./start-options.js";
import { threadMetricsProducer } from "./thread-metrics.js";
import { recommendedViews } from "./views.js";

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
   * Pushes what is still to be pushed over OTLP (giving those pushes 2 s in all, so that it ends
   * within about 2 s even where nothing listens), stops the endpoint and the SDK, and unregisters
   * the global providers it registered, so the process is as it was and `startTelemetry` can be
   * called again. Calling it twice is harmless; it never rejects.
   */
  shutdown(): Promise<void>;
}

/** What {@link startTelemetry} returns when it serves a Prometheus endpoint. */
export interface ServedTelemetryHandle extends TelemetryHandle {
  /** Where Prometheus scrapes the metrics, for example `http://127.0.0.1:9464/metrics`. */
  readonly metricsUrl: string;
}

/** `service.instance.id`: the resource attribute that tells the processes of a service apart. */
const ATTR_SERVICE_INSTANCE_ID = "service.instance.id";

/**
 * Starts the OpenTelemetry Node SDK with {@link recommendedViews}, and the per-thread metric's
 * producer ({@link threadMetricsProducer}) on every metric reader, for an application that has no
 * OpenTelemetry set up yet: it serves the metrics for Prometheus to scrape (the default), pushes
 * them over OTLP/HTTP (`otlp`), or both. It resolves once the endpoint listens. Only metrics are
 * exported unless span processors or `otlp.traces` are given; no propagator, no instrumentation
 * and no log exporter are set up.
 *
 * A push that fails never reaches the model calls. Where nothing answers at an OTLP endpoint, the
 * first push that finds it so warns once on the console (`console.warn`), naming the
 * endpoint (without credentials); later pushes keep trying.
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
  const parsed = startTelemetryOptionsSchema.safeParse(options);
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
  const otlpExporters: LastPushBound[] = [];
  if (otlp?.metrics) {
    const { pusher, exporter } = otlpMetricReader(otlp, metricProducers);
    readers.push(pusher);
    otlpExporters.push(exporter);
  }
  if (otlp?.traces) {
    const { pusher, exporter } = otlpSpanProcessor(otlp);
    spanProcessors.push(pusher);
    otlpExporters.push(exporter);
  }

  let prometheusEndpoint: PrometheusEndpoint | undefined;
  if (prometheus) {
    prometheusEndpoint = await startPrometheusEndpoint(purpose, {
      host,
      port,
      endpoint,
      metricProducers,
    });
    readers.push(prometheusEndpoint as MetricReader);
  }

  // Checked again with no await before the registration: a concurrent call may have registered
  // while this one's endpoint was starting.
  const takenMeanwhile = registeredGlobals(tracing);
  if (takenMeanwhile.length > 0) {
    await prometheusEndpoint?.stopServer();
    throw alreadyRegistered(takenMeanwhile);
  }
  const running: RunningTelemetry = {
    sdk: undefined,
    started: false,
    readers,
    spanProcessors,
    otlpExporters,
    prometheusEndpoint,
    tracing,
  };
  try {
    startWithoutExtras(() => {
      const sdk = new NodeSDK({
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
      running.sdk = sdk;
      sdk.start();
      running.started = true;
    });
  } catch (error) {
    // A view or span processor the SDK refuses: leave nothing running or registered.
    await stopTelemetry(running).catch(() => {});
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
      stopped ??= stopTelemetry(running);
      return stopped;
    },
  };
}
