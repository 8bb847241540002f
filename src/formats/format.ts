/**
 * {@link repairInFormat}: the engine over a history in a native message format, read and written
 * through its {@link MessageFormat} (`message-format.ts`). Everything else — the matching, the
 * policy, the logging, the telemetry, failing open — is the engine's and the shared attachment
 * steps', so no adapter holds a copy of the algorithm.
 *
 * The engine runs on views of the native messages, and its output is translated back
 * (`views.ts`): every native message whose parts all came through unchanged and in order is
 * returned as the very same object.
 */

import { logFailedOpen } from "../attach/logging.js";
import type { LocaleRequest, ToolCallRepairOptions } from "../attach/options.js";
import {
  createRepairer,
  type MessageLibrary,
  type PreparedCall,
  prepareModelCall,
  type Repairer,
  recordFailedOpen,
} from "../attach/repairer.js";
import { refuseHistoryHolder } from "../core/errors.js";
import { withWindow } from "../core/policy.js";
import type { ToolCallRepair } from "../core/repair-log.js";
import { plainToolMessage } from "../core/tool-message.js";
import { type ModelIdentity, NO_PROVIDER_INFERENCE } from "../telemetry/model-identity.js";
import {
  GEN_AI_PROVIDER_NAME_VALUE_UNKNOWN,
  GEN_AI_REQUEST_MODEL_VALUE_UNKNOWN,
} from "../telemetry/semconv.js";
import type { FormatRepairContext, FormatRepairResult, MessageFormat } from "./message-format.js";
import { messageIndexOf, type View, viewsOf, written } from "./views.js";

const NO_REPAIRS: readonly ToolCallRepair[] = Object.freeze([]);

const UNKNOWN_MODEL: ModelIdentity = Object.freeze({
  provider: GEN_AI_PROVIDER_NAME_VALUE_UNKNOWN,
  model: GEN_AI_REQUEST_MODEL_VALUE_UNKNOWN,
});

/**
 * Native messages, as the engine sees them: views that are plain objects, so its placeholders
 * are plain objects too (translated back by the format); no runs and no chat model objects to
 * read, since the adapters are called with the model's name (`FormatRepairContext.model`).
 */
export const PLAIN_MESSAGES: MessageLibrary = Object.freeze({
  makeToolMessage: plainToolMessage,
  agentNameOfCurrentRun: () => undefined,
  modelIdentityOf: () => UNKNOWN_MODEL,
  inferProvider: NO_PROVIDER_INFERENCE,
});

const repairers = new WeakMap<object, Repairer>();
const defaultRepairers = new Map<string, Repairer>();

/**
 * The repairer of a format's options object, validated once per object, for an adapter that
 * calls {@link prepareInFormat} with a repairer of its own making (and records a failure of its
 * own with it).
 *
 * @throws {ToolCallResilienceOptionsError} when an option is invalid
 *
 * @example
 * ```ts
 * const repairer = repairerOf("openai-responses", options);
 * ```
 */
export function repairerOf(format: string, options: ToolCallRepairOptions | undefined): Repairer {
  const attachment = `Tool-call repair (${format})`;
  if (options === undefined) {
    let repairer = defaultRepairers.get(format);
    if (repairer === undefined) {
      repairer = createRepairer({}, format, attachment, PLAIN_MESSAGES);
      defaultRepairers.set(format, repairer);
    }
    return repairer;
  }
  if (typeof options !== "object" || options === null) {
    return createRepairer(options, format, attachment, PLAIN_MESSAGES);
  }
  let repairer = repairers.get(options);
  if (repairer === undefined) {
    repairer = createRepairer(options, format, attachment, PLAIN_MESSAGES);
    repairers.set(options, repairer);
  }
  return repairer;
}

/**
 * Repairs a history in a native message format with the engine, the policy and the telemetry of
 * the package; the shipped adapters (`repairOpenAIChatMessages`, `repairAnthropicMessages`,
 * `repairModelMessages`) are this function with their format.
 *
 * Options are validated once per options object (keep one and pass it each time). Fail-open: if
 * reading the format fails, the error is logged, counted as `failed_open`, and the input comes
 * back unchanged; if writing the repaired messages fails, the error is logged and the input comes
 * back unchanged too.
 *
 * @throws {ToolCallResilienceOptionsError} when an option is invalid, or `messages` is the object
 *   that holds the history (a request's parameters) rather than the array
 *
 * @example
 * ```ts
 * const { messages } = repairInFormat(myFormat, history, { locale: "de" }, { threadId: "t-1" });
 * ```
 */
export function repairInFormat<M>(
  format: MessageFormat<M>,
  messages: readonly M[],
  options?: ToolCallRepairOptions,
  context: FormatRepairContext = {},
): FormatRepairResult<M> {
  refuseHistoryHolder(messages, "messages", format.name, "the message array (params.messages)");
  return prepareInFormat(format, messages, options, context).repaired;
}

/**
 * A native-format repair made before a model call, and what to do once the model has answered:
 * for attachments that see the answer too (the AI SDK middleware), so that the tool calls it
 * makes are counted like every other attachment's.
 */
export interface PreparedFormatCall<M> {
  readonly repaired: FormatRepairResult<M>;
  /**
   * Counts the tool calls of the model's answer, given as an AI message (`{ type: "ai",
   * tool_calls: [{ id, name }] }`); absent when nothing records. Never throws.
   */
  readonly afterResponse?: (answer: unknown) => void;
  /** Ends the call's record when the model call failed; absent when nothing records. Never throws. */
  readonly afterFailure?: () => void;
}

/**
 * {@link repairInFormat}, keeping what the shared steps do with the model's answer. The repair
 * itself, its logging and its fail-open are the same; `repairer` is an attachment's own, if any.
 *
 * @throws {ToolCallResilienceOptionsError} when an option is invalid
 */
export function prepareInFormat<M>(
  format: MessageFormat<M>,
  messages: readonly M[],
  options?: ToolCallRepairOptions,
  context: FormatRepairContext = {},
  repairer: Repairer = repairerOf(format.name, options),
): PreparedFormatCall<M> {
  const request = formatRequestOf(format, messages, context ?? {});
  const unchanged: PreparedFormatCall<M> = {
    repaired: { messages: messages as M[], repairs: NO_REPAIRS },
  };
  let views: View[];
  try {
    views = viewsOf(format, messages);
  } catch (error) {
    recordFailedOpen(repairer, request, error);
    return unchanged;
  }
  const windowed = windowedRepairer(repairer, messages.length, views);
  let prepared: PreparedCall<unknown, unknown>;
  try {
    prepared = prepareModelCall(windowed, { ...request, messages: views });
  } catch (error) {
    // The engine guards itself; this is a failure of the steps around it.
    logFailedOpen(repairer, "messages", error);
    return unchanged;
  }
  const after = afterCall(repairer, prepared);
  const { result } = prepared;
  if (result === undefined || result.messages === views) return { ...unchanged, ...after };
  try {
    return { repaired: written(format, messages, views, result), ...after };
  } catch (error) {
    logFailedOpen(repairer, "messages", error);
    return { ...unchanged, ...after };
  }
}

/** What a prepared call does after the model call, guarded: it never throws to the caller. */
function afterCall(
  repairer: Repairer,
  prepared: PreparedCall<unknown, unknown>,
): Pick<PreparedFormatCall<unknown>, "afterResponse" | "afterFailure"> {
  const { afterResponse, afterFailure } = prepared;
  if (afterResponse === undefined && afterFailure === undefined) return {};
  return {
    afterResponse: (answer) => {
      try {
        afterResponse?.(answer);
      } catch (error) {
        logFailedOpen(repairer, "response", error);
      }
    },
    afterFailure: () => {
      try {
        afterFailure?.();
      } catch (error) {
        logFailedOpen(repairer, "response", error);
      }
    },
  };
}

/**
 * A native-format request as the shared steps read it: its messages, thread, tools, locale, and
 * the provider and model to record (there is no model object). For an attachment that records a
 * request it cannot read (`recordFailedOpen`), give the messages it has, or none.
 *
 * @example
 * ```ts
 * recordFailedOpen(repairer, formatRequestOf(myFormat, [], { threadId }), error);
 * ```
 */
export function formatRequestOf<M>(
  format: MessageFormat<M>,
  messages: readonly M[],
  context: FormatRepairContext,
) {
  const { threadId, model, tools, locale, provider } = context;
  const request: LocaleRequest & {
    model: undefined;
    tools: readonly unknown[] | undefined;
    identity: { provider: string | undefined; model: string | undefined };
    localeTag: string | undefined;
  } = {
    messages,
    runtime: threadId === undefined ? undefined : { configurable: { thread_id: threadId } },
    model: undefined,
    tools,
    identity: { provider: provider ?? format.provider, model },
    localeTag: locale,
  };
  return request;
}

/**
 * The policy's window counts native messages; the engine counts views. When messages hold several
 * parts, the window is moved to the first view of the first message inside it.
 */
function windowedRepairer(
  repairer: Repairer,
  messageCount: number,
  views: readonly View[],
): Repairer {
  const { window } = repairer.policy;
  if (window === undefined || window >= messageCount || views.length === messageCount) {
    return repairer;
  }
  const firstInside = messageCount - window;
  let start = views.length;
  while (start > 0 && messageIndexOf(views[start - 1] as View) >= firstInside) start--;
  return { ...repairer, policy: withWindow(repairer.policy, views.length - start) };
}
