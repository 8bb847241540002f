/**
 * The repair engine: pure and synchronous. One allocation-free pass decides whether the history is
 * well formed; only when it is not does a second pass match results to calls and rebuild it.
 */
import { ToolMessage } from "@langchain/core/messages";
import type { PlaceholderReason } from "./locales.js";
import {
  answeredToolCallIdOf,
  hasInvalidArguments,
  isToolCallEntry,
  MessageKind,
  messageKindOf,
  toolCallAt,
  toolCallCountOf,
  toolCallIdOf,
  toolCallNameOf,
  toolMessageNameOf,
  withToolCallIds,
} from "./messages.js";
import { placeholderText } from "./placeholder.js";
import {
  createRepairPolicy,
  DEFAULT_REPAIR_POLICY,
  isRepairPolicy,
  type RepairOptions,
  type RepairPolicy,
} from "./policy.js";

/** What a repair did. */
export type RepairKind = "placeholder_inserted" | "result_moved" | "orphan_dropped" | "id_assigned";

/** One change the engine made to the history. */
export interface ToolCallRepair {
  readonly kind: RepairKind;
  /** The id of the call concerned (for `id_assigned`, the id it was given). */
  readonly toolCallId: string;
  /** The tool's name, or `"unknown"`. */
  readonly toolName: string;
  /** Why a placeholder was needed; only on `placeholder_inserted`. */
  readonly reason?: PlaceholderReason;
  /** Index, in the input, of the AI message that made the call (absent for orphans). */
  readonly callIndex?: number;
  /** Index, in the input, of the tool message moved or dropped. */
  readonly resultIndex?: number;
  /** Index, in the returned messages, of the inserted, moved or copied message (absent for drops). */
  readonly outputIndex?: number;
  /** Set when a placeholder function failed and the catalog text was used instead. */
  readonly placeholderError?: unknown;
}

/** What {@link repairToolCalls} returns. */
export interface RepairResult<T = unknown> {
  /**
   * The input array itself when nothing needed repair, otherwise a new array: the input's
   * messages, copies of AI messages given ids, and placeholder tool messages.
   */
  readonly messages: Array<T | ToolMessage>;
  /** Every change made, in the order of the returned messages; empty when nothing changed. */
  readonly repairs: readonly ToolCallRepair[];
}

/** Per-call settings that are not part of the policy. */
export interface RepairContext {
  /**
   * BCP 47 tag for this call's placeholder texts, overriding the policy's `locale`; or a function
   * that returns it, called only when a placeholder is inserted, and at most once per call.
   */
  readonly locale?: string | (() => string | undefined);
}

/**
 * The name a placeholder carries when its call has none.
 *
 * @example
 * ```ts
 * repairToolCalls([{ type: "ai", tool_calls: [{ id: "call_1" }] }]).messages[1]; // name: UNKNOWN_TOOL_NAME
 * ```
 */
export const UNKNOWN_TOOL_NAME = "unknown";

/**
 * Prefix of the ids given to calls that had none; the rest is `<message index>_<call index>`.
 *
 * @example
 * ```ts
 * const assigned = repairs.filter((repair) => repair.toolCallId.startsWith(ASSIGNED_ID_PREFIX));
 * ```
 */
export const ASSIGNED_ID_PREFIX = "tcr_";

const NO_REPAIRS: readonly ToolCallRepair[] = Object.freeze([]);

/**
 * Finds and repairs broken tool-call protocol in a chat history: calls without results get a
 * placeholder tool message in the group right after their AI message; results separated from their
 * call are moved back (`misplaced: "regroup"`); results that answer no call are dropped
 * (`orphans: "drop"`); calls without an id get one.
 *
 * Pure and synchronous: it never mutates the input or any message in it, and nothing in a history
 * can make it throw. When nothing needs repair it returns the very same array and allocates
 * nothing in proportion to the history.
 *
 * @param messages - the history: LangChain messages or plain objects of the same shape
 * @param policy - a policy from {@link createRepairPolicy}, or options to validate on the spot
 * @param context - per-call settings, such as the locale of this request
 * @throws {ToolCallResilienceOptionsError} only when `policy` is given as invalid options
 *
 * @example A dangling call gets a placeholder right after its AI message
 * ```ts
 * import { AIMessage, HumanMessage } from "@langchain/core/messages";
 * import { repairToolCalls } from "tool-call-resilience";
 *
 * const { messages, repairs } = repairToolCalls([
 *   new AIMessage({ content: "", tool_calls: [{ id: "call_1", name: "search", args: {} }] }),
 *   new HumanMessage("Go on"),
 * ]);
 * // messages: [AIMessage, ToolMessage("[Tool call was interrupted and did not return a result.]"), HumanMessage]
 * // repairs: [{ kind: "placeholder_inserted", toolCallId: "call_1", toolName: "search", reason: "interrupted", ... }]
 * ```
 */
export function repairToolCalls<T>(
  messages: readonly T[],
  policy?: RepairPolicy | RepairOptions,
  context?: RepairContext,
): RepairResult<T> {
  const resolved = resolvePolicy(policy);
  if (!Array.isArray(messages)) return { messages: messages as T[], repairs: NO_REPAIRS };
  const start = windowStart(messages.length, resolved.window);
  const keepUnmatched = keepsUnmatchedResults(resolved, start);
  if (isWellFormed(messages, start, keepUnmatched)) {
    return { messages: messages as T[], repairs: NO_REPAIRS };
  }
  return rebuild(messages, start, resolved, context);
}

function resolvePolicy(policy: RepairPolicy | RepairOptions | undefined): RepairPolicy {
  if (policy === undefined) return DEFAULT_REPAIR_POLICY;
  return isRepairPolicy(policy) ? policy : createRepairPolicy(policy);
}

function windowStart(length: number, window: number | undefined): number {
  return window === undefined || window >= length ? 0 : length - window;
}

/**
 * Whether a result that answers no call is kept where it is: with `orphans: "keep"`, and with a
 * window that leaves messages out, since its call may lie before the window.
 */
function keepsUnmatchedResults(policy: RepairPolicy, start: number): boolean {
  return policy.orphans === "keep" || start > 0;
}

// ---------------------------------------------------------------------------------------------
// The clean path: allocation-free. Every AI message's calls must be answered by the tool messages
// directly after it. A tool message that answers no call of its group (a stray) is fine only when
// the policy keeps unmatched results: once every earlier group is complete, it can answer nothing.

/** Above this many calls in one message, the group check uses a set instead of nested loops. */
const NESTED_LOOP_LIMIT = 32;

function isWellFormed(messages: readonly unknown[], start: number, keepStrays: boolean): boolean {
  const end = messages.length;
  let index = start;
  while (index < end) {
    const message = messages[index];
    const kind = messageKindOf(message);
    if (kind === MessageKind.Tool && !keepStrays) return false;
    let groupEnd = index + 1;
    if (kind === MessageKind.Ai) {
      while (groupEnd < end && messageKindOf(messages[groupEnd]) === MessageKind.Tool) groupEnd++;
      const callCount = toolCallCountOf(message);
      const answered =
        callCount > NESTED_LOOP_LIMIT
          ? groupAnswersManyCalls(messages, message, callCount, index + 1, groupEnd, keepStrays)
          : groupAnswersCalls(messages, message, callCount, index + 1, groupEnd, keepStrays);
      if (!answered) return false;
    }
    index = groupEnd;
  }
  return true;
}

function groupAnswersCalls(
  messages: readonly unknown[],
  ai: unknown,
  callCount: number,
  groupStart: number,
  groupEnd: number,
  keepStrays: boolean,
): boolean {
  for (let position = 0; position < callCount; position++) {
    const call = toolCallAt(ai, position);
    if (!isToolCallEntry(call)) continue;
    const id = toolCallIdOf(call);
    if (id === undefined || !groupHasResult(messages, id, groupStart, groupEnd)) return false;
  }
  if (keepStrays) return true;
  for (let result = groupStart; result < groupEnd; result++) {
    const id = answeredToolCallIdOf(messages[result]);
    if (id === undefined || !makesCall(ai, id, callCount)) return false;
    if (groupHasResult(messages, id, groupStart, result)) return false; // answered twice
  }
  return true;
}

/** The same check for a message with very many parallel calls, linear instead of quadratic. */
function groupAnswersManyCalls(
  messages: readonly unknown[],
  ai: unknown,
  callCount: number,
  groupStart: number,
  groupEnd: number,
  keepStrays: boolean,
): boolean {
  const unanswered = new Set<string>();
  for (let position = 0; position < callCount; position++) {
    const call = toolCallAt(ai, position);
    if (!isToolCallEntry(call)) continue;
    const id = toolCallIdOf(call);
    if (id === undefined) return false;
    unanswered.add(id);
  }
  for (let result = groupStart; result < groupEnd; result++) {
    const id = answeredToolCallIdOf(messages[result]);
    const answersCall = id !== undefined && unanswered.delete(id);
    if (!answersCall && !keepStrays) return false; // a stray, or a call answered twice
  }
  return unanswered.size === 0;
}

function groupHasResult(
  messages: readonly unknown[],
  id: string,
  from: number,
  to: number,
): boolean {
  for (let index = from; index < to; index++) {
    if (answeredToolCallIdOf(messages[index]) === id) return true;
  }
  return false;
}

function makesCall(ai: unknown, id: string, callCount: number): boolean {
  for (let call = 0; call < callCount; call++) {
    if (toolCallIdOf(toolCallAt(ai, call)) === id) return true;
  }
  return false;
}

// ---------------------------------------------------------------------------------------------
// The repair path: match every result to a call, then rebuild.

/** One distinct call of an AI message, and what answers it. */
interface CallSlot {
  readonly owner: AiEntry;
  readonly id: string;
  readonly name: string;
  readonly call: unknown;
  /** Input index of the tool message that answers it, or -1. */
  answeredBy: number;
  /** Whether that tool message stands somewhere other than the group right after the call. */
  misplaced: boolean;
}

interface AiEntry {
  readonly index: number;
  readonly message: unknown;
  /** The distinct calls, in call order. */
  readonly slots: CallSlot[];
  readonly slotsById: Map<string, CallSlot>;
  /** Ids given to calls that had none, by call position. */
  readonly assignedIds: Map<number, string>;
}

/** The unanswered calls with one id, oldest first; `head` skips those answered since. */
interface PendingCalls {
  readonly slots: CallSlot[];
  head: number;
}

/** The fate of a message in the window, by input index; the default, 0, is "emit as it is". */
const Fate = { Consumed: 1, Dropped: 2 } as const;

interface Analysis {
  readonly entries: Map<number, AiEntry>;
  readonly fates: Uint8Array;
  /** Whether anything needs repair under the policy. */
  readonly needsRepair: boolean;
}

function analyze(messages: readonly unknown[], start: number, policy: RepairPolicy): Analysis {
  const entries = new Map<number, AiEntry>();
  const fates = new Uint8Array(messages.length - start);
  const pending = new Map<string, PendingCalls>();
  const ids = new AssignedIds(messages, start);
  const keepUnmatched = keepsUnmatchedResults(policy, start);
  let needsRepair = false;
  let groupOwner: AiEntry | undefined;

  for (let index = start; index < messages.length; index++) {
    const message = messages[index];
    const kind = messageKindOf(message);
    if (kind === MessageKind.Ai) {
      groupOwner = collectCalls(message, index, ids);
      if (groupOwner === undefined) continue;
      entries.set(index, groupOwner);
      if (groupOwner.assignedIds.size > 0) needsRepair = true;
      for (const slot of groupOwner.slots) {
        const queue = pending.get(slot.id);
        if (queue === undefined) pending.set(slot.id, { slots: [slot], head: 0 });
        else queue.slots.push(slot);
      }
      continue;
    }
    if (kind !== MessageKind.Tool) {
      groupOwner = undefined;
      continue;
    }
    const id = answeredToolCallIdOf(message);
    const slot = id === undefined ? undefined : claimCall(id, groupOwner, pending);
    if (slot !== undefined) {
      slot.answeredBy = index;
      slot.misplaced = slot.owner !== groupOwner;
      if (slot.misplaced && policy.misplaced === "regroup") {
        fates[index - start] = Fate.Consumed;
        needsRepair = true;
      }
    } else if (!keepUnmatched) {
      fates[index - start] = Fate.Dropped;
      needsRepair = true;
    }
  }
  for (const entry of entries.values()) {
    if (entry.slots.some((slot) => slot.answeredBy < 0)) needsRepair = true;
  }
  return { entries, fates, needsRepair };
}

/**
 * Deterministic ids for calls that have none: `tcr_<message index>_<call index>`, with a `_1`,
 * `_2`, ... suffix when a call or result in the window already uses it (say, an id assigned by an
 * earlier repair that was persisted, and has shifted since).
 */
class AssignedIds {
  readonly #messages: readonly unknown[];
  readonly #start: number;
  #taken: Set<string> | undefined;

  constructor(messages: readonly unknown[], start: number) {
    this.#messages = messages;
    this.#start = start;
  }

  next(messageIndex: number, position: number): string {
    const taken = this.#takenIds();
    const base = `${ASSIGNED_ID_PREFIX}${messageIndex}_${position}`;
    let id = base;
    for (let suffix = 1; taken.has(id); suffix++) id = `${base}_${suffix}`;
    taken.add(id);
    return id;
  }

  #takenIds(): Set<string> {
    if (this.#taken !== undefined) return this.#taken;
    const taken = new Set<string>();
    for (let index = this.#start; index < this.#messages.length; index++) {
      const message = this.#messages[index];
      const answered = answeredToolCallIdOf(message);
      if (answered !== undefined) taken.add(answered);
      const callCount = toolCallCountOf(message);
      for (let position = 0; position < callCount; position++) {
        const id = toolCallIdOf(toolCallAt(message, position));
        if (id !== undefined) taken.add(id);
      }
    }
    this.#taken = taken;
    return taken;
  }
}

/** The distinct calls of an AI message; a repeated id is one call, answered once. */
function collectCalls(ai: unknown, index: number, ids: AssignedIds): AiEntry | undefined {
  const callCount = toolCallCountOf(ai);
  if (callCount === 0) return undefined;
  const entry: AiEntry = {
    index,
    message: ai,
    slots: [],
    slotsById: new Map(),
    assignedIds: new Map(),
  };
  for (let position = 0; position < callCount; position++) {
    const call = toolCallAt(ai, position);
    if (!isToolCallEntry(call)) continue;
    let id = toolCallIdOf(call);
    if (id === undefined) {
      id = ids.next(index, position);
      entry.assignedIds.set(position, id);
    } else if (entry.slotsById.has(id)) {
      continue;
    }
    const slot: CallSlot = {
      owner: entry,
      id,
      name: toolCallNameOf(call) ?? UNKNOWN_TOOL_NAME,
      call,
      answeredBy: -1,
      misplaced: false,
    };
    entry.slots.push(slot);
    entry.slotsById.set(id, slot);
  }
  return entry;
}

/**
 * The call a result answers: the AI message whose group it stands in, if that message made an
 * unanswered call with this id; otherwise the earliest unanswered call with this id. One result
 * answers one call.
 */
function claimCall(
  id: string,
  groupOwner: AiEntry | undefined,
  pending: Map<string, PendingCalls>,
): CallSlot | undefined {
  const own = groupOwner?.slotsById.get(id);
  if (own !== undefined && own.answeredBy < 0) return own;
  const queue = pending.get(id);
  if (queue === undefined) return undefined;
  while (queue.head < queue.slots.length && (queue.slots[queue.head] as CallSlot).answeredBy >= 0) {
    queue.head++;
  }
  return queue.slots[queue.head];
}

function reasonOf(slot: CallSlot): PlaceholderReason {
  return hasInvalidArguments(slot.owner.message, slot.call) ? "invalid_arguments" : "interrupted";
}

/**
 * The locale of this call: the context's (a resolver runs here, once; if it throws, the policy's
 * stands in), else the policy's.
 */
function localeOf(context: RepairContext | undefined, policy: RepairPolicy): string | undefined {
  const locale = context?.locale;
  if (typeof locale !== "function") return locale ?? policy.locale;
  try {
    return locale() ?? policy.locale;
  } catch {
    return policy.locale;
  }
}

function rebuild<T>(
  messages: readonly T[],
  start: number,
  policy: RepairPolicy,
  context: RepairContext | undefined,
): RepairResult<T> {
  const { entries, fates, needsRepair } = analyze(messages, start, policy);
  if (!needsRepair) return { messages: messages as T[], repairs: NO_REPAIRS };

  const output: unknown[] = messages.slice(0, start);
  const repairs: ToolCallRepair[] = [];
  let locale: { readonly tag: string | undefined } | undefined;

  const emitPlaceholder = (slot: CallSlot) => {
    const reason = reasonOf(slot);
    locale ??= { tag: localeOf(context, policy) };
    const { text, error } = placeholderText(
      policy.placeholder,
      { toolName: slot.name, toolCallId: slot.id, reason },
      locale.tag,
    );
    repairs.push({
      kind: "placeholder_inserted",
      toolCallId: slot.id,
      toolName: slot.name,
      reason,
      callIndex: slot.owner.index,
      outputIndex: output.length,
      ...(error === undefined ? {} : { placeholderError: error }),
    });
    output.push(createPlaceholder(slot, reason, text, policy.markSynthetic));
  };

  for (let index = start; index < messages.length; index++) {
    const fate = fates[index - start];
    const message = messages[index];
    if (fate === Fate.Dropped) {
      repairs.push({
        kind: "orphan_dropped",
        toolCallId: answeredToolCallIdOf(message) ?? "",
        toolName: toolMessageNameOf(message) ?? UNKNOWN_TOOL_NAME,
        resultIndex: index,
      });
      continue;
    }
    if (fate === Fate.Consumed) continue;
    const entry = entries.get(index);
    if (entry === undefined) {
      output.push(message);
      continue;
    }
    for (const [position, id] of entry.assignedIds) {
      repairs.push({
        kind: "id_assigned",
        toolCallId: id,
        toolName: toolCallNameOf(toolCallAt(message, position)) ?? UNKNOWN_TOOL_NAME,
        callIndex: index,
        outputIndex: output.length,
      });
    }
    output.push(withToolCallIds(message, entry.assignedIds));

    if (policy.misplaced === "keep") {
      // As the original design: placeholders directly after the AI message, nothing else moves.
      for (const slot of entry.slots) if (slot.answeredBy < 0) emitPlaceholder(slot);
      continue;
    }
    const touched = entry.slots.some((slot) => slot.answeredBy < 0 || slot.misplaced);
    if (!touched) continue;
    // Rebuild the group in the order of the calls; its results are taken out of their old places.
    for (const slot of entry.slots) {
      if (slot.answeredBy < 0) {
        emitPlaceholder(slot);
        continue;
      }
      if (slot.misplaced) {
        repairs.push({
          kind: "result_moved",
          toolCallId: slot.id,
          toolName: slot.name,
          callIndex: index,
          resultIndex: slot.answeredBy,
          outputIndex: output.length,
        });
      }
      fates[slot.answeredBy - start] = Fate.Consumed;
      output.push(messages[slot.answeredBy]);
    }
  }
  return { messages: output as Array<T | ToolMessage>, repairs };
}

/**
 * Response metadata key that marks a message inserted by this library.
 *
 * @example
 * ```ts
 * message.response_metadata?.[SYNTHETIC_MARKER] === true; // inserted by this library
 * ```
 */
export const SYNTHETIC_MARKER = "synthetic";
/**
 * Response metadata key that carries the reason of an inserted message.
 *
 * @example
 * ```ts
 * message.response_metadata?.[SYNTHETIC_REASON_KEY]; // "interrupted" or "invalid_arguments"
 * ```
 */
export const SYNTHETIC_REASON_KEY = "synthetic_reason";

function createPlaceholder(
  slot: CallSlot,
  reason: PlaceholderReason,
  text: string,
  markSynthetic: boolean,
): ToolMessage {
  return new ToolMessage({
    content: text,
    tool_call_id: slot.id,
    name: slot.name,
    status: "error",
    ...(markSynthetic
      ? { response_metadata: { [SYNTHETIC_MARKER]: true, [SYNTHETIC_REASON_KEY]: reason } }
      : {}),
  });
}

/**
 * Whether a message is a placeholder inserted by this library (with `markSynthetic` on), and why.
 *
 * @example
 * ```ts
 * const { messages } = repairToolCalls(history);
 * const inserted = messages.filter((message) => syntheticReasonOf(message) !== undefined);
 * ```
 */
export function syntheticReasonOf(message: unknown): PlaceholderReason | undefined {
  if (message === null || typeof message !== "object") return undefined;
  const metadata = (message as { response_metadata?: unknown }).response_metadata;
  if (metadata === null || typeof metadata !== "object") return undefined;
  const fields = metadata as Record<string, unknown>;
  if (fields[SYNTHETIC_MARKER] !== true) return undefined;
  const reason = fields[SYNTHETIC_REASON_KEY];
  return reason === "invalid_arguments" ? "invalid_arguments" : "interrupted";
}
