/**
 * The options every attachment takes (the `createAgent` middleware, `withToolCallRepair` and the
 * native-format adapters), defined once: a zod shape whose fields carry the validation, the TSDoc
 * editors show through {@link ToolCallRepairOptions}, and the `describe` text the README's options
 * table repeats. Nothing here needs LangChain, so that the types of `tool-call-resilience/formats`
 * name nothing from it.
 */
import type { MeterProvider, TracerProvider } from "@opentelemetry/api";
import { z } from "zod/v4";
import { notOneOf } from "../core/errors.js";
import { enumSchema, localeTagSchema, repairOptionsShape } from "../core/policy.js";
import { REPAIR_TARGETS } from "../core/wire.js";
import {
  DEFAULT_THREAD_SERIES_LIMIT,
  DEFAULT_THREAD_WINDOW_SECONDS,
} from "../telemetry/thread-activity.js";

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

function hasMethod(value: unknown, name: string): boolean {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as Record<string, unknown>)[name] === "function"
  );
}

function nameSchema(what: string) {
  return z.string({ error: `expected the ${what} as a non-empty string` }).min(1, {
    error: `expected the ${what} as a non-empty string`,
  });
}

/** What the attachments add to the engine's options, or widen (`locale` and `target`). */
const attachmentOptionsShape = {
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
  target: enumSchema(["auto", ...REPAIR_TARGETS])
    .default("auto")
    .describe(
      'The client whose converter the repaired request is for: `"auto"` reads it from the request\'s model, any other value fixes it (see which client a repair is for).',
    ),
  /**
   * A BCP 47 tag, or a function that picks one per request. A resolver that throws or returns an
   * unknown or malformed tag gives English; it never breaks the call.
   * @default "en"
   * @example
   * ```ts
   * { locale: (request) => (request.runtime?.context as { locale?: string })?.locale }
   * ```
   */
  locale: z
    .union([localeTagSchema, z.custom<LocaleResolver>((value) => typeof value === "function")], {
      error: 'expected a BCP 47 language tag such as "en" or "zh-TW", or a resolver function',
    })
    .optional()
    .describe(
      "BCP 47 tag of the catalog text, or a function of the request (`runtime.context`, `state`, `messages`), called only when a placeholder is inserted. Unknown or malformed tags at call time fall back to English; a malformed fixed tag is rejected at construction.",
    ),
  /**
   * Where log lines go (see {@link RepairLogger}): a warning the first time each repair is seen in
   * a history, the repeats on later model calls at `debug`, the library's own failures at `error`.
   * `false` silences it. The default writes to `console.warn` and `console.error`, and the repeats
   * to `console.debug` only when `NODE_DEBUG` names `tool-call-resilience`.
   * @default console
   */
  logger: z
    .union(
      [
        z.literal(false),
        z.custom<RepairLogger>(
          (value) =>
            hasMethod(value, "warn") &&
            ["function", "undefined"].includes(typeof (value as RepairLogger).error) &&
            ["function", "undefined"].includes(typeof (value as RepairLogger).debug),
        ),
      ],
      {
        error:
          "expected false or an object with a warn(message, details) method and, optionally, error(message, details) and debug(message, details) methods",
      },
    )
    .optional()
    .describe(
      "`warn`: each repair the first time it is seen in a history (a dangling call once, as the counters count it), and a locale resolver or placeholder function that failed for it; `debug`: the same repairs again on later model calls of a thread that is not persisted, with such failures again (nowhere without `debug`); `error`: the library's own failures when it fails open (to `warn` without `error`). The logger remembers what it warned about as `countOnceMemory` says. `false` silences it.",
    ),
  /**
   * The meter provider to record metrics with. By default the global one at the time of each call,
   * so an SDK started after the agent was built is still used. With no SDK registered, nothing is
   * recorded and nothing is computed for it.
   * @default metrics.getMeterProvider()
   */
  meterProvider: z
    .custom<MeterProvider>((value) => hasMethod(value, "getMeter"), {
      error: "expected a MeterProvider: an object with a getMeter(name, version) method",
    })
    .optional()
    .describe("Where metrics go. With no SDK registered nothing is recorded or computed."),
  /**
   * The tracer provider to create `repair_tool_calls` spans with.
   * @default trace.getTracerProvider()
   */
  tracerProvider: z
    .custom<TracerProvider>((value) => hasMethod(value, "getTracer"), {
      error: "expected a TracerProvider: an object with a getTracer(name, version) method",
    })
    .optional()
    .describe("Where `repair_tool_calls` spans go."),
  /**
   * Record `tool_call_resilience.thread.recent_dangling_tool_calls`: per thread (and model, for a
   * thread that changes models), the dangling calls counted in the last `threadWindow` seconds,
   * for the threads that had one. It reaches a metric reader only through the producer of
   * `tool-call-resilience/setup` (`threadMetricsProducer`, which `startTelemetry` registers).
   * Turn it off where thread ids must not become metric labels, or map them with
   * `threadIdAttribute`.
   * @default true
   */
  threadMetrics: z
    .boolean()
    .default(true)
    .describe(
      "Record `tool_call_resilience.thread.recent_dangling_tool_calls`: per thread (and model), the dangling calls of the last `threadWindow` seconds, for the threads that had one. It reaches your metric readers through `threadMetricsProducer()` (see the per-thread metric in the telemetry reference).",
    ),
  /**
   * How many series the per-thread metric reports at most, per meter provider: the threads with
   * the most dangling calls in the window, ties to the most recently active. Middleware that record
   * to one meter provider share its series; the largest limit among them applies.
   * @default 100
   */
  threadSeriesLimit: z
    .int({ error: "expected a whole number of thread series, 1 or more" })
    .min(1, { error: "expected a whole number of thread series, 1 or more" })
    .default(DEFAULT_THREAD_SERIES_LIMIT)
    .describe(
      "How many series the per-thread metric reports at most, per meter provider: the threads with the most dangling calls in the window first, ties to the most recent. No overflow series: the others are simply not reported.",
    ),
  /**
   * Seconds a counted dangling call stays in the per-thread metric: a thread is reported while it
   * had one in this window (and up to a fifteenth of it longer), then drops out. Middleware that
   * record to one meter provider share its series; the longest window among them applies.
   * @default 900
   */
  threadWindow: z
    .number({ error: "expected a number of seconds, more than 0" })
    .positive({ error: "expected a number of seconds, more than 0" })
    .refine(Number.isFinite, { error: "expected a number of seconds, more than 0" })
    .default(DEFAULT_THREAD_WINDOW_SECONDS)
    .describe(
      "How long a counted dangling call keeps its thread in the per-thread metric (up to a fifteenth longer); a thread with none left in the window drops out.",
    ),
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
  threadIdAttribute: z
    .union(
      [
        z.literal("raw"),
        z.literal("sha256"),
        z.custom<(threadId: string) => string>((value) => typeof value === "function"),
      ],
      {
        error: (issue) =>
          notOneOf(["raw", "sha256"], issue.input, "a function that maps a thread id to a string"),
      },
    )
    .default("raw")
    .describe(
      "What a thread id becomes as `gen_ai.conversation.id`, on the per-thread metric and the span alike: as it is, its hex SHA-256 (pseudonymous only: ids are often guessable), or what your function returns (an HMAC with a secret, say). A function that throws or returns no text leaves the attribute out for that call, never the raw id, and is logged as a telemetry failure.",
    ),
  /**
   * Create a `repair_tool_calls` span for every inspection, clean ones included. By default a span
   * is created only when a request is repaired or the repair fails.
   * @default false
   */
  traceAllCalls: z
    .boolean()
    .default(false)
    .describe(
      "Create a span for every inspection, clean ones too; by default only for repairs and failures.",
    ),
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
  countOnceMemory: z
    .int({ error: "expected a whole number of calls to remember, 0 or more" })
    .min(0, { error: "expected a whole number of calls to remember, 0 or more" })
    .optional()
    .describe(
      "How many counted dangling calls to remember, so that a call repaired on every later call of its thread is counted once (see counting each dangling call once in the telemetry reference). A number gives this middleware its own memory; `0` counts every sighting.",
    ),
  /**
   * The `gen_ai.provider.name` to record, instead of the one read from the request's model (and,
   * for the tool calls an AI message made, from the message).
   * @default read from `request.model`, and from each AI message for its calls
   */
  providerName: nameSchema("provider name")
    .optional()
    .describe("The `gen_ai.provider.name` to record."),
  /**
   * The `gen_ai.request.model` to record, instead of the one read from the request's model (and,
   * for the tool calls an AI message made, from the message).
   * @default read from `request.model`, and from each AI message for its calls
   */
  modelName: nameSchema("model name").optional().describe("The `gen_ai.request.model` to record."),
  /**
   * The `gen_ai.agent.name` to record, for every call.
   * @default the `name` given to the innermost `createAgent`, else `"unknown"`
   */
  agentName: nameSchema("agent name").optional().describe("The `gen_ai.agent.name` to record."),
};

/**
 * The options of every attachment: the engine's ({@link repairOptionsShape}, with `locale` and
 * `target` widened), plus how to log and what to record. The middleware adds `persist`. Typed by
 * the shapes it joins, so that the published declarations keep each field's documentation.
 */
export const toolCallRepairOptionsShape: Omit<
  typeof repairOptionsShape,
  keyof typeof attachmentOptionsShape
> &
  typeof attachmentOptionsShape = { ...repairOptionsShape, ...attachmentOptionsShape };

/** The options of every attachment, as `withToolCallRepair` and the adapters validate them. */
export const toolCallRepairOptionsSchema: z.ZodObject<
  typeof toolCallRepairOptionsShape,
  z.core.$strict
> = z.strictObject(toolCallRepairOptionsShape);

/**
 * Options shared by every attachment (the `createAgent` middleware, {@link withToolCallRepair} and
 * the native-format adapters): the repair options, plus how to log and what to record. The type
 * is what {@link toolCallRepairOptionsSchema} accepts; each option is documented on its field.
 */
export type ToolCallRepairOptions = z.input<typeof toolCallRepairOptionsSchema>;

/** The shared options after validation, defaults filled in. */
export type ParsedToolCallRepairOptions = z.output<typeof toolCallRepairOptionsSchema>;
