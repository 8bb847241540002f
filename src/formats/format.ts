/**
 * The one adapter interface over the engine for histories in a provider's native message format.
 * A {@link MessageFormat} says how to read a native message (its role, the calls it makes, the
 * results it carries) and how to write messages back (a placeholder, a copy with new ids, results
 * grouped the way the format groups them). Everything else — the matching, the policy, the
 * logging, the telemetry, failing open — is the engine's and the shared attachment steps', so no
 * adapter holds a copy of the algorithm.
 *
 * The engine runs on views: one small plain object per part of a native message, which it reads
 * like any LangChain-shaped message. Its output is translated back, and every native message
 * whose parts all came through unchanged and in order is returned as the very same object.
 */

import type { LocaleRequest, ToolCallRepairOptions } from "../attach/options.js";
import {
  createRepairer,
  log,
  type MessageLibrary,
  type PreparedCall,
  prepareModelCall,
  type Repairer,
  recordFailedOpen,
} from "../attach/repairer.js";
import type { PlaceholderReason } from "../core/locales.js";
import { withWindow } from "../core/policy.js";
import { type HistoryRepair, syntheticReasonOf, type ToolCallRepair } from "../core/repair.js";
import { plainToolMessage } from "../core/tool-message.js";
import { type ModelIdentity, NO_PROVIDER_INFERENCE } from "../telemetry/model-identity.js";
import { VALUE_UNKNOWN } from "../telemetry/semconv.js";

/** A tool call as the engine needs to see it. */
export interface FormatCall {
  /** The call's id; `undefined` (or `""`) when it has none, and the engine assigns one. */
  readonly id: string | undefined;
  readonly name: string | undefined;
  /** Set when the call's arguments could not be parsed (a cut-off stream). */
  readonly invalidArguments?: boolean;
}

/** What one part of a native message is, as far as tool calling goes. */
export type MessagePart =
  | { readonly role: "assistant"; readonly calls: readonly FormatCall[] }
  | { readonly role: "tool"; readonly toolCallId: string | undefined; readonly toolName?: string }
  | { readonly role: "user" | "system" | "other" };

/** A placeholder result to write in the format, for a call that has none. */
export interface PlaceholderResult {
  readonly toolCallId: string;
  readonly toolName: string;
  /** The placeholder's text, from the policy (template, function or locale catalog). */
  readonly text: string;
  readonly reason: PlaceholderReason;
  /** Whether the policy asks to mark it as inserted (`markSynthetic`). */
  readonly synthetic: boolean;
}

/** One item of the repaired history, handed to {@link MessageFormat.write} in order. */
export type RepairedItem<M> =
  /** A native message whose parts all came through unchanged and in order. */
  | { readonly kind: "message"; readonly message: M }
  /** One part of a native message, unchanged, whose message was split or changed around it. */
  | { readonly kind: "part"; readonly message: M; readonly part: number }
  /**
   * An assistant part whose calls get new ids or names, in call order (`ids[k]` and `names[k]`
   * for its k-th call; a call that had a name keeps it).
   */
  | {
      readonly kind: "renamed_calls";
      readonly message: M;
      readonly part: number;
      readonly ids: readonly string[];
      readonly names: readonly string[];
    }
  /** A result part that answers its call under a new id. */
  | {
      readonly kind: "renamed_result";
      readonly message: M;
      readonly part: number;
      readonly toolCallId: string;
    }
  /** A placeholder for a call without a result. */
  | { readonly kind: "placeholder"; readonly placeholder: PlaceholderResult };

/** A message written by {@link MessageFormat.write}, and the items it holds. */
export interface WrittenMessage<M> {
  readonly message: M;
  /** Indices, in the sequence given to `write`, of the items this message holds. */
  readonly items: readonly number[];
}

/**
 * How one native message format is read and written. Implement it to repair histories of a
 * format this library does not ship, with {@link repairInFormat}.
 *
 * @example A format of `{ from, calls?, answers? }` messages, one result per message
 * ```ts
 * const myFormat: MessageFormat<MyMessage> = {
 *   name: "my-format",
 *   provider: undefined,
 *   partsOf: (m) => [
 *     m.calls ? { role: "assistant", calls: m.calls.map((c) => ({ id: c.id, name: c.tool })) }
 *     : m.answers ? { role: "tool", toolCallId: m.answers }
 *     : { role: "user" },
 *   ],
 *   write: (items) => items.map((item, index) => ({ message: toMyMessage(item), items: [index] })),
 * };
 * const { messages } = repairInFormat(myFormat, history);
 * ```
 */
export interface MessageFormat<M> {
  /** The format's name, used in log lines and errors. */
  readonly name: string;
  /** The `gen_ai.provider.name` recorded for it, unless the options give one. */
  readonly provider: string | undefined;
  /** The parts of one native message, in order: one for most messages. Must not throw on junk. */
  partsOf(message: M): readonly MessagePart[];
  /** The native messages for the repaired sequence, each with the items it holds. */
  write(items: readonly RepairedItem<M>[]): WrittenMessage<M>[];
}

/** Per-call settings of a native-format repair, for the telemetry and the placeholder texts. */
export interface FormatRepairContext {
  /** The conversation's id: recorded as `gen_ai.conversation.id`, and counts each call once. */
  readonly threadId?: string;
  /** The model the history is sent to, recorded as `gen_ai.request.model`. */
  readonly model?: string;
  /** The tools offered with the request (names or tool definitions), for the per-tool labels. */
  readonly tools?: readonly unknown[];
  /** BCP 47 tag of this call's placeholder texts, overriding the options' `locale`. */
  readonly locale?: string;
}

/** What a native-format repair returns: messages in the same format, and the repairs made. */
export interface FormatRepairResult<M> {
  /** The input array itself when nothing needed repair; otherwise a new array. */
  readonly messages: M[];
  /**
   * Every change made. Its indices are native message indices: `callIndex` and `resultIndex` in
   * the input, `outputIndex` in `messages`.
   */
  readonly repairs: readonly ToolCallRepair[];
}

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
  provider: VALUE_UNKNOWN,
  model: VALUE_UNKNOWN,
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
  const repairer = repairerOf(format.name, options);
  const request = requestOf(format, messages, context ?? {});
  let views: View[];
  try {
    views = viewsOf(format, messages);
  } catch (error) {
    recordFailedOpen(repairer, request, error);
    return { messages: messages as M[], repairs: NO_REPAIRS };
  }
  const windowed = windowedRepairer(repairer, messages.length, views);
  let prepared: PreparedCall<unknown, unknown>;
  try {
    prepared = prepareModelCall(windowed, { ...request, messages: views });
  } catch (error) {
    // The engine guards itself; this is a failure of the steps around it.
    log(
      repairer.logger,
      "error",
      `${repairer.attachment} failed; passing the messages on unchanged`,
      {
        error,
      },
    );
    return { messages: messages as M[], repairs: NO_REPAIRS };
  }
  const { result } = prepared;
  if (result === undefined || result.messages === views) {
    return { messages: messages as M[], repairs: NO_REPAIRS };
  }
  try {
    return written(format, messages, views, result);
  } catch (error) {
    log(
      repairer.logger,
      "error",
      `${repairer.attachment} failed; passing the messages on unchanged`,
      {
        error,
      },
    );
    return { messages: messages as M[], repairs: NO_REPAIRS };
  }
}

function requestOf<M>(
  format: MessageFormat<M>,
  messages: readonly M[],
  context: FormatRepairContext,
) {
  const { threadId, model, tools, locale } = context;
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
    identity: { provider: format.provider, model },
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
    if (repair.kind === "placeholder_inserted" && repair.outputIndex !== undefined) {
      reasons.set(repair.outputIndex, repair.reason ?? "interrupted");
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
    reason: reason ?? "interrupted",
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
