/**
 * The `createAgent` middleware: options → engine → telemetry → handler. It repairs the messages of
 * each model request as close to the model call as possible, reports what it did, and fails open.
 */
import { RemoveMessage } from "@langchain/core/messages";
import { REMOVE_ALL_MESSAGES } from "@langchain/langgraph";
import type { MeterProvider, TracerProvider } from "@opentelemetry/api";
import { createMiddleware } from "langchain";
import { z } from "zod/v4";
import {
  localeTagSchema,
  optionsError,
  policyFrom,
  type RepairOptions,
  type RepairPolicy,
  repairOptionsShape,
} from "./core/policy.js";
import { type RepairResult, repairToolCalls, type ToolCallRepair } from "./core/repair.js";
import { describeRepairs } from "./core/summary.js";
import { PendingInspections } from "./telemetry/pending-inspections.js";
import {
  type Inspection,
  type ObservedModelCall,
  type Recording,
  RepairTelemetry,
  type TelemetryPart,
} from "./telemetry/recorder.js";
import {
  OUTCOME_VALUE_CLEAN,
  OUTCOME_VALUE_FAILED_OPEN,
  OUTCOME_VALUE_REPAIRED,
} from "./telemetry/semconv.js";
import { DEFAULT_THREAD_SERIES_LIMIT } from "./telemetry/thread-series.js";

/**
 * The name the middleware registers under in `createAgent`.
 *
 * @example
 * ```ts
 * danglingToolCallMiddleware().name === MIDDLEWARE_NAME; // true
 * ```
 */
export const MIDDLEWARE_NAME = "DanglingToolCallMiddleware";

/** Where the middleware writes: a warning per repaired model call, an error when it fails open. */
export interface RepairLogger {
  warn(message: string, details?: Record<string, unknown>): void;
  error?(message: string, details?: Record<string, unknown>): void;
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

/** Options of {@link danglingToolCallMiddleware}: the repair options, plus how to log and persist. */
export interface DanglingToolCallMiddlewareOptions extends Omit<RepairOptions, "locale"> {
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
   * Where warnings go: one per repaired model call. `false` silences it.
   * @default console
   */
  logger?: RepairLogger | false;
  /**
   * Also write the repaired history back to the thread's state, once, when a repair is needed, so
   * a checkpointed thread is repaired for good. Off by default: the request is repaired and the
   * stored history is left as it was.
   * @default false
   */
  persist?: boolean;
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
   * Record `tool_call_resilience.thread.dangling_tool_calls`, one series per thread that had a
   * dangling call (per thread and model, for a thread that changes models). Turn it off where
   * thread ids must not become metric labels.
   * @default true
   */
  threadMetrics?: boolean;
  /**
   * How many threads get a series of their own on the per-thread counter, per meter provider: the
   * first threads keep theirs for the life of the process, and the dangling calls of further
   * threads are counted in one series marked `otel.metric.overflow` (Prometheus:
   * `otel_metric_overflow="true"`). Middleware with the same limit share one budget.
   * @default 1000
   */
  threadSeriesLimit?: number;
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
   * @default 10_000, shared
   */
  countOnceMemory?: number;
  /**
   * The `gen_ai.provider.name` to record, instead of the one read from the request's model.
   * @default read from `request.model`
   */
  providerName?: string;
  /**
   * The `gen_ai.request.model` to record, instead of the one read from the request's model.
   * @default read from `request.model`
   */
  modelName?: string;
  /**
   * The `gen_ai.agent.name` to record.
   * @default the `name` given to `createAgent`, else `"unknown"`
   */
  agentName?: string;
}

const middlewareOptionsSchema = z.strictObject({
  ...repairOptionsShape,
  locale: z
    .union([localeTagSchema, z.custom<LocaleResolver>((value) => typeof value === "function")], {
      error: 'expected a BCP 47 language tag such as "en" or "zh-TW", or a resolver function',
    })
    .optional(),
  logger: z
    .union(
      [
        z.literal(false),
        z.custom<RepairLogger>(
          (value) =>
            hasMethod(value, "warn") &&
            ["function", "undefined"].includes(typeof (value as RepairLogger).error),
        ),
      ],
      {
        error:
          "expected false or an object with a warn(message, details) method and, optionally, an error(message, details) method",
      },
    )
    .optional(),
  persist: z.boolean().default(false),
  meterProvider: z
    .custom<MeterProvider>((value) => hasMethod(value, "getMeter"), {
      error: "expected a MeterProvider: an object with a getMeter(name, version) method",
    })
    .optional(),
  tracerProvider: z
    .custom<TracerProvider>((value) => hasMethod(value, "getTracer"), {
      error: "expected a TracerProvider: an object with a getTracer(name, version) method",
    })
    .optional(),
  threadMetrics: z.boolean().default(true),
  threadSeriesLimit: z
    .int({ error: "expected a whole number of thread series, 1 or more" })
    .min(1, { error: "expected a whole number of thread series, 1 or more" })
    .default(DEFAULT_THREAD_SERIES_LIMIT),
  traceAllCalls: z.boolean().default(false),
  countOnceMemory: z
    .int({ error: "expected a whole number of calls to remember, 0 or more" })
    .min(0, { error: "expected a whole number of calls to remember, 0 or more" })
    .optional(),
  providerName: nameSchema("provider name").optional(),
  modelName: nameSchema("model name").optional(),
  agentName: nameSchema("agent name").optional(),
});

/** The option names, for checks that the docs list every one; not part of the public surface. */
export const middlewareOptionNames: readonly string[] = Object.keys(middlewareOptionsSchema.shape);

function nameSchema(what: string) {
  return z.string({ error: `expected the ${what} as a non-empty string` }).min(1, {
    error: `expected the ${what} as a non-empty string`,
  });
}

function hasMethod(value: unknown, name: string): boolean {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as Record<string, unknown>)[name] === "function"
  );
}

const SILENT: RepairLogger = { warn() {} };

const NO_INSPECTIONS: readonly Inspection[] = Object.freeze([]);

/** The context keys the `persist` hook can read: any value, never required. */
const persistedContextSchema = z.object({ locale: z.unknown().optional() });

/** What the middleware needs at call time, built once from validated options. */
interface Repairer {
  readonly policy: RepairPolicy;
  readonly logger: RepairLogger;
  readonly locale: string | LocaleResolver | undefined;
  readonly telemetry: RepairTelemetry;
}

/**
 * Writes to the logger, and never lets the logger break the call: a logger that throws, or an
 * async one that rejects, is a telemetry failure, and telemetry failures never block the model
 * call (an unhandled rejection would end a Node process).
 */
function log(
  logger: RepairLogger,
  level: "warn" | "error",
  message: string,
  details: Record<string, unknown>,
): void {
  try {
    if (level === "error" && logger.error !== undefined) {
      ignoreRejection(logger.error(message, details));
      return;
    }
  } catch {
    // Try warn instead.
  }
  try {
    ignoreRejection(logger.warn(message, details));
  } catch {
    // Nowhere left to report to.
  }
}

function localeOf(repairer: Repairer, request: LocaleRequest): string | undefined {
  const { locale } = repairer;
  if (typeof locale !== "function") return undefined;
  try {
    const tag = locale(request);
    return typeof tag === "string" ? tag : undefined;
  } catch (error) {
    log(repairer.logger, "warn", "Locale resolver failed; using English placeholder text", {
      error,
    });
    return undefined;
  }
}

/** The request's thread id; none when the runtime holds none, or cannot be read. */
function threadIdOf(request: Pick<LocaleRequest, "runtime">): string | undefined {
  try {
    const threadId = request.runtime?.configurable?.thread_id;
    return typeof threadId === "string" ? threadId : undefined;
  } catch {
    return undefined;
  }
}

function reportRepairs(
  repairer: Repairer,
  request: LocaleRequest,
  repairs: readonly ToolCallRepair[],
) {
  const threadId = threadIdOf(request);
  const thread = threadId === undefined ? {} : { threadId };
  log(repairer.logger, "warn", describeRepairs(repairs), { ...thread, repairs });
  for (const repair of repairs) {
    if (repair.placeholderError === undefined) continue;
    log(repairer.logger, "warn", "Placeholder function failed; using the catalog text", {
      ...thread,
      toolCallId: repair.toolCallId,
      error: repair.placeholderError,
    });
  }
}

/** One inspection of a request: the repaired messages (absent when the engine failed) and its record. */
interface Inspected<T> {
  readonly result: RepairResult<T> | undefined;
  readonly inspection: Inspection;
}

/**
 * Repairs one request's messages, times it when the telemetry records, and logs what it did. When
 * the engine fails, the result is absent: the caller then goes on with the original messages
 * (fail-open).
 */
function repairRequest<T>(
  repairer: Repairer,
  request: LocaleRequest & { readonly messages: readonly T[] },
  recording: Recording,
): Inspected<T> {
  const timed = recording.metrics?.instruments !== undefined || recording.tracing;
  const startedAt = timed ? performance.now() : 0;
  let messageCount = 0;
  let result: RepairResult<T>;
  try {
    messageCount = request.messages.length;
    // A resolver runs only when a placeholder needs its text, never on a clean request.
    const context =
      typeof repairer.locale === "function"
        ? { locale: () => localeOf(repairer, request) }
        : undefined;
    result = repairToolCalls(request.messages, repairer.policy, context);
  } catch (error) {
    const endedAt = timed ? performance.now() : 0;
    log(repairer.logger, "error", "Tool-call repair failed; passing the request on unchanged", {
      error,
    });
    return {
      result: undefined,
      inspection: {
        outcome: OUTCOME_VALUE_FAILED_OPEN,
        repairs: [],
        messageCount,
        startedAt,
        endedAt,
        error,
      },
    };
  }
  const endedAt = timed ? performance.now() : 0;
  // A silenced logger gets nothing, so nothing is written for it either.
  if (result.repairs.length > 0 && repairer.logger !== SILENT) {
    reportRepairs(repairer, request, result.repairs);
  }
  const outcome = result.repairs.length > 0 ? OUTCOME_VALUE_REPAIRED : OUTCOME_VALUE_CLEAN;
  return {
    result,
    inspection: { outcome, repairs: result.repairs, messageCount, startedAt, endedAt },
  };
}

/** What the telemetry needs of a model request. */
function observedCall(request: {
  readonly model: unknown;
  readonly tools?: readonly unknown[];
  readonly runtime?: LocaleRequest["runtime"];
}): ObservedModelCall {
  return { model: request.model, tools: request.tools, threadId: threadIdOf(request) };
}

/** Counts the tool calls of the handler's response, sync or async, and returns it unchanged. */
function countResponse<R>(telemetry: RepairTelemetry, call: ObservedModelCall, response: R): R {
  if (isPromiseLike(response)) {
    return response.then((resolved) => {
      telemetry.recordResponse(call, resolved);
      return resolved;
    }) as R;
  }
  telemetry.recordResponse(call, response);
  return response;
}

function ignoreRejection(result: unknown): void {
  if (isPromiseLike(result)) result.then(undefined, () => {});
}

function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as { then?: unknown }).then === "function"
  );
}

/** Logs the first failure of each part of the telemetry; the model call never waits on it. */
function telemetryFailureLogger(logger: RepairLogger) {
  const reported = new Set<TelemetryPart>();
  return (error: unknown, part: TelemetryPart) => {
    if (reported.has(part)) return;
    reported.add(part);
    log(
      logger,
      "error",
      `OpenTelemetry ${part} failed; the model call goes on. Later ${part} failures are not logged`,
      { error },
    );
  };
}

/** What the middleware reads of a model request. */
type ModelRequestLike = LocaleRequest & {
  readonly model: unknown;
  readonly tools?: readonly unknown[];
};

/** The request to hand to the model, and what to do with its response, if anything. */
interface PreparedCall<Q, R> {
  readonly request: Q;
  readonly afterResponse?: (response: R) => R;
}

/**
 * Repairs a model request and records it: everything the middleware does before the handler
 * runs, so that one guard around it keeps any failure of ours away from the model call.
 */
function prepareModelCall<Q extends ModelRequestLike, R>(
  repairer: Repairer,
  waitingForModelCall: PendingInspections,
  persist: boolean,
  request: Q,
): PreparedCall<Q, R> {
  const persisted = persist ? waitingForModelCall.take(threadIdOf(request)) : NO_INSPECTIONS;
  const recording = repairer.telemetry.lookUp();
  const { result, inspection } = repairRequest(repairer, request, recording);
  const repaired =
    result === undefined || result.messages === request.messages
      ? request
      : { ...request, messages: result.messages };
  // Nothing is built for the telemetry when nothing records: this runs before every model call.
  if (recording.metrics?.instruments === undefined && !recording.tracing) {
    return { request: repaired };
  }
  const call = observedCall(request);
  const countsResponse = repairer.telemetry.recordModelCall(
    recording,
    call,
    persisted.length === 0 ? [inspection] : [...persisted, inspection],
  );
  if (!countsResponse) return { request: repaired };
  return {
    request: repaired,
    afterResponse: (response) => countResponse(repairer.telemetry, call, response),
  };
}

/**
 * A `createAgent` middleware that keeps an agent talking after its tool-call protocol breaks.
 *
 * Before each model call it repairs the request's messages with {@link repairToolCalls}: each tool
 * call left without a result (a stop, a cancelled or timed-out run, a crashed tool, a restart) gets
 * a placeholder `ToolMessage` with `status: "error"` right after the AI message that made it, so
 * the provider accepts the request and the model sees an honest error. Misplaced results are
 * moved back, orphan results dropped, and missing call ids assigned, as the options say. A clean
 * history goes to the handler untouched. It never runs tools, retries, or invents results.
 *
 * Fail-open: if the repair itself fails, it logs and calls the handler with the original request.
 * Errors from the handler propagate unchanged.
 *
 * @param options.placeholder - template, reason map, or function for the placeholder text
 * @param options.locale - BCP 47 tag or per-request resolver for the built-in texts
 * @param options.window - repair only the last N messages
 * @param options.markSynthetic - mark inserted messages (default `true`)
 * @param options.orphans - `"drop"` (default) or `"keep"`
 * @param options.misplaced - `"regroup"` (default) or `"keep"`
 * @param options.logger - where warnings go (default `console`); `false` silences them
 * @param options.persist - also write the repair to the thread's state (default `false`)
 * @throws {ToolCallResilienceOptionsError} when an option is invalid; the message names it.
 *
 * @example Basic
 * ```ts
 * import { createAgent } from "langchain";
 * import { danglingToolCallMiddleware } from "tool-call-resilience";
 *
 * const agent = createAgent({
 *   model: "openai:gpt-4.1",
 *   tools: [search],
 *   middleware: [danglingToolCallMiddleware()],
 * });
 * ```
 *
 * @example Localized text, chosen per request
 * ```ts
 * const agent = createAgent({
 *   model: "anthropic:claude-sonnet-4-5",
 *   tools: [search],
 *   middleware: [
 *     danglingToolCallMiddleware({
 *       locale: (request) => (request.runtime?.context as { locale?: string })?.locale,
 *     }),
 *   ],
 * });
 * ```
 *
 * @example Repair checkpointed threads for good
 * ```ts
 * const agent = createAgent({
 *   model: "openai:gpt-4.1",
 *   tools: [search],
 *   checkpointer: new MemorySaver(),
 *   middleware: [danglingToolCallMiddleware({ persist: true, window: 200, logger: false })],
 * });
 * ```
 */
export function danglingToolCallMiddleware(options: DanglingToolCallMiddlewareOptions = {}) {
  const parsed = middlewareOptionsSchema.safeParse(options);
  if (!parsed.success) throw optionsError(parsed.error, MIDDLEWARE_NAME);
  // The policy and the telemetry each read their own fields of the validated options.
  const { logger: loggerOption, persist, locale, ...settings } = parsed.data;
  const logger = loggerOption === false ? SILENT : (loggerOption ?? console);
  const repairer: Repairer = {
    policy: policyFrom({ ...settings, locale: typeof locale === "string" ? locale : undefined }),
    logger,
    locale,
    telemetry: new RepairTelemetry({
      ...settings,
      onFailure: telemetryFailureLogger(logger),
    }),
  };

  const waitingForModelCall = new PendingInspections();

  return createMiddleware({
    name: MIDDLEWARE_NAME,
    // Hooks other than wrapModelCall see only the context keys their middleware declares; this
    // one lets a persisted placeholder follow `runtime.context.locale` like a request does.
    contextSchema: persistedContextSchema,
    // With persist, the repair is written to the state before the model node runs; the request
    // then arrives clean and wrapModelCall passes it on as it is.
    beforeModel: persist
      ? (state, runtime) => {
          const { result, inspection } = repairRequest(
            repairer,
            { messages: state.messages, state, runtime },
            repairer.telemetry.lookUp(),
          );
          if (inspection.outcome === OUTCOME_VALUE_CLEAN) return undefined;
          // The model call that follows reports it, with the model and tools this hook lacks.
          waitingForModelCall.add(threadIdOf({ runtime }), inspection);
          if (result === undefined) return undefined;
          return {
            messages: [new RemoveMessage({ id: REMOVE_ALL_MESSAGES }), ...result.messages],
          };
        }
      : undefined,
    wrapModelCall: (request, handler) => {
      let prepared: PreparedCall<typeof request, ReturnType<typeof handler>>;
      try {
        prepared = prepareModelCall(repairer, waitingForModelCall, persist, request);
      } catch (error) {
        // A bug of ours outside the engine (which guards itself): the model call still goes on.
        log(logger, "error", "Tool-call middleware failed; passing the request on unchanged", {
          error,
        });
        prepared = { request };
      }
      const response = handler(prepared.request);
      if (prepared.afterResponse === undefined) return response;
      try {
        return prepared.afterResponse(response);
      } catch (error) {
        // The model has answered: that answer goes back whatever befalls its counting.
        log(logger, "error", "Tool-call middleware failed; passing the response on unchanged", {
          error,
        });
        return response;
      }
    },
  });
}
