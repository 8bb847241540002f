/**
 * What `startTelemetry()` registers globally, and what it must not: it refuses to start over a
 * meter provider, tracer provider or context manager already registered, and keeps the SDK from
 * setting up exporters or a propagator of its own.
 */
import {
  context,
  createContextKey,
  createNoopMeter,
  metrics,
  ProxyTracerProvider,
  propagation,
  ROOT_CONTEXT,
  trace,
} from "@opentelemetry/api";
import { INSTRUMENTATION_SCOPE_NAME } from "../telemetry/semconv.js";
import { PACKAGE_VERSION } from "../version.js";
import { ToolCallResilienceSetupError } from "./errors.js";

const PROBE = createContextKey("tool-call-resilience.setup.probe");

/**
 * The global providers already registered that `startTelemetry()` would have to register: the
 * meter provider always, the tracer provider and the context manager when it records spans.
 *
 * @example
 * ```ts
 * registeredGlobals(false); // ["MeterProvider"] once an SDK is running
 * ```
 */
export function registeredGlobals(tracing: boolean): string[] {
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

/**
 * The error for a process that registered some of {@link registeredGlobals} already.
 *
 * @example
 * ```ts
 * const taken = registeredGlobals(tracing);
 * if (taken.length > 0) throw alreadyRegistered(taken);
 * ```
 */
export function alreadyRegistered(taken: readonly string[]): ToolCallResilienceSetupError {
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
 *
 * @example
 * ```ts
 * startWithoutExtras(() => new NodeSDK(configuration).start());
 * ```
 */
export function startWithoutExtras(setUp: () => void): void {
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
