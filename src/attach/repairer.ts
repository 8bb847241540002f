/**
 * What every attachment shares: the options, validated once into a {@link Repairer}, and the
 * steps around one model call (repair, log, record, call, count the answer), guarded so that no
 * failure of ours keeps the call from going on. The `createAgent` middleware, the chat-model
 * wrapper and the native-format adapters all run through here; none has a copy of these steps.
 */
import type { MeterProvider, TracerProvider } from "@opentelemetry/api";
import { z } from "zod/v4";
import {
  localeTagSchema,
  optionsError,
  policyFrom,
  type RepairPolicy,
  repairOptionsShape,
  targetSchema,
} from "../core/policy.js";
import {
  type HistoryRepair,
  type RepairContext,
  repairHistory,
  type ToolCallRepair,
} from "../core/repair.js";
import { describeRepairs } from "../core/summary.js";
import type { ToolMessageFactory } from "../core/tool-message.js";
import type { RepairTarget } from "../core/wire.js";
import {
  answeredByLaterModelCall,
  danglingCallKey,
  graphRunOf,
  type HistoryPlace,
  historyNamespaceOf,
} from "../telemetry/call-identity.js";
import { CountOnceMemory, sharedCountOnceMemory } from "../telemetry/count-once.js";
import type { ModelIdentity, ProviderInference } from "../telemetry/model-identity.js";
import {
  type Inspection,
  type ObservedModelCall,
  type Recording,
  RepairTelemetry,
  type TelemetryPart,
} from "../telemetry/recorder.js";
import {
  OUTCOME_VALUE_CLEAN,
  OUTCOME_VALUE_FAILED_OPEN,
  OUTCOME_VALUE_REPAIRED,
} from "../telemetry/semconv.js";
import {
  DEFAULT_THREAD_SERIES_LIMIT,
  DEFAULT_THREAD_WINDOW_SECONDS,
} from "../telemetry/thread-activity.js";
import type { LocaleRequest, LocaleResolver, RepairLogger } from "./options.js";
import { repairTargetOf } from "./target.js";

/** The options schema of every attachment; the middleware adds `persist`. */
export const toolCallRepairOptionsShape = {
  ...repairOptionsShape,
  target: z
    .union([z.literal("auto"), targetSchema()], {
      error: `expected "auto" or one of ${repairOptionsShape.target
        .unwrap()
        .options.map((target) => `"${target}"`)
        .join(", ")}`,
    })
    .default("auto"),
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
            ["function", "undefined"].includes(typeof (value as RepairLogger).error) &&
            ["function", "undefined"].includes(typeof (value as RepairLogger).debug),
        ),
      ],
      {
        error:
          "expected false or an object with a warn(message, details) method and, optionally, error(message, details) and debug(message, details) methods",
      },
    )
    .optional(),
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
  threadWindow: z
    .number({ error: "expected a number of seconds, more than 0" })
    .positive({ error: "expected a number of seconds, more than 0" })
    .refine(Number.isFinite, { error: "expected a number of seconds, more than 0" })
    .default(DEFAULT_THREAD_WINDOW_SECONDS),
  threadIdAttribute: z
    .union(
      [
        z.literal("raw"),
        z.literal("sha256"),
        z.custom<(threadId: string) => string>((value) => typeof value === "function"),
      ],
      {
        error: 'expected "raw", "sha256", or a function that maps a thread id to a string',
      },
    )
    .default("raw"),
  traceAllCalls: z.boolean().default(false),
  countOnceMemory: z
    .int({ error: "expected a whole number of calls to remember, 0 or more" })
    .min(0, { error: "expected a whole number of calls to remember, 0 or more" })
    .optional(),
  providerName: nameSchema("provider name").optional(),
  modelName: nameSchema("model name").optional(),
  agentName: nameSchema("agent name").optional(),
};

const toolCallRepairOptionsSchema = z.strictObject(toolCallRepairOptionsShape);

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

/** The section name `NODE_DEBUG` must list for the default logger to print repeated repairs. */
const DEBUG_SECTION = "tool-call-resilience";

/** The last `NODE_DEBUG` read, and whether it names {@link DEBUG_SECTION}: parsed once per value. */
let debugSetting: { readonly value: string | undefined; readonly enabled: boolean } = {
  value: undefined,
  enabled: false,
};

/**
 * Whether `NODE_DEBUG` names the library, read as Node's `util.debuglog` reads it (a comma-separated
 * list of sections, `*` a wildcard, case ignored). Read at each call rather than once, so that a
 * process (or a test) may turn it on after the module loaded; `process` may be absent, or guarded,
 * where the formats entry runs outside Node.
 */
function debugEnabled(): boolean {
  let value: unknown;
  try {
    value = globalThis.process?.env?.NODE_DEBUG;
  } catch {
    return false;
  }
  if (typeof value !== "string") return false;
  if (value !== debugSetting.value) {
    const enabled = value.split(",").some((section) => {
      const pattern = section
        .trim()
        .replace(/[|\\{}()[\]^$+?.]/g, "\\$&")
        .replace(/\*/g, ".*");
      return pattern !== "" && new RegExp(`^${pattern}$`, "i").test(DEBUG_SECTION);
    });
    debugSetting = { value, enabled };
  }
  return debugSetting.enabled;
}

/**
 * The logger when the `logger` option is not set: warnings and errors to the console, and repeated
 * repairs to `console.debug` only when `NODE_DEBUG` names `tool-call-resilience`, since a thread
 * that is not persisted repeats them on every model call. `console` is read at each call, so a
 * console replaced after the attachment was built is the one written to.
 *
 * @example
 * ```ts
 * // NODE_DEBUG=tool-call-resilience node app.js  → the repeats are printed too
 * ```
 */
const CONSOLE_LOGGER: RepairLogger = Object.freeze({
  warn(message: string, details?: Record<string, unknown>) {
    console.warn(message, details);
  },
  error(message: string, details?: Record<string, unknown>) {
    console.error(message, details);
  },
  debug(message: string, details?: Record<string, unknown>) {
    if (debugEnabled()) console.debug(message, details);
  },
});

/**
 * What every message the library logs starts with, so its lines can be told apart (and grepped
 * for) in an application's log.
 */
const LOG_PREFIX = "[tool-call-resilience] ";

/** What a repeated repair's line adds to the summary, at `debug`. */
const REPEAT_NOTE = " (again; warned on an earlier model call)";

/** What an attachment needs at call time, built once from validated options. */
export interface Repairer {
  /** How its own failures are named in the log, e.g. "Tool-call middleware". */
  readonly attachment: string;
  readonly policy: RepairPolicy;
  readonly logger: RepairLogger;
  /** The repairs the logger was warned about, so that a repeat goes to `debug` instead. */
  readonly warned: CountOnceMemory;
  readonly locale: string | LocaleResolver | undefined;
  /** The target every request is repaired for, or `"auto"`: read from each request's model. */
  readonly target: RepairTarget | "auto";
  readonly telemetry: RepairTelemetry;
  /** The messages it repairs, and the runs they come from. */
  readonly library: MessageLibrary;
}

/**
 * What a repairer needs from the library whose messages it repairs: how to make a tool message,
 * which agent is running, which model a chat model object is. The LangChain attachments pass
 * LangChain's (`LANGCHAIN_MESSAGES`); the native-format adapters pass plain objects and no runs.
 */
export interface MessageLibrary {
  /** Makes the tool messages the engine writes. */
  readonly makeToolMessage: ToolMessageFactory;
  /** The name of the agent whose run is current, for the telemetry's `agent` attribute. */
  readonly agentNameOfCurrentRun: () => string | undefined;
  /** The provider and model of a chat model object, for the telemetry. */
  readonly modelIdentityOf: (chatModel: unknown) => ModelIdentity;
  /** A provider guessed from a model name, for the telemetry. */
  readonly inferProvider: ProviderInference;
}

/** The target of one request: the options', or the one its model goes through. */
export function targetOfRequest(
  repairer: Repairer,
  request: { readonly model?: unknown; readonly tools?: readonly unknown[] },
): RepairTarget {
  // Not kept between calls: asking costs tens of nanoseconds, and a model made by initChatModel
  // may hold another model on the next call.
  return repairer.target === "auto"
    ? repairTargetOf(request.model, request.tools)
    : repairer.target;
}

/** One context per target, for requests without a locale of their own: none is built per call. */
const TARGET_CONTEXTS = Object.fromEntries(
  repairOptionsShape.target
    .unwrap()
    .options.map((target) => [target, Object.freeze({ target })] as const),
) as unknown as Readonly<Record<RepairTarget, RepairContext>>;

/**
 * Writes to the logger, with {@link LOG_PREFIX} before the message (here alone, so that no line of
 * any attachment goes without it), and never lets the logger break the call: a logger that throws,
 * or an async one that rejects, is a telemetry failure, and telemetry failures never block the
 * model call (an unhandled rejection would end a Node process). `error` falls back to `warn`;
 * `debug` goes nowhere when the logger has no `debug`, since it only repeats what was warned.
 */
export function log(
  logger: RepairLogger,
  level: "warn" | "error" | "debug",
  message: string,
  details: Record<string, unknown>,
): void {
  const line = LOG_PREFIX + message;
  if (level === "debug") {
    try {
      if (typeof logger.debug === "function") ignoreRejection(logger.debug(line, details));
    } catch {
      // A repeat that cannot be written is lost, and nothing else.
    }
    return;
  }
  try {
    if (level === "error" && logger.error !== undefined) {
      ignoreRejection(logger.error(line, details));
      return;
    }
  } catch {
    // Try warn instead.
  }
  try {
    ignoreRejection(logger.warn(line, details));
  } catch {
    // Nowhere left to report to.
  }
}

/** A locale resolver's failure in one request, logged with the repairs it wrote text for. */
interface ResolverFailure {
  error: unknown;
}

/**
 * The locale the options' resolver picks for a request. A resolver that throws gives none (the
 * English text), and its error is kept in `failure`, for {@link reportRepairs} to log at the level
 * of the placeholders it was asked for.
 */
function localeOf(
  repairer: Repairer,
  request: LocaleRequest,
  failure: ResolverFailure,
): string | undefined {
  const { locale } = repairer;
  if (typeof locale !== "function") return undefined;
  try {
    const tag = locale(request);
    return typeof tag === "string" ? tag : undefined;
  } catch (error) {
    failure.error = error;
    return undefined;
  }
}

/** The request's thread id; none when the runtime holds none, or cannot be read. */
export function threadIdOf(request: Pick<LocaleRequest, "runtime">): string | undefined {
  try {
    const threadId = request.runtime?.configurable?.thread_id;
    return typeof threadId === "string" ? threadId : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Logs a model call's repairs once per history, as the counters count a dangling call: a request
 * of a thread that is not persisted carries the same dangling call on every later model call, and
 * a warning each time would bury the first. Each repair is remembered by its kind and
 * {@link danglingCallKey} (its history, the AI message that made the call, or for a dropped orphan
 * the tool message, and its call id). The warning describes the repairs not seen before, so the
 * placeholders the warnings announce add up to the dangling calls counted; the repairs seen before
 * are described at `debug`, and so is a placeholder for a call that a later model call of the
 * history was already made over ({@link answeredByLaterModelCall}), which that call warned about.
 * A repair with no key (no thread and no message id) warns at every sighting that counts it. A placeholder function's failure goes where its repair goes, and a
 * locale resolver's to `warn` when any placeholder of the call is warned about, else to `debug`.
 */
function reportRepairs(
  repairer: Repairer,
  request: LocaleRequest,
  history: readonly unknown[],
  repairs: readonly ToolCallRepair[],
  resolverFailure: ResolverFailure,
) {
  const place = historyPlaceOf(request);
  const thread = place.threadId === undefined ? {} : { threadId: place.threadId };
  const fresh: ToolCallRepair[] = [];
  const repeated: ToolCallRepair[] = [];
  /** The placeholder functions that failed, each logged where its repair is. */
  const failures: { readonly repair: ToolCallRepair; readonly level: "warn" | "debug" }[] = [];
  for (const repair of repairs) {
    const key = warningKeyOf(place, history, repair);
    const seen = key !== undefined && !repairer.warned.firstSighting(key);
    // A call a model call was already made over was warned about there, as it was counted there.
    const first =
      !seen &&
      !(
        repair.kind === "placeholder_inserted" &&
        answeredByLaterModelCall(history, repair.callIndex)
      );
    (first ? fresh : repeated).push(repair);
    if (repair.placeholderError !== undefined) {
      failures.push({ repair, level: first ? "warn" : "debug" });
    }
  }
  if (resolverFailure.error !== undefined) {
    // News when a placeholder it was asked text for is: a repeat of the same call is not.
    const news = fresh.some((repair) => repair.kind === "placeholder_inserted");
    const level = news ? "warn" : "debug";
    log(repairer.logger, level, "Locale resolver failed; using English placeholder text", {
      ...thread,
      error: resolverFailure.error,
    });
  }
  if (fresh.length > 0) {
    log(repairer.logger, "warn", describeRepairs(fresh), {
      ...thread,
      repairs: repeated.length === 0 ? repairs : fresh,
    });
  }
  if (repeated.length > 0) {
    log(repairer.logger, "debug", describeRepairs(repeated) + REPEAT_NOTE, {
      ...thread,
      repairs: repeated,
    });
  }
  for (const { repair, level } of failures) {
    log(repairer.logger, level, "Placeholder function failed; using the catalog text", {
      ...thread,
      toolCallId: repair.toolCallId,
      error: repair.placeholderError,
    });
  }
}

/**
 * What a repair is remembered by in the logger's memory: its kind, and the count-once key of its
 * call (for an orphan, which no AI message made, of the tool message dropped). `undefined` when it
 * cannot be told apart from a repair of another conversation, or the history cannot be read.
 */
function warningKeyOf(
  place: HistoryPlace,
  history: readonly unknown[],
  repair: ToolCallRepair,
): string | undefined {
  try {
    const index = repair.callIndex ?? repair.resultIndex;
    const message = index === undefined ? undefined : history[index];
    const key = danglingCallKey(place, message, index, repair.toolCallId);
    return key === undefined ? undefined : `${repair.kind}\u0000${key}`;
  } catch {
    return undefined;
  }
}

/** One inspection of a request: the repaired messages (absent when the engine failed) and its record. */
export interface Inspected {
  readonly result: HistoryRepair<unknown> | undefined;
  readonly inspection: Inspection;
}

/**
 * Repairs one request's messages, times it when the telemetry records, and logs what it did. When
 * the engine fails, the result is absent: the caller then goes on with the original messages
 * (fail-open).
 */
export function repairRequest(
  repairer: Repairer,
  request: LocaleRequest & { readonly localeTag?: string | undefined },
  recording: Recording,
  messages: readonly unknown[] = request.messages,
  target: RepairTarget = "any",
): Inspected {
  const timed = recording.metrics?.instruments !== undefined || recording.tracing;
  const startedAt = timed ? performance.now() : 0;
  let messageCount = 0;
  let result: HistoryRepair<unknown>;
  const resolverFailure: ResolverFailure = { error: undefined };
  try {
    messageCount = messages.length;
    // A resolver runs only when a placeholder needs its text, never on a clean request.
    const context: RepairContext =
      request.localeTag !== undefined
        ? { locale: request.localeTag, target }
        : typeof repairer.locale === "function"
          ? { locale: () => localeOf(repairer, request, resolverFailure), target }
          : TARGET_CONTEXTS[target];
    result = repairHistory(messages, repairer.library.makeToolMessage, repairer.policy, context);
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
    reportRepairs(repairer, request, messages, result.repairs, resolverFailure);
  }
  const outcome = result.repairs.length > 0 ? OUTCOME_VALUE_REPAIRED : OUTCOME_VALUE_CLEAN;
  return {
    result,
    inspection: {
      outcome,
      repairs: result.repairs,
      messageCount,
      history: messages,
      startedAt,
      endedAt,
    },
  };
}

/**
 * The history a request (or a hook) works on: its thread, the namespace of the graph whose state
 * holds it (sub-agents and sub-graphs may share a thread id; see {@link historyNamespaceOf}), and
 * that graph's run (sub-agents run at once from one node share a namespace; see
 * {@link graphRunOf}). Each part is absent when the runtime holds none or cannot be read.
 */
export function historyPlaceOf(request: Pick<LocaleRequest, "runtime">): HistoryPlace {
  let checkpointNamespace: unknown;
  try {
    checkpointNamespace = request.runtime?.configurable?.checkpoint_ns;
  } catch {
    // An unreadable runtime: the root graph, as far as we can tell.
  }
  return {
    threadId: threadIdOf(request),
    namespace: historyNamespaceOf(checkpointNamespace),
    run: graphRunOf(checkpointNamespace),
  };
}

/** What the telemetry needs of a model request. */
function observedCall(request: ModelRequestLike, target?: RepairTarget): ObservedModelCall {
  return {
    ...historyPlaceOf(request),
    model: request.model,
    tools: request.tools,
    identity: request.identity,
    target,
  };
}

/**
 * Calls `onEnd` once the handler's response has ended, sync, async or streamed, with the whole
 * answer (`undefined` when it failed), and returns the response unchanged: a promise settles as
 * it would, a stream is passed on chunk by chunk and its answer is its chunks joined.
 */
function settled<R>(response: R, onEnd: (answer: unknown) => void): R {
  const end = (answer: unknown) => {
    try {
      onEnd(answer);
    } catch {
      // Counting the answer never changes what the caller gets back.
    }
  };
  if (isPromiseLike(response)) {
    return response.then(
      (resolved) => {
        end(resolved);
        return resolved;
      },
      (error: unknown) => {
        end(undefined);
        throw error;
      },
    ) as R;
  }
  if (isAsyncGenerator(response)) return settledStream(response, end) as R;
  end(response);
  return response;
}

async function* settledStream(
  stream: AsyncGenerator<unknown>,
  onEnd: (answer: unknown) => void,
): AsyncGenerator<unknown> {
  let whole: unknown;
  let ended = false;
  try {
    for await (const chunk of stream) {
      whole = joined(whole, chunk);
      yield chunk;
    }
    ended = true;
  } finally {
    onEnd(ended ? whole : undefined);
  }
}

/** Message chunks joined the way LangChain joins them (`concat`); never throws. */
function joined(whole: unknown, chunk: unknown): unknown {
  if (whole === undefined) return chunk;
  try {
    const concat = (whole as { concat?: unknown }).concat;
    return typeof concat === "function" ? concat.call(whole, chunk) : chunk;
  } catch {
    return whole;
  }
}

const ASYNC_GENERATOR_PROTOTYPE = Object.getPrototypeOf(async function* () {}.prototype) as object;

/** Whether a value is an async generator object (not some other async iterable with methods). */
export function isAsyncGenerator(value: unknown): value is AsyncGenerator<unknown> {
  if (typeof value !== "object" || value === null) return false;
  const own = Object.getPrototypeOf(value) as object | null;
  return own !== null && Object.getPrototypeOf(own) === ASYNC_GENERATOR_PROTOTYPE;
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

/** What an attachment reads of a model request. */
export type ModelRequestLike = LocaleRequest & {
  readonly model: unknown;
  readonly tools?: readonly unknown[];
  /** The provider and model to record, when there is no model object to read them from. */
  readonly identity?: Partial<ModelIdentity>;
  /** This call's locale tag, ahead of the options' tag or resolver. */
  readonly localeTag?: string | undefined;
};

/** The request to hand to the model, and what to do with its response, if anything. */
export interface PreparedCall<Q, R> {
  readonly request: Q;
  /** The engine's result, absent when it failed (the request then goes on as it was). */
  readonly result?: HistoryRepair<unknown>;
  readonly afterResponse?: (response: R) => R;
  /** What to do when the handler throws instead of answering. */
  readonly afterFailure?: () => void;
}

const NO_INSPECTIONS: readonly Inspection[] = Object.freeze([]);

/**
 * Repairs a model request and records it: everything an attachment does before the model runs,
 * so that one guard around it keeps any failure of ours away from the model call.
 *
 * @param persisted - inspections made earlier for this call (the middleware's `persist` hook)
 */
export function prepareModelCall<Q extends ModelRequestLike, R>(
  repairer: Repairer,
  request: Q,
  persisted: readonly Inspection[] = NO_INSPECTIONS,
): PreparedCall<Q, R> {
  const recording = repairer.telemetry.lookUp();
  const target = targetOfRequest(repairer, request);
  const { result, inspection } = repairRequest(
    repairer,
    request,
    recording,
    request.messages,
    target,
  );
  const repaired =
    result === undefined || result.messages === request.messages
      ? request
      : { ...request, messages: result.messages };
  // Nothing is built for the telemetry when nothing records: this runs before every model call.
  if (recording.metrics?.instruments === undefined && !recording.tracing) {
    return { request: repaired, result };
  }
  const call = observedCall(request, target);
  const recorded = repairer.telemetry.recordModelCall(
    recording,
    call,
    persisted.length === 0 ? [inspection] : [...persisted, inspection],
  );
  if (!recorded.metered && recorded.finish === undefined) return { request: repaired, result };
  return {
    request: repaired,
    result,
    afterResponse: (response) =>
      settled(response, (answer) => {
        if (recorded.metered && answer !== undefined)
          repairer.telemetry.recordResponse(call, answer);
        recorded.finish?.(answer);
      }),
    afterFailure: () => recorded.finish?.(undefined),
  };
}

/**
 * One model call, repaired and recorded: {@link prepareModelCall} under a guard, the handler with
 * the repaired request, and the answer counted under a guard of its own. The handler's errors
 * pass through untouched; ours never reach it.
 */
export function callRepaired<Q extends ModelRequestLike, R>(
  repairer: Repairer,
  request: Q,
  handler: (request: Q) => R,
  persisted?: readonly Inspection[],
): R {
  let prepared: PreparedCall<Q, R>;
  try {
    prepared = prepareModelCall<Q, R>(repairer, request, persisted);
  } catch (error) {
    // A bug of ours outside the engine (which guards itself): the model call still goes on.
    log(
      repairer.logger,
      "error",
      `${repairer.attachment} failed; passing the request on unchanged`,
      {
        error,
      },
    );
    prepared = { request };
  }
  let response: R;
  try {
    response = handler(prepared.request);
  } catch (error) {
    afterFailure(repairer, prepared);
    throw error;
  }
  if (prepared.afterResponse === undefined) return response;
  try {
    return prepared.afterResponse(response);
  } catch (error) {
    // The model has answered: that answer goes back whatever befalls its counting.
    log(
      repairer.logger,
      "error",
      `${repairer.attachment} failed; passing the response on unchanged`,
      {
        error,
      },
    );
    return response;
  }
}

/** Runs what a prepared call does when its handler throws; ours never replaces the handler's error. */
function afterFailure(
  repairer: Repairer,
  prepared: Pick<PreparedCall<unknown, unknown>, "afterFailure">,
): void {
  try {
    prepared.afterFailure?.();
  } catch (error) {
    log(repairer.logger, "error", `${repairer.attachment} failed recording a failed call`, {
      error,
    });
  }
}

/**
 * Logs and records a request that could not even be handed to the engine (an adapter that cannot
 * read its input): counted as `failed_open`, like an engine failure. Never throws.
 */
export function recordFailedOpen(
  repairer: Repairer,
  request: ModelRequestLike,
  error: unknown,
): void {
  log(
    repairer.logger,
    "error",
    `${repairer.attachment} failed; passing the messages on unchanged`,
    {
      error,
    },
  );
  try {
    const recording = repairer.telemetry.lookUp();
    if (recording.metrics?.instruments === undefined && !recording.tracing) return;
    const now = performance.now();
    const recorded = repairer.telemetry.recordModelCall(recording, observedCall(request), [
      {
        outcome: OUTCOME_VALUE_FAILED_OPEN,
        repairs: [],
        messageCount: 0,
        startedAt: now,
        endedAt: now,
        error,
      },
    ]);
    // No model call follows: the call is recorded as it stands.
    recorded.finish?.(undefined);
  } catch {
    // The telemetry guards itself; nothing of ours may escape to the caller.
  }
}

/**
 * Validates the shared options (and any an attachment adds) once, and builds the {@link Repairer}.
 *
 * @throws {ToolCallResilienceOptionsError} naming each bad option, with `subject` in the message
 */
export function createRepairer(
  options: unknown,
  subject: string,
  attachment: string,
  library: MessageLibrary,
): Repairer {
  const parsed = toolCallRepairOptionsSchema.safeParse(options ?? {});
  if (!parsed.success) throw optionsError(parsed.error, subject);
  return repairerFrom(parsed.data, attachment, library);
}

/** Builds a {@link Repairer} from options already validated against the shared shape. */
export function repairerFrom(
  data: z.infer<typeof toolCallRepairOptionsSchema>,
  attachment: string,
  library: MessageLibrary,
): Repairer {
  // The policy and the telemetry each read their own fields of the validated options.
  const { logger: loggerOption, locale, target, ...settings } = data;
  const logger = loggerOption === false ? SILENT : (loggerOption ?? CONSOLE_LOGGER);
  // Like the counters' memory: shared by every attachment with this logger (agents built per
  // request warn once per call), unless `countOnceMemory` gives this one a memory of its own.
  const size = settings.countOnceMemory;
  const warned = size === undefined ? sharedCountOnceMemory(logger) : new CountOnceMemory(size);
  return {
    attachment,
    policy: policyFrom({
      ...settings,
      locale: typeof locale === "string" ? locale : undefined,
      target: target === "auto" ? "any" : target,
    }),
    logger,
    warned,
    locale,
    target,
    telemetry: new RepairTelemetry({
      ...settings,
      agentNameOfCurrentRun: library.agentNameOfCurrentRun,
      modelIdentityOf: library.modelIdentityOf,
      inferProvider: library.inferProvider,
      onFailure: telemetryFailureLogger(logger),
    }),
    library,
  };
}

/** The option names, for checks that the docs list every one; not part of the public surface. */
export const toolCallRepairOptionNames: readonly string[] = Object.keys(toolCallRepairOptionsShape);
