/**
 * The Prometheus endpoint `startTelemetry()` serves: the SDK's own Prometheus exporter, started
 * here rather than by the SDK so that a port already taken is reported before anything runs.
 */
import { ToolCallResilienceSetupError } from "./errors.js";
import { loadPrometheusExporter } from "./sdk.js";
import type { MetricProducer } from "./sdk-types.js";

/** The SDK's Prometheus exporter: a metric reader that serves what it reads. */
export type PrometheusEndpoint = InstanceType<
  ReturnType<typeof loadPrometheusExporter>["PrometheusExporter"]
>;

/** Where the endpoint listens, and what it serves besides the SDK's instruments. */
export interface PrometheusEndpointOptions {
  readonly host: string;
  readonly port: number;
  readonly endpoint: string;
  readonly metricProducers: readonly MetricProducer[];
}

/**
 * Starts a Prometheus endpoint and resolves once it listens.
 *
 * @param purpose - what needs the exporter, named when its package is missing
 * @throws {ToolCallResilienceSetupError} when the exporter's package is missing or the endpoint
 *   cannot listen (the port is taken, say); nothing is left listening then
 *
 * @example
 * ```ts
 * const exporter = await startPrometheusEndpoint("startTelemetry()", {
 *   host: "127.0.0.1",
 *   port: 9464,
 *   endpoint: "/metrics",
 *   metricProducers: [],
 * });
 * ```
 */
export async function startPrometheusEndpoint(
  purpose: string,
  options: PrometheusEndpointOptions,
): Promise<PrometheusEndpoint> {
  const { host, port, endpoint, metricProducers } = options;
  const { PrometheusExporter } = loadPrometheusExporter(purpose);
  const exporter = new PrometheusExporter({
    host,
    port,
    endpoint,
    preventServerStart: true,
    metricProducers: [...metricProducers],
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
  return exporter;
}
