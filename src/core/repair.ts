/**
 * The repair engine: pure and synchronous. One allocation-free pass decides whether the history is
 * well formed; only when it is not does a second pass match results to calls and rebuild it.
 */
import { ToolMessage } from "@langchain/core/messages";
import type { PlaceholderReason } from "./locales.js";
import {
  answeredToolCallIdOf,
  hasUnparsableArguments,
  isToolCallEntry,
  MessageKind,
  messageKindOf,
  ToolCallSource,
  toolCallAt,
  toolCallCountOf,
  toolCallIdOf,
  toolCallNameOf,
  toolCallSourceAt,
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
  if (isWellFormed(messages, start)) return { messages: messages as T[], repairs: NO_REPAIRS };
  return rebuild(messages, start, resolved, context);
}

function resolvePolicy(policy: RepairPolicy | RepairOptions | undefined): RepairPolicy {
  if (policy === undefined) return DEFAULT_REPAIR_POLICY;
  return isRepairPolicy(policy) ? policy : createRepairPolicy(policy);
}

function windowStart(length: number, window: number | undefined): number {
  return window === undefined || window >= length ? 0 : length - window;
}

// ---------------------------------------------------------------------------------------------
// The clean path: allocation-free. Every AI message's calls must be answered exactly once by the
// tool messages directly after it, and every tool message must answer a call of that AI message.

function isWellFormed(messages: readonly unknown[], start: number): boolean {
  const end = messages.length;
  let index = start;
  // With a window, the tool messages it opens with answer a call just before it: not ours to judge.
  if (start > 0) while (index < end && messageKindOf(messages[index]) === MessageKind.Tool) index++;
  while (index < end) {
    const message = messages[index];
    const kind = messageKindOf(message);
    if (kind === MessageKind.Tool) return false;
    let groupEnd = index + 1;
    if (kind === MessageKind.Ai) {
      while (groupEnd < end && messageKindOf(messages[groupEnd]) === MessageKind.Tool) groupEnd++;
      if (!groupAnswersCalls(messages, message, index + 1, groupEnd)) return false;
    }
    index = groupEnd;
  }
  return true;
}

function groupAnswersCalls(
  messages: readonly unknown[],
  ai: unknown,
  groupStart: number,
  groupEnd: number,
): boolean {
  const callCount = toolCallCountOf(ai);
  for (let position = 0; position < callCount; position++) {
    const call = toolCallAt(ai, position);
    if (!isToolCallEntry(call)) continue;
    const id = toolCallIdOf(call);
    if (id === undefined || !groupHasResult(messages, id, groupStart, groupEnd)) return false;
  }
  for (let result = groupStart; result < groupEnd; result++) {
    const id = answeredToolCallIdOf(messages[result]);
    if (id === undefined || !makesCall(ai, id, callCount)) return false;
    if (groupHasResult(messages, id, groupStart, result)) return false; // answered twice
  }
  return true;
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
  readonly source: ToolCallSource;
  /** Input index of the tool message that answers it, or -1. */
  answeredBy: number;
  /** Whether that tool message stands somewhere other than the group right after the call. */
  misplaced: boolean;
}

interface AiEntry {
  readonly index: number;
  readonly slots: CallSlot[];
  /** Ids given to calls that had none, by call position. */
  readonly assignedIds: Map<number, string>;
}

/** The fate of a message in the window, by input index. */
const Fate = { Emit: 0, Consumed: 1, Dropped: 2 } as const;

interface Analysis {
  readonly entries: Map<number, AiEntry>;
  readonly fates: Uint8Array;
  /** Whether anything needs repair under the policy. */
  readonly needsRepair: boolean;
}

function analyze(messages: readonly unknown[], start: number, policy: RepairPolicy): Analysis {
  const entries = new Map<number, AiEntry>();
  const fates = new Uint8Array(messages.length - start);
  const pending = new Map<string, CallSlot[]>();
  let needsRepair = false;
  let groupOwner: AiEntry | undefined;

  for (let index = start; index < messages.length; index++) {
    const message = messages[index];
    const kind = messageKindOf(message);
    if (kind === MessageKind.Ai) {
      groupOwner = collectCalls(message, index);
      if (groupOwner === undefined) continue;
      entries.set(index, groupOwner);
      if (groupOwner.assignedIds.size > 0) needsRepair = true;
      for (const slot of groupOwner.slots) {
        const queue = pending.get(slot.id);
        if (queue === undefined) pending.set(slot.id, [slot]);
        else queue.push(slot);
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
    } else if (start === 0 && policy.orphans === "drop") {
      // With a window, an unmatched result may answer a call before it: it is never dropped.
      fates[index - start] = Fate.Dropped;
      needsRepair = true;
    }
  }
  for (const entry of entries.values()) {
    if (entry.slots.some((slot) => slot.answeredBy < 0)) needsRepair = true;
  }
  return { entries, fates, needsRepair };
}

/** The distinct calls of an AI message; a repeated id is one call, answered once. */
function collectCalls(ai: unknown, index: number): AiEntry | undefined {
  const callCount = toolCallCountOf(ai);
  if (callCount === 0) return undefined;
  const entry: AiEntry = { index, slots: [], assignedIds: new Map() };
  for (let position = 0; position < callCount; position++) {
    const call = toolCallAt(ai, position);
    if (!isToolCallEntry(call)) continue;
    let id = toolCallIdOf(call);
    if (id === undefined) {
      id = assignedId(ai, callCount, entry, `${ASSIGNED_ID_PREFIX}${index}_${position}`);
      entry.assignedIds.set(position, id);
    } else if (entry.slots.some((slot) => slot.id === id)) {
      continue;
    }
    entry.slots.push({
      owner: entry,
      id,
      name: toolCallNameOf(call) ?? UNKNOWN_TOOL_NAME,
      call,
      source: toolCallSourceAt(ai, position),
      answeredBy: -1,
      misplaced: false,
    });
  }
  return entry;
}

/**
 * A deterministic id for a call that has none, unlike any other id of its AI message (which may
 * hold ids assigned by an earlier repair that was persisted): `base`, else `base_1`, `base_2`, ...
 */
function assignedId(ai: unknown, callCount: number, entry: AiEntry, base: string): string {
  const taken = (id: string) =>
    makesCall(ai, id, callCount) || [...entry.assignedIds.values()].includes(id);
  let id = base;
  for (let suffix = 1; taken(id); suffix++) id = `${base}_${suffix}`;
  return id;
}

/**
 * The call a result answers: the AI message whose group it stands in, if that message made an
 * unanswered call with this id; otherwise the earliest unanswered call with this id. One result
 * answers one call.
 */
function claimCall(
  id: string,
  groupOwner: AiEntry | undefined,
  pending: Map<string, CallSlot[]>,
): CallSlot | undefined {
  const own = groupOwner?.slots.find((slot) => slot.id === id && slot.answeredBy < 0);
  if (own !== undefined) return own;
  const queue = pending.get(id);
  if (queue === undefined) return undefined;
  while (queue.length > 0 && (queue[0] as CallSlot).answeredBy >= 0) queue.shift();
  return queue[0];
}

function reasonOf(slot: CallSlot): PlaceholderReason {
  if (slot.source === ToolCallSource.Invalid) return "invalid_arguments";
  return hasUnparsableArguments(slot.call) ? "invalid_arguments" : "interrupted";
}

/** The locale of this call: the context's (a resolver runs here, once), else the policy's. */
function localeOf(context: RepairContext | undefined, policy: RepairPolicy): string | undefined {
  const fromContext = typeof context?.locale === "function" ? context.locale() : context?.locale;
  return fromContext ?? policy.locale;
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
