/**
 * The options every attachment takes (the `createAgent` middleware, `withToolCallRepair` and the
 * native-format adapters), as types: what a user writes. `repairer.ts` validates them. Kept apart
 * from the validation so that the types of `tool-call-resilience/formats` name nothing that
 * needs LangChain.
 */
import type { MeterProvider, TracerProvider } from "@opentelemetry/api";
import type { RepairOptions } from "../core/policy.js";
import type { RepairTarget } from "../core/wire.js";

/**
 * Where the library's log lines go; every message starts with `[tool-call-resilience] `.
 *
 * - `warn`: the repairs of a model call not seen before in its history, and only those (a
 *   dangling call once, as the counters count it); the attachment given twice; a locale resolver
 *   or placeholder function that failed for those repairs.
 * - `error`: a failure of the library itself, when it fails open; `warn` gets it when `error` is
 *   missing or throws.
 * - `debug`: the same repairs seen again on a later model call of a history that is not persisted
 *   (they repeat on every call until the thread is repaired for good), and a resolver or
 *   placeholder function that failed again for them; nowhere when missing.
 *
 * @example
 * ```ts
 * const logger: RepairLogger = {
 *   warn: (message, details) => pino.warn(details, message),
 *   debug: (message, details) => pino.debug(details, message),
 * };
 * ```
 */
export interface RepairLogger {
  warn(message: string, details?: Record<string, unknown>): void;
  error?(message: string, details?: Record<string, unknown>): void;
  debug?(message: string, details?: Record<string, unknown>): void;
}

/** What a locale resolver sees: the model request (or, with `persist`, the state before it). */
export interface LocaleRequest {
  readonly messages: readonly unknown[];
  readonly state?: unknown;
  readonly runtime?: {
    readonly context?: unknown;
    readonly configurable?: { readonly thread_id?: string; readonly [key: string]: unknown };
  };
}

/** Picks the locale of one request, for example from `runtime.context.locale`. */
export type LocaleResolver = (request: LocaleRequest) => string | undefined;

/**
 * Options shared by every attachment (the `createAgent` middleware, {@link withToolCallRepair} and
 * the native-format adapters): the repair options, plus how to log and what to record.
 */
export interface ToolCallRepairOptions extends Omit<RepairOptions, "locale" | "target"> {
  /**
   * The client the request is repaired for: `"auto"` reads it from the request's model
   * (`ChatOpenAI` on Chat Completions or the Responses API, `ChatAnthropic`; `"any"` for every
   * other model), or one of the engine's targets to fix it.
   * @default "auto"
   * @example
   * ```ts
   * { target: "openai-responses" } // a model class of your own that sends the Responses API
   * ```
   */
  target?: RepairTarget | "auto";
  /**
   * A BCP 47 tag, or a function that picks one per request. A resolver that throws or returns an
   * unknown or malformed tag gives English; it never breaks the call.
   * @default "en"
   * @example
   * ```ts
   * { locale: (request) => (request.runtime?.context as { locale?: string })?.locale }
   * ```
   */
  locale?: string | LocaleResolver;
  /**
   * Where log lines go (see {@link RepairLogger}): a warning the first time each repair is seen in
   * a history, the repeats on later model calls at `debug`, the library's own failures at `error`.
   * `false` silences it. The default writes to `console.warn` and `console.error`, and the repeats
   * to `console.debug` only when `NODE_DEBUG` names `tool-call-resilience`.
   * @default console
   */
  logger?: RepairLogger | false;
  /**
   * The meter provider to record metrics with. By default the global one at the time of each call,
   * so an SDK started after the agent was built is still used. With no SDK registered, nothing is
   * recorded and nothing is computed for it.
   * @default metrics.getMeterProvider()
   */
  meterProvider?: MeterProvider;
  /**
   * The tracer provider to create `repair_tool_calls` spans with.
   * @default trace.getTracerProvider()
   */
  tracerProvider?: TracerProvider;
  /**
   * Record `tool_call_resilience.thread.recent_dangling_tool_calls`: per thread (and model, for a
   * thread that changes models), the dangling calls counted in the last {@link threadWindow}
   * seconds, for the threads that had one. It reaches a metric reader only through the producer
   * of `tool-call-resilience/setup` (`threadMetricsProducer`, which `startTelemetry` registers).
   * Turn it off where thread ids must not become metric labels, or map them with
   * {@link threadIdAttribute}.
   * @default true
   */
  threadMetrics?: boolean;
  /**
   * How many series the per-thread metric reports at most, per meter provider: the threads with
   * the most dangling calls in the window, ties to the most recently active. Middleware that record
   * to one meter provider share its series; the largest limit among them applies.
   * @default 100
   */
  threadSeriesLimit?: number;
  /**
   * Seconds a counted dangling call stays in the per-thread metric: a thread is reported while it
   * had one in this window (and up to a fifteenth of it longer), then drops out. Middleware that
   * record to one meter provider share its series; the longest window among them applies.
   * @default 900
   */
  threadWindow?: number;
  /**
   * What a thread id becomes where it is recorded: the per-thread metric's and the
   * `repair_tool_calls` span's `gen_ai.conversation.id`, the same value in both, so that a thread
   * on a dashboard leads to its traces. Thread ids often carry user or tenant ids:
   *
   * - `"raw"`: the id as it is.
   * - `"sha256"`: its hex SHA-256. Unsalted, and ids are often guessable (`user-42`), so this is
   *   pseudonymous only: whoever can list candidate ids can hash them and find yours.
   * - a function: what it returns, such as an HMAC of the id with a secret of yours, which only
   *   the secret's holder can link back. A function that throws or returns anything but a
   *   non-empty string leaves the attribute out for that call (never the raw id in its place),
   *   and the failure is logged as a telemetry failure.
   * @default "raw"
   * @example
   * ```ts
   * import { createHmac } from "node:crypto";
   * { threadIdAttribute: (id) => createHmac("sha256", process.env.THREAD_ID_KEY!).update(id).digest("hex") }
   * ```
   */
  threadIdAttribute?: "raw" | "sha256" | ((threadId: string) => string);
  /**
   * Create a `repair_tool_calls` span for every inspection, clean ones included. By default a span
   * is created only when a request is repaired or the repair fails.
   * @default false
   */
  traceAllCalls?: boolean;
  /**
   * How many counted dangling calls to remember (least recently seen forgotten first), so that a
   * call repaired again on every later model call of its thread is counted once. Unset, every
   * middleware of the process shares one memory of 10,000 per meter provider; a number gives this
   * middleware its own memory of that size; `0` remembers nothing, so every sighting counts.
   * The logger's memory of the repairs it warned about follows it: unset, one memory of 10,000 per
   * logger object (the default logger included), shared; a number, one of its own; `0`, a warning
   * at every sighting.
   * @default 10_000, shared
   */
  countOnceMemory?: number;
  /**
   * The `gen_ai.provider.name` to record, instead of the one read from the request's model (and,
   * for the tool calls an AI message made, from the message).
   * @default read from `request.model`, and from each AI message for its calls
   */
  providerName?: string;
  /**
   * The `gen_ai.request.model` to record, instead of the one read from the request's model (and,
   * for the tool calls an AI message made, from the message).
   * @default read from `request.model`, and from each AI message for its calls
   */
  modelName?: string;
  /**
   * The `gen_ai.agent.name` to record, for every call.
   * @default the `name` given to the innermost `createAgent`, else `"unknown"`
   */
  agentName?: string;
}
