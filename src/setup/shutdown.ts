/**
 * Stops what `startTelemetry()` started, in an order that loses no export, within a bounded time
 * for the last OTLP pushes, and never rejects: what fails is reported through OpenTelemetry's
 * diagnostic logger.
 */
import { context, diag, metrics, trace } from "@opentelemetry/api";
import type { NodeSDK } from "@opentelemetry/sdk-node";
import type { MetricReader, SpanProcessor } from "./sdk-types.js";

/**
 * How long `shutdown()` gives the last OTLP pushes, in all: a receiver that answers gets them, and
 * one where nothing listens holds the shutdown no longer than this (the exporters would otherwise
 * retry for up to `OTEL_EXPORTER_OTLP_TIMEOUT`, 10 s, per push).
 */
export const LAST_PUSH_MILLIS = 2_000;

/** An exporter whose last pushes `shutdown()` bounds: the OTLP ones. */
export interface LastPushBound {
  /**
   * Every push from now on ends by `deadline` (epoch milliseconds), and a push still under way is
   * no longer waited for.
   */
  finishBy(deadline: number): void;
}

/** What `startTelemetry()` started, as far as stopping it goes. */
export interface RunningTelemetry {
  /** The SDK, once constructed. */
  sdk: NodeSDK | undefined;
  /** Whether the SDK started. */
  started: boolean;
  readonly readers: readonly MetricReader[];
  readonly spanProcessors: readonly SpanProcessor[];
  /** The OTLP exporters of those readers and span processors. */
  readonly otlpExporters: readonly LastPushBound[];
  /** The Prometheus endpoint, when one is served. */
  readonly prometheusEndpoint: { stopServer(): Promise<unknown> } | undefined;
  /** Whether the tracer provider and the context manager were registered. */
  readonly tracing: boolean;
}

/**
 * Pushes what is still to be pushed (over OTLP, for at most {@link LAST_PUSH_MILLIS}), stops the
 * SDK and the Prometheus endpoint, and unregisters the global providers, so the process is as it
 * was before `startTelemetry()`.
 *
 * @example
 * ```ts
 * let stopped: Promise<void> | undefined;
 * const shutdown = () => (stopped ??= stopTelemetry(running));
 * ```
 */
export async function stopTelemetry(running: RunningTelemetry): Promise<void> {
  const { readers, spanProcessors } = running;
  const deadline = Date.now() + LAST_PUSH_MILLIS;
  for (const exporter of running.otlpExporters) exporter.finishBy(deadline);
  try {
    // With spans, the SDK's shutdown() stops waiting for the metrics' last push as soon as a
    // span export fails (Prometheus's OTLP receiver refuses spans): each reader and span
    // processor pushes what is left on its own first, at the cost of one more metrics push.
    if (running.started && spanProcessors.length > 0) {
      await settle(
        "push what was left",
        [...readers, ...spanProcessors].map((flushable) => flushable.forceFlush()),
      );
    }
    await settle("stop the SDK", [running.sdk?.shutdown()]);
  } finally {
    await settle("stop the Prometheus endpoint", [running.prometheusEndpoint?.stopServer()]);
    metrics.disable();
    if (running.tracing) {
      trace.disable();
      context.disable();
    }
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
