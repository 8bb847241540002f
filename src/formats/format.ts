/**
 * {@link repairInFormat}: the engine over a history in a native message format, read and written
 * through its {@link MessageFormat} (`message-format.ts`). Everything else — the matching, the
 * policy, the logging, the telemetry, failing open — is the engine's and the shared attachment
 * steps', so no adapter holds a copy of the algorithm.
 *
 * The engine runs on views: one small plain object per part of a native message, which it reads
 * like any LangChain-shaped message. Its output is translated back, and every native message
 * whose parts all came through unchanged and in order is returned as the very same object.
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
import type { PlaceholderReason } from "../core/locales.js";
import { syntheticReasonOf } from "../core/placeholder-message.js";
import { withWindow } from "../core/policy.js";
import { REPAIR_KINDS } from "../core/repair-kinds.js";
import type { HistoryRepair, ToolCallRepair } from "../core/repair-log.js";
import { plainToolMessage } from "../core/tool-message.js";
import { type ModelIdentity, NO_PROVIDER_INFERENCE } from "../telemetry/model-identity.js";
import {
  GEN_AI_PROVIDER_NAME_VALUE_UNKNOWN,
  GEN_AI_REQUEST_MODEL_VALUE_UNKNOWN,
  REASON_VALUE_INTERRUPTED,
} from "../telemetry/semconv.js";
import type {
  FormatRepairContext,
  FormatRepairResult,
  MessageFormat,
  MessagePart,
  RepairedItem,
} from "./message-format.js";

const ORIGIN = Symbol("tool-call-resilience.origin");

interface Origin {
  readonly index: number;
  readonly part: number;
  readonly parts: number;
}

type View = Record<string | symbol, unknown> & { [ORIGIN]: Origin };

const NO_REPAIRS: readonly ToolCallRepair[] = Object.freeze([]);
const OTHER_PART: readonly MessagePart[] = Object.freeze([{ role: "other" }]);

const UNKNOWN_MODEL: ModelIdentity = Object.freeze({
  provider: GEN_AI_PROVIDER_NAME_VALUE_UNKNOWN,
  model: GEN_AI_REQUEST_MODEL_VALUE_UNKNOWN,
});

/**
 * Native messages, as the engine sees them: views that are plain objects, so its placeholders
 * are plain objects too (translated back by the format); no runs and no chat model objects to
 * read, since the adapters are called with the model's name (`FormatRepairContext.model`).
 */
const PLAIN_MESSAGES: MessageLibrary = Object.freeze({
  makeToolMessage: plainToolMessage,
  agentNameOfCurrentRun: () => undefined,
  modelIdentityOf: () => UNKNOWN_MODEL,
  inferProvider: NO_PROVIDER_INFERENCE,
});

const repairers = new WeakMap<object, Repairer>();
const defaultRepairers = new Map<string, Repairer>();

/** The repairer of an options object, validated once per object. */
function repairerOf(format: string, options: ToolCallRepairOptions | undefined): Repairer {
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
 * @throws {ToolCallResilienceOptionsError} when an option is invalid
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
 * itself, its logging and its fail-open are the same.
 *
 * @throws {ToolCallResilienceOptionsError} when an option is invalid
 */
export function prepareInFormat<M>(
  format: MessageFormat<M>,
  messages: readonly M[],
  options?: ToolCallRepairOptions,
  context: FormatRepairContext = {},
): PreparedFormatCall<M> {
  const repairer = repairerOf(format.name, options);
  const request = requestOf(format, messages, context ?? {});
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

function requestOf<M>(
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
  while (start > 0 && (views[start - 1] as View)[ORIGIN].index >= firstInside) start--;
  return { ...repairer, policy: withWindow(repairer.policy, views.length - start) };
}

/** The engine's views of a history: one plain object per message part. */
function viewsOf<M>(format: MessageFormat<M>, messages: readonly M[]): View[] {
  const views: View[] = [];
  for (let index = 0; index < messages.length; index++) {
    const read = format.partsOf(messages[index] as M);
    // Every message has a place in the history, even one the format reads as nothing.
    const parts = read.length === 0 ? OTHER_PART : read;
    for (let part = 0; part < parts.length; part++) {
      views.push(viewOf(parts[part] as MessagePart, { index, part, parts: parts.length }));
    }
  }
  return views;
}

function viewOf(part: MessagePart, origin: Origin): View {
  switch (part.role) {
    case "assistant": {
      // The engine reads unparsable OpenAI-shaped arguments as invalid, with or without an id.
      const calls = part.calls.map((call) =>
        call.invalidArguments === true
          ? { id: call.id, name: call.name, args: {}, function: { arguments: "" } }
          : { id: call.id, name: call.name, args: {} },
      );
      return { type: "ai", content: "", tool_calls: calls, [ORIGIN]: origin };
    }
    case "tool":
      return { type: "tool", tool_call_id: part.toolCallId, name: part.toolName, [ORIGIN]: origin };
    case "system":
      return { type: "system", [ORIGIN]: origin };
    case "user":
      return { type: "human", [ORIGIN]: origin };
    default:
      return { type: "other", [ORIGIN]: origin };
  }
}

/** Translates the engine's output back into native messages. */
function written<M>(
  format: MessageFormat<M>,
  messages: readonly M[],
  views: readonly View[],
  result: HistoryRepair<unknown>,
): FormatRepairResult<M> {
  const output = result.messages;
  const reasons = new Map<number, PlaceholderReason>();
  for (const repair of result.repairs) {
    if (
      repair.kind === REPAIR_KINDS.placeholder_inserted.metricValue &&
      repair.outputIndex !== undefined
    ) {
      reasons.set(repair.outputIndex, repair.reason ?? REASON_VALUE_INTERRUPTED);
    }
  }
  const items: RepairedItem<M>[] = [];
  /** For each output entry, the item that holds it. */
  const itemOfEntry: number[] = [];
  const unchanged = new Set<unknown>(views);
  for (let at = 0; at < output.length; at++) {
    const entry = output[at] as Partial<View>;
    const origin = entry[ORIGIN];
    if (origin === undefined) {
      itemOfEntry.push(items.length);
      items.push({ kind: "placeholder", placeholder: placeholderOf(entry, reasons.get(at)) });
      continue;
    }
    const message = messages[origin.index] as M;
    if (!unchanged.has(entry)) {
      itemOfEntry.push(items.length);
      items.push(renamed(entry, message, origin));
      continue;
    }
    if (origin.part === 0 && isWholeAt(output, at, origin, unchanged)) {
      for (let part = 0; part < origin.parts; part++) itemOfEntry.push(items.length);
      items.push({ kind: "message", message });
      at += origin.parts - 1;
      continue;
    }
    itemOfEntry.push(items.length);
    items.push({ kind: "part", message, part: origin.part });
  }
  const messagesOut: M[] = [];
  const messageOfItem: number[] = [];
  for (const { message, items: held } of format.write(items)) {
    for (const item of held) messageOfItem[item] = messagesOut.length;
    messagesOut.push(message);
  }
  const repairs = result.repairs.map((repair) =>
    nativeRepair(repair, views, (entry) => messageOfItem[itemOfEntry[entry] as number]),
  );
  return { messages: messagesOut, repairs };
}

/** Whether the output, from `at`, holds every part of one native message, unchanged and in order. */
function isWholeAt(
  output: readonly unknown[],
  at: number,
  origin: Origin,
  unchanged: ReadonlySet<unknown>,
): boolean {
  for (let part = 1; part < origin.parts; part++) {
    const entry = output[at + part] as Partial<View> | undefined;
    if (entry === undefined || !unchanged.has(entry)) return false;
    const next = entry[ORIGIN];
    if (next?.index !== origin.index || next.part !== part) return false;
  }
  return true;
}

function renamed<M>(entry: Partial<View>, message: M, origin: Origin): RepairedItem<M> {
  if (entry.type === "tool") {
    return {
      kind: "renamed_result",
      message,
      part: origin.part,
      toolCallId: String(entry.tool_call_id),
    };
  }
  const calls = Array.isArray(entry.tool_calls)
    ? (entry.tool_calls as { id?: unknown; name?: unknown }[])
    : [];
  return {
    kind: "renamed_calls",
    message,
    part: origin.part,
    ids: calls.map((call) => String(call.id)),
    names: calls.map((call) => String(call.name)),
  };
}

/** A placeholder the engine made, as the format writes it (the engine's marker read as such). */
function placeholderOf(entry: Record<string, unknown>, reason: PlaceholderReason | undefined) {
  return {
    toolCallId: String(entry.tool_call_id),
    toolName: String(entry.name),
    text: typeof entry.content === "string" ? entry.content : String(entry.content),
    reason: reason ?? REASON_VALUE_INTERRUPTED,
    synthetic: syntheticReasonOf(entry) !== undefined,
  };
}

/** A repair with its indices moved from views to native messages. */
function nativeRepair(
  repair: ToolCallRepair,
  views: readonly View[],
  outputMessageOf: (entry: number) => number | undefined,
): ToolCallRepair {
  const native: { -readonly [K in keyof ToolCallRepair]: ToolCallRepair[K] } = { ...repair };
  if (repair.callIndex !== undefined) native.callIndex = views[repair.callIndex]?.[ORIGIN].index;
  if (repair.resultIndex !== undefined) {
    native.resultIndex = views[repair.resultIndex]?.[ORIGIN].index;
  }
  if (repair.outputIndex !== undefined) native.outputIndex = outputMessageOf(repair.outputIndex);
  return native;
}
