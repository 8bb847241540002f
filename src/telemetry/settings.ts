/**
 * How the telemetry is set up: the middleware's validated options as the recorder reads them, and
 * where its failures are reported.
 */

import type { MeterProvider, TracerProvider } from "@opentelemetry/api";
import type { ThreadIdAttribute } from "./conversation-id.js";
import type { ModelIdentity, ProviderInference } from "./model-identity.js";

/** Which part of the telemetry failed. */
export type TelemetryPart = "metrics" | "tracing";

/** How the telemetry is set up; validated options of the middleware. */
export interface TelemetrySettings {
  readonly meterProvider?: MeterProvider;
  readonly tracerProvider?: TracerProvider;
  readonly threadMetrics: boolean;
  /** Series the per-thread metric reports at most, per meter provider. */
  readonly threadSeriesLimit: number;
  /** Seconds a counted dangling call stays in the per-thread metric. */
  readonly threadWindow: number;
  /** What a thread id becomes on the per-thread metric and the span. */
  readonly threadIdAttribute: ThreadIdAttribute;
  readonly traceAllCalls: boolean;
  /** Own memory of this size; `undefined` shares the default one of the meter provider. */
  readonly countOnceMemory?: number;
  readonly providerName?: string;
  readonly modelName?: string;
  readonly agentName?: string;
  /** The name of the agent whose run is current, when `agentName` gives none. */
  readonly agentNameOfCurrentRun: () => string | undefined;
  /** The provider and model of a request's chat model, when the request names none. */
  readonly modelIdentityOf: (chatModel: unknown) => ModelIdentity;
  /** A provider guessed from a model name, for messages made by another model. */
  readonly inferProvider: ProviderInference;
  readonly onFailure: (error: unknown, part: TelemetryPart) => void;
}
