/**
 * Starts OpenTelemetry for an application: the Node SDK, a Prometheus endpoint and the recommended
 * views, and gives back a handle that stops all of it.
 */
import {
  context,
  createContextKey,
  createNoopMeter,
  metrics,
  ProxyTracerProvider,
  ROOT_CONTEXT,
  trace,
} from "@opentelemetry/api";
import { PrometheusExporter } from "@opentelemetry/exporter-prometheus";
import { NodeSDK, type tracing } from "@opentelemetry/sdk-node";
import { z } from "zod/v4";
import { ToolCallResilienceError } from "../core/errors.js";
import { optionsError } from "../core/policy.js";
import { INSTRUMENTATION_SCOPE_NAME } from "../telemetry/semconv.js";
import { PACKAGE_VERSION } from "../version.js";
import { type MetricView, recommendedViews } from "./views.js";

/** A span processor of `@opentelemetry/sdk-trace-base`, such as a `BatchSpanProcessor`. */
export type SpanProcessor = tracing.SpanProcessor;

/** Options of {@link startTelemetry}. */
export interface StartTelemetryOptions {
  /**
   * Interface the Prometheus endpoint listens on. Use `"0.0.0.0"` to be scraped from elsewhere.
   * @default "127.0.0.1"
   */
  host?: string;
  /**
   * Port of the Prometheus endpoint.
   * @default 9464
   */
  port?: number;
  /**
   * Path of the Prometheus endpoint.
   * @default "/metrics"
   */
  endpoint?: string;
  /**
   * `service.name` of the resource; also read from `OTEL_SERVICE_NAME`.
   * @default the SDK's default, `unknown_service:node`
   */
  serviceName?: string;
  /**
   * Metric views. Keep the recommended ones when you add your own.
   * @default recommendedViews()
   */
  views?: readonly MetricView[];
  /**
   * Span processors, such as a `BatchSpanProcessor` with an OTLP exporter. With none, no tracer
   * provider and no context manager are registered, and spans are not recorded.
   * @default []
   */
  spanProcessors?: readonly SpanProcessor[];
}

/** What {@link startTelemetry} returns. */
export interface TelemetryHandle {
  /** Where Prometheus scrapes the metrics, for example `http://127.0.0.1:9464/metrics`. */
  readonly metricsUrl: string;
  /** `false` when `OTEL_SDK_DISABLED=true`: nothing was started and nothing is served. */
  readonly enabled: boolean;
  /**
   * Stops the endpoint and the SDK, and unregisters the global providers it registered, so the
   * process is as it was and `startTelemetry` can be called again. Calling it twice is harmless.
   */
  shutdown(): Promise<void>;
}

/** Thrown by {@link startTelemetry} when it cannot start; nothing is left running. */
export class ToolCallResilienceSetupError extends ToolCallResilienceError {
  override name = "ToolCallResilienceSetupError";
}

const optionsSchema = z.strictObject({
  host: z.string().min(1, { error: "expected a host name or address" }).default("127.0.0.1"),
  port: z
    .int({ error: "expected a TCP port, a whole number from 1 to 65535" })
    .min(1, { error: "expected a TCP port, a whole number from 1 to 65535" })
    .max(65535, { error: "expected a TCP port, a whole number from 1 to 65535" })
    .default(9464),
  endpoint: z
    .string()
    .startsWith("/", { error: 'expected a path that starts with "/", such as "/metrics"' })
    .default("/metrics"),
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
});

/** The option names, for checks that the docs list every one; not part of the public surface. */
export const startTelemetryOptionNames: readonly string[] = Object.keys(optionsSchema.shape);

/**
 * Starts the OpenTelemetry Node SDK with a Prometheus endpoint and {@link recommendedViews}, for
 * an application that has no OpenTelemetry set up yet. It resolves once the endpoint listens.
 * Only metrics are exported unless span processors are given; no propagator, no instrumentation
 * and no log exporter are set up.
 *
 * Needs the optional peer dependencies `@opentelemetry/sdk-node` and
 * `@opentelemetry/exporter-prometheus`. Honors `OTEL_SDK_DISABLED`.
 *
 * @param options.host - interface to listen on (default `"127.0.0.1"`)
 * @param options.port - port to listen on (default `9464`)
 * @param options.endpoint - path to serve (default `"/metrics"`)
 * @param options.serviceName - `service.name` of the resource
 * @param options.views - metric views (default {@link recommendedViews})
 * @param options.spanProcessors - span processors (default none)
 * @throws {ToolCallResilienceOptionsError} when an option is invalid.
 * @throws {ToolCallResilienceSetupError} when a global meter provider, tracer provider or context
 *   manager is already registered, or the endpoint cannot listen (the port is taken, say).
 *
 * @example Metrics for Prometheus on 127.0.0.1:9464/metrics
 * ```ts
 * import { startTelemetry } from "tool-call-resilience/setup";
 *
 * const telemetry = await startTelemetry({ serviceName: "support-agent" });
 * process.on("SIGTERM", () => void telemetry.shutdown());
 * ```
 *
 * @example Spans too, to an OTLP collector
 * ```ts
 * import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
 * import { BatchSpanProcessor } from "@opentelemetry/sdk-trace-base";
 *
 * const telemetry = await startTelemetry({
 *   port: 9464,
 *   spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())],
 * });
 * ```
 */
export async function startTelemetry(
  options: StartTelemetryOptions = {},
): Promise<TelemetryHandle> {
  const parsed = optionsSchema.safeParse(options);
  if (!parsed.success) throw optionsError(parsed.error, "startTelemetry");
  const { host, port, endpoint, serviceName, views, spanProcessors } = parsed.data;
  const metricsUrl = `http://${host.includes(":") ? `[${host}]` : host}:${port}${endpoint}`;
  if (process.env.OTEL_SDK_DISABLED?.trim().toLowerCase() === "true") {
    return { metricsUrl, enabled: false, shutdown: async () => {} };
  }
  const tracing = spanProcessors.length > 0;
  const taken = registeredGlobals(tracing);
  if (taken.length > 0) throw alreadyRegistered(taken);

  const exporter = new PrometheusExporter({ host, port, endpoint, preventServerStart: true });
  try {
    await exporter.startServer();
  } catch (error) {
    await exporter.stopServer();
    throw new ToolCallResilienceSetupError(
      `The Prometheus endpoint could not listen on ${host}:${port}: ${(error as Error).message}`,
      { cause: error },
    );
  }

  // Checked again with no await before the registration: a concurrent call may have registered
  // while this one's endpoint was starting.
  const takenMeanwhile = registeredGlobals(tracing);
  if (takenMeanwhile.length > 0) {
    await exporter.stopServer();
    throw alreadyRegistered(takenMeanwhile);
  }
  let sdk: NodeSDK | undefined;
  const stop = async () => {
    try {
      await sdk?.shutdown();
      await exporter.stopServer();
    } finally {
      metrics.disable();
      if (tracing) {
        trace.disable();
        context.disable();
      }
    }
  };
  try {
    sdk = new NodeSDK({
      serviceName,
      metricReaders: [exporter],
      views: [...(views ?? recommendedViews())],
      spanProcessors: [...spanProcessors],
      // null: register no context manager and no propagator that this handle would then own.
      contextManager: tracing ? undefined : null,
      textMapPropagator: null,
    } as ConstructorParameters<typeof NodeSDK>[0]);
    startWithoutLogs(sdk);
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
 * Starts the SDK without a logger provider. NodeSDK always sets one up, from `OTEL_LOGS_EXPORTER`
 * when no log processors are given; `none` is its documented way to set up none. The variable is
 * set only for the synchronous `start()` and restored at once, so the application's logger
 * provider, registered before or after, is never shadowed or removed.
 */
function startWithoutLogs(sdk: NodeSDK): void {
  const key = "OTEL_LOGS_EXPORTER";
  const before = process.env[key];
  process.env[key] = "none";
  try {
    sdk.start();
  } finally {
    if (before === undefined) delete process.env[key];
    else process.env[key] = before;
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
