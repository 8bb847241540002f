/**
 * The repair engine: pure and synchronous. One allocation-free pass decides whether the history is
 * well formed; only when it is not does a second pass match results to calls and rebuild it.
 */
import { ToolMessage } from "@langchain/core/messages";
import { shieldHistory } from "./hostile.js";
import type { PlaceholderReason } from "./locales.js";
import {
  answeredToolCallIdOf,
  hasInvalidArguments,
  hasUnlistedCalls,
  isToolCallEntry,
  MessageKind,
  messageKindOf,
  toolCallAt,
  toolCallCountOf,
  toolCallIdOf,
  toolCallNameOf,
  toolMessageNameOf,
  withAnsweredId,
  withListedToolCalls,
} from "./messages.js";
import { findMissingResults, type MissingResultsGroup } from "./missing-results.js";
import { placeholderText } from "./placeholder.js";
import {
  createRepairPolicy,
  DEFAULT_REPAIR_POLICY,
  isRepairPolicy,
  type RepairOptions,
  type RepairPolicy,
} from "./policy.js";
import { firstUnsoundIndex } from "./well-formed.js";

/** What a repair did. */
export type RepairKind =
  | "placeholder_inserted"
  | "result_moved"
  | "orphan_dropped"
  | "id_assigned"
  | "call_listed";

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

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

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
  try {
    // A revoked proxy throws even here.
    if (!Array.isArray(messages)) return { messages: messages as T[], repairs: NO_REPAIRS };
    return repairReadable(messages, resolved, context);
  } catch {
    // An entry that throws when read (a getter, a proxy): it is no message any client can send,
    // so it is repaired around as junk. Nothing in a history makes the engine throw.
    return repairAroundUnreadable(messages, resolved, context);
  }
}

function repairReadable<T>(
  messages: readonly T[],
  resolved: RepairPolicy,
  context: RepairContext | undefined,
): RepairResult<T> {
  const start = windowStart(messages.length, resolved.window);
  const keepUnmatched = keepsUnmatchedResults(resolved, start);
  const unsound = firstUnsoundIndex(messages, start, keepUnmatched);
  if (unsound === messages.length) return { messages: messages as T[], repairs: NO_REPAIRS };
  const missing = keepUnmatched ? undefined : findMissingResults(messages, unsound);
  if (missing !== undefined) return insertPlaceholders(messages, missing, resolved, context);
  return rebuild(messages, start, unsound, resolved, context);
}

/**
 * The repair of a history with unreadable entries: each is read as junk and stays where it is.
 * If even that throws, the history is passed on as it is.
 */
function repairAroundUnreadable<T>(
  messages: readonly T[],
  resolved: RepairPolicy,
  context: RepairContext | undefined,
): RepairResult<T> {
  try {
    const shielded = shieldHistory(messages);
    if (shielded === undefined) return { messages: messages as T[], repairs: NO_REPAIRS };
    const result = repairReadable(shielded.messages, resolved, context);
    if (result.messages === shielded.messages) {
      return { messages: messages as T[], repairs: NO_REPAIRS };
    }
    return { messages: shielded.restore(result.messages), repairs: result.repairs };
  } catch {
    return { messages: messages as T[], repairs: NO_REPAIRS };
  }
}

/**
 * The engine without its shortcuts: the careful analysis of the whole window, every time. Not part
 * of the public surface; the tests hold {@link repairToolCalls} to giving the same result.
 *
 * @example
 * ```ts
 * expect(repairToolCalls(history)).toEqual(repairToolCallsCarefully(history));
 * ```
 */
export function repairToolCallsCarefully<T>(
  messages: readonly T[],
  policy?: RepairPolicy | RepairOptions,
): RepairResult<T> {
  const resolved = resolvePolicy(policy);
  const start = windowStart(messages.length, resolved.window);
  return rebuild(messages, start, start, resolved, undefined);
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
// The repair path: match every result to a call, then rebuild.

/** One distinct call of an AI message, and what answers it. */
interface CallSlot {
  readonly owner: AiEntry;
  /** Its position among the message's calls, as {@link toolCallAt} numbers them. */
  readonly position: number;
  readonly id: string;
  /** The id the call had when another call of its message had it first, and it was given `id`. */
  readonly repeatedId: string | undefined;
  readonly name: string;
  readonly call: unknown;
  /** Input index of the tool message that answers it, or -1. */
  answeredBy: number;
  /** Whether that tool message stands somewhere other than the group right after the call. */
  misplaced: boolean;
  /** The next call made later with the same id (ids reused across turns), oldest first. */
  laterWithSameId: CallSlot | undefined;
  /** On the first slot of such a chain: its last slot, where the next reuse is appended. */
  lastWithSameId: CallSlot;
}

interface AiEntry {
  readonly index: number;
  readonly message: unknown;
  /** The distinct calls, in call order. */
  readonly slots: CallSlot[];
  /**
   * Ids given to calls that had none, or whose id an earlier call of the same message already
   * has, by call position; absent when none was needed.
   */
  assignedIds: Map<number, string> | undefined;
  /** Whether some of its calls are not in `tool_calls` ({@link hasUnlistedCalls}). */
  readonly unlisted: boolean;
  /** Whether one of its calls has the id of an earlier one, and so a new id. */
  repeatsIds: boolean;
  /** The slots by id, built only for messages with many calls. */
  slotsById: Map<string, CallSlot> | undefined;
}

const NO_ASSIGNED_IDS: ReadonlyMap<number, string> = new Map();

/** Above this many calls in one message, its slots are looked up in a map rather than a list. */
const LINEAR_LOOKUP_LIMIT = 8;

/**
 * The calls no result has claimed yet, by id: the oldest slot of each chain of slots with that
 * id. Allocation on the repair path is one slot per call and one entry per AI message, so that
 * repairing a long history costs little more than reading it.
 */
class UnansweredCalls {
  readonly #oldest = new Map<string, CallSlot>();

  add(slot: CallSlot): void {
    const first = this.#oldest.get(slot.id);
    if (first === undefined) {
      this.#oldest.set(slot.id, slot);
      return;
    }
    first.lastWithSameId.laterWithSameId = slot;
    first.lastWithSameId = slot;
  }

  /** The earliest call with this id that no result has claimed yet. */
  earliest(id: string): CallSlot | undefined {
    const first = this.#oldest.get(id);
    let slot = first;
    while (slot !== undefined && slot.answeredBy >= 0) slot = slot.laterWithSameId;
    if (slot !== first && first !== undefined) {
      if (slot === undefined) {
        this.#oldest.delete(id);
      } else {
        slot.lastWithSameId = first.lastWithSameId;
        this.#oldest.set(id, slot);
      }
    }
    return slot;
  }
}

/** What becomes of a message in the window, by input index; absent means "emit as it is". */
const Fate = { Consumed: 1, Dropped: 2 } as const;
type Fate = (typeof Fate)[keyof typeof Fate];

interface Analysis {
  readonly entries: Map<number, AiEntry>;
  readonly fates: Map<number, Fate>;
  /** Results that answer a call given a new id, by input index: they are copied with that id. */
  readonly renamed: Map<number, string>;
  /** Whether anything needs repair under the policy. */
  readonly needsRepair: boolean;
}

/**
 * Matches results to calls from `from` on, the first message the clean path could not vouch for;
 * what stands before it is well formed and stays as it is. Ids are assigned unique across the
 * whole window, from `start`.
 */
function analyze(
  messages: readonly unknown[],
  start: number,
  from: number,
  policy: RepairPolicy,
): Analysis {
  const entries = new Map<number, AiEntry>();
  const fates = new Map<number, Fate>();
  const renamed = new Map<number, string>();
  const unanswered = new UnansweredCalls();
  const ids = new AssignedIds(messages, start);
  const keepUnmatched = keepsUnmatchedResults(policy, start);
  let needsRepair = false;
  let groupOwner: AiEntry | undefined;

  for (let index = from; index < messages.length; index++) {
    const message = messages[index];
    const kind = messageKindOf(message);
    if (kind === MessageKind.Ai) {
      groupOwner = collectCalls(message, index, ids);
      if (groupOwner === undefined) continue;
      entries.set(index, groupOwner);
      if (groupOwner.assignedIds !== undefined || groupOwner.unlisted) needsRepair = true;
      for (const slot of groupOwner.slots) unanswered.add(slot);
      continue;
    }
    if (kind !== MessageKind.Tool) {
      groupOwner = undefined;
      continue;
    }
    const id = answeredToolCallIdOf(message);
    const slot = id === undefined ? undefined : claimCall(id, groupOwner, unanswered);
    if (slot !== undefined) {
      slot.answeredBy = index;
      slot.misplaced = slot.owner !== groupOwner;
      if (slot.id !== id) renamed.set(index, slot.id);
      if (slot.misplaced && policy.misplaced === "regroup") {
        fates.set(index, Fate.Consumed);
        needsRepair = true;
      }
    } else if (!keepUnmatched) {
      fates.set(index, Fate.Dropped);
      needsRepair = true;
    }
  }
  if (!needsRepair) {
    for (const entry of entries.values()) {
      if (entry.slots.some((slot) => slot.answeredBy < 0)) needsRepair = true;
    }
  }
  return { entries, fates, renamed, needsRepair };
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

/**
 * The calls of an AI message, each with an id of its own: a call without an id, or with the id of
 * an earlier call of the same message, is given a new one. Providers that count calls (Gemini)
 * want a result for each of two calls that share an id, and one result cannot name both.
 */
function collectCalls(ai: unknown, index: number, ids: AssignedIds): AiEntry | undefined {
  const callCount = toolCallCountOf(ai);
  if (callCount === 0) return undefined;
  const entry: AiEntry = {
    index,
    message: ai,
    slots: [],
    assignedIds: undefined,
    slotsById: undefined,
    unlisted: hasUnlistedCalls(ai),
    repeatsIds: false,
  };
  for (let position = 0; position < callCount; position++) {
    const call = toolCallAt(ai, position);
    if (!isToolCallEntry(call)) continue;
    let id = toolCallIdOf(call);
    let repeatedId: string | undefined;
    if (id !== undefined && ownSlot(entry, id) !== undefined) {
      repeatedId = id;
      entry.repeatsIds = true;
      id = undefined;
    }
    if (id === undefined) {
      id = ids.next(index, position);
      entry.assignedIds ??= new Map();
      entry.assignedIds.set(position, id);
    }
    const slot: CallSlot = {
      owner: entry,
      position,
      id,
      repeatedId,
      name: toolCallNameOf(call) ?? UNKNOWN_TOOL_NAME,
      call,
      answeredBy: -1,
      misplaced: false,
      laterWithSameId: undefined,
      lastWithSameId: undefined as unknown as CallSlot,
    };
    slot.lastWithSameId = slot;
    entry.slots.push(slot);
    entry.slotsById?.set(id, slot);
  }
  return entry;
}

/** The call of this AI message with this id, if it made one. */
function ownSlot(entry: AiEntry, id: string): CallSlot | undefined {
  const { slots } = entry;
  if (slots.length <= LINEAR_LOOKUP_LIMIT) {
    for (const slot of slots) if (slot.id === id) return slot;
    return undefined;
  }
  // Built once; collectCalls adds each later slot to it.
  entry.slotsById ??= new Map(slots.map((slot) => [slot.id, slot]));
  return entry.slotsById.get(id);
}

/**
 * The call a result answers: the AI message whose group it stands in, if that message made an
 * unanswered call with this id; otherwise the earliest unanswered call with this id. One result
 * answers one call.
 */
function claimCall(
  id: string,
  groupOwner: AiEntry | undefined,
  unanswered: UnansweredCalls,
): CallSlot | undefined {
  const own = groupOwner === undefined ? undefined : ownSlot(groupOwner, id);
  if (own !== undefined && own.answeredBy < 0) return own;
  if (groupOwner?.repeatsIds) {
    // A second result for an id the message made twice answers the second call, under its new id.
    for (const slot of groupOwner.slots) {
      if (slot.repeatedId === id && slot.answeredBy < 0) return slot;
    }
  }
  return unanswered.earliest(id);
}

function reasonOf(message: unknown, call: unknown): PlaceholderReason {
  return hasInvalidArguments(message, call) ? "invalid_arguments" : "interrupted";
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

/** Makes placeholders, and keeps the list of repairs: one for each placeholder, and the others. */
class RepairLog {
  readonly #policy: RepairPolicy;
  readonly #context: RepairContext | undefined;
  readonly #repairs: ToolCallRepair[];
  #written = 0;
  /** The locale of this call, resolved at the first placeholder. */
  #locale: string | undefined;
  #localeResolved = false;

  /**
   * Writes to `repairs` from its start: an empty list, or one made to the length it will reach
   * (an empty list that is pushed to reserves room for 17 at once).
   */
  constructor(policy: RepairPolicy, context: RepairContext | undefined, repairs: ToolCallRepair[]) {
    this.#policy = policy;
    this.#context = context;
    this.#repairs = repairs;
  }

  record(repair: ToolCallRepair): void {
    this.#repairs[this.#written++] = repair;
  }

  /**
   * The placeholder for the call `call` (id `id`, tool `name`) of the AI message at `aiIndex`,
   * which the caller writes at `outputIndex`.
   */
  placeholder(
    ai: unknown,
    aiIndex: number,
    call: unknown,
    id: string,
    name: string,
    outputIndex: number,
  ): ToolMessage {
    const reason = reasonOf(ai, call);
    if (!this.#localeResolved) {
      this.#locale = localeOf(this.#context, this.#policy);
      this.#localeResolved = true;
    }
    const { text, error } = placeholderText(
      this.#policy.placeholder,
      { toolName: name, toolCallId: id, reason },
      this.#locale,
    );
    const repair: Mutable<ToolCallRepair> = {
      kind: "placeholder_inserted",
      toolCallId: id,
      toolName: name,
      reason,
      callIndex: aiIndex,
      outputIndex,
    };
    if (error !== undefined) repair.placeholderError = error;
    this.record(repair);
    return createPlaceholder(id, name, reason, text, this.#policy.markSynthetic);
  }
}

/**
 * The repair of a history whose only faults are calls without results: each such group is
 * written in call order, results where they exist and placeholders where they do not, and every
 * other message is copied as it is. The same output as {@link rebuild} gives, at the cost of a copy.
 */
function insertPlaceholders<T>(
  messages: readonly T[],
  groups: readonly MissingResultsGroup[],
  policy: RepairPolicy,
  context: RepairContext | undefined,
): RepairResult<T> {
  const first = groups[0];
  if (first === undefined) return { messages: messages as T[], repairs: NO_REPAIRS };
  // The output's length is known: written into a list of that length, which measured faster
  // than a copy of the part before the first group that then grows.
  let missing = 0;
  for (const group of groups) missing += group.missing;
  const output: unknown[] = new Array(messages.length + missing);
  let written = 0;
  const repairs: ToolCallRepair[] = new Array(missing);
  const log = new RepairLog(policy, context, repairs);
  let copied = 0;
  for (const group of groups) {
    for (let index = copied; index <= group.aiIndex; index++) output[written++] = messages[index];
    const ai = messages[group.aiIndex];
    // With `misplaced: "keep"` nothing moves: placeholders go right after the AI message and the
    // results stay where they are; otherwise the group is written in the order of the calls.
    const keepOrder = policy.misplaced === "keep";
    for (let position = 0; position < group.calls.length; position++) {
      const result = group.resultIndexes[position] as number;
      if (result >= 0) {
        if (!keepOrder) output[written++] = messages[result];
        continue;
      }
      const call = group.calls[position];
      const id = toolCallIdOf(call) as string;
      const name = toolCallNameOf(call) ?? UNKNOWN_TOOL_NAME;
      output[written] = log.placeholder(ai, group.aiIndex, call, id, name, written);
      written++;
    }
    copied = keepOrder ? group.aiIndex + 1 : group.end;
  }
  for (let index = copied; index < messages.length; index++) output[written++] = messages[index];
  return { messages: output as Array<T | ToolMessage>, repairs };
}

function rebuild<T>(
  messages: readonly T[],
  start: number,
  from: number,
  policy: RepairPolicy,
  context: RepairContext | undefined,
): RepairResult<T> {
  const { entries, fates, renamed, needsRepair } = analyze(messages, start, from, policy);
  const resultAt = (index: number) => {
    const id = renamed.get(index);
    return id === undefined ? messages[index] : withAnsweredId(messages[index], id);
  };
  if (!needsRepair) return { messages: messages as T[], repairs: NO_REPAIRS };

  const output: unknown[] = messages.slice(0, from);
  const repairs: ToolCallRepair[] = [];
  const log = new RepairLog(policy, context, repairs);
  const emitPlaceholder = (slot: CallSlot) =>
    output.push(
      log.placeholder(
        slot.owner.message,
        slot.owner.index,
        slot.call,
        slot.id,
        slot.name,
        output.length,
      ),
    );

  for (let index = from; index < messages.length; index++) {
    const fate = fates.get(index);
    const message = messages[index];
    if (fate === Fate.Dropped) {
      log.record({
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
      output.push(resultAt(index));
      continue;
    }
    const assignedIds = entry.assignedIds ?? NO_ASSIGNED_IDS;
    for (const [position, id] of assignedIds) {
      log.record({
        kind: "id_assigned",
        toolCallId: id,
        toolName: toolCallNameOf(toolCallAt(message, position)) ?? UNKNOWN_TOOL_NAME,
        callIndex: index,
        outputIndex: output.length,
      });
    }
    if (entry.unlisted) {
      // Every call is listed in the copy; those that were not are recorded, in call order.
      const listed = (message as { tool_calls?: unknown }).tool_calls;
      const listedCount = Array.isArray(listed) ? listed.length : 0;
      for (const slot of entry.slots) {
        if (slot.position < listedCount) continue;
        log.record({
          kind: "call_listed",
          toolCallId: slot.id,
          toolName: slot.name,
          callIndex: index,
          outputIndex: output.length,
        });
      }
    }
    output.push(withListedToolCalls(message, assignedIds));

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
        log.record({
          kind: "result_moved",
          toolCallId: slot.id,
          toolName: slot.name,
          callIndex: index,
          resultIndex: slot.answeredBy,
          outputIndex: output.length,
        });
      }
      fates.set(slot.answeredBy, Fate.Consumed);
      output.push(resultAt(slot.answeredBy));
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
  id: string,
  name: string,
  reason: PlaceholderReason,
  text: string,
  markSynthetic: boolean,
): ToolMessage {
  const fields: ConstructorParameters<typeof ToolMessage>[0] & object = {
    content: text,
    tool_call_id: id,
    name,
    status: "error",
  };
  if (markSynthetic) {
    fields.response_metadata = { [SYNTHETIC_MARKER]: true, [SYNTHETIC_REASON_KEY]: reason };
  }
  return new ToolMessage(fields);
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
