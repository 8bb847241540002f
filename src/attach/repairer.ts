/**
 * The steps around one model call that every attachment shares: the options validated once into a
 * {@link Repairer}, then for each call repair, log, record, call, and count the answer, guarded so
 * that no failure of ours keeps the call from going on. The `createAgent` middleware, the
 * chat-model wrapper and the native-format adapters all run through here; none has a copy of these
 * steps.
 */
import { optionsError } from "../core/errors.js";
import { policyFrom, type RepairPolicy, repairOptionsShape } from "../core/policy.js";
import { repairHistory } from "../core/repair.js";
import type { HistoryRepair, RepairContext } from "../core/repair-log.js";
import type { ToolMessageFactory } from "../core/tool-message.js";
import type { RepairTarget } from "../core/wire.js";
import { CountOnceMemory, sharedCountOnceMemory } from "../telemetry/count-once.js";
import type { Inspection } from "../telemetry/inspection.js";
import type { ModelIdentity, ProviderInference } from "../telemetry/model-identity.js";
import { type Recording, RepairTelemetry } from "../telemetry/recorder.js";
import {
  OUTCOME_VALUE_CLEAN,
  OUTCOME_VALUE_FAILED_OPEN,
  OUTCOME_VALUE_REPAIRED,
} from "../telemetry/semconv.js";
import type { TelemetrySettings } from "../telemetry/settings.js";
import { warnOfConverterGaps } from "./converter-gaps.js";
import {
  log,
  logFailedOpen,
  loggerFrom,
  reportRepairs,
  SILENT_LOGGER,
  telemetryFailureLogger,
} from "./logging.js";
import {
  type LocaleRequest,
  type LocaleResolver,
  type ParsedToolCallRepairOptions,
  type RepairLogger,
  toolCallRepairOptionsSchema,
} from "./options.js";
import { historyPlaceOf, type ModelRequestLike, observedCall, targetOfRequest } from "./request.js";
import { settled } from "./responses.js";

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

/** One context per target, for requests without a locale of their own: none is built per call. */
const TARGET_CONTEXTS = Object.fromEntries(
  repairOptionsShape.target
    .unwrap()
    .options.map((target) => [target, Object.freeze({ target })] as const),
) as unknown as Readonly<Record<RepairTarget, RepairContext>>;

/** A locale resolver's failure in one request, logged with the repairs it wrote text for. */
interface ResolverFailure {
  error: unknown;
}

/**
 * The locale the options' resolver picks for a request. A resolver that throws gives none (the
 * English text), and its error is kept in `failure`, for `reportRepairs` to log at the level
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
    result = repairHistory(
      messages,
      repairer.library.makeToolMessage,
      repairer.policy,
      contextOf(repairer, request, target, resolverFailure),
    );
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
  if (result.repairs.length > 0 && repairer.logger !== SILENT_LOGGER) {
    reportRepairs(
      repairer,
      historyPlaceOf(request),
      messages,
      result.repairs,
      resolverFailure.error,
    );
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

/** The engine's context for one request: its locale (resolved only when a placeholder needs it). */
function contextOf(
  repairer: Repairer,
  request: LocaleRequest & { readonly localeTag?: string | undefined },
  target: RepairTarget,
  failure: ResolverFailure,
): RepairContext {
  if (request.localeTag !== undefined) return { locale: request.localeTag, target };
  // A resolver runs only when a placeholder needs its text, never on a clean request.
  return typeof repairer.locale === "function"
    ? { locale: () => localeOf(repairer, request, failure), target }
    : TARGET_CONTEXTS[target];
}

/**
 * Repairs messages as {@link repairRequest} does, but logs and records nothing: for a history
 * whose repair a model call has already logged and counted, now written where the history lives.
 * A locale resolver that throws gives the English text, as there.
 *
 * @throws what the engine throws; the caller fails open
 */
export function repairSilently(
  repairer: Repairer,
  request: LocaleRequest,
  messages: readonly unknown[],
  target: RepairTarget,
): HistoryRepair<unknown> {
  return repairHistory(
    messages,
    repairer.library.makeToolMessage,
    repairer.policy,
    contextOf(repairer, request, target, { error: undefined }),
  );
}

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
  const target = targetOfRequest(repairer.target, request);
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
  warnOfConverterGaps(repairer.logger, repairer.attachment, request.model, repaired.messages);
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
    logFailedOpen(repairer, "request", error);
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
    logFailedOpen(repairer, "response", error);
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
  logFailedOpen(repairer, "messages", error);
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
  if (!parsed.success) throw optionsError(parsed.error, subject, true);
  return repairerFrom(parsed.data, attachment, library);
}

/**
 * Builds a {@link Repairer} from options already validated against the shared shape (by the
 * middleware, whose schema adds `persist`); it validates nothing again.
 */
export function repairerFrom(
  data: ParsedToolCallRepairOptions,
  attachment: string,
  library: MessageLibrary,
  /** Makes the telemetry from its settings: an attachment may record its calls its own way. */
  makeTelemetry = (settings: TelemetrySettings) => new RepairTelemetry(settings),
): Repairer {
  // The policy and the telemetry each read their own fields of the validated options.
  const { logger: loggerOption, locale, target, ...settings } = data;
  const logger = loggerFrom(loggerOption);
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
    telemetry: makeTelemetry({
      ...settings,
      agentNameOfCurrentRun: library.agentNameOfCurrentRun,
      modelIdentityOf: library.modelIdentityOf,
      inferProvider: library.inferProvider,
      onFailure: telemetryFailureLogger(logger),
    }),
    library,
  };
}
