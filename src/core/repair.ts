/**
 * The repair engine: pure and synchronous. One allocation-free pass decides whether the history is
 * well formed; only when it is not does a second pass match results to calls and rebuild it.
 */
import { ToolCallResilienceOptionsError } from "./errors.js";
import { shieldHistory } from "./hostile.js";
import { type ExpandedHistory, expandHumanResults } from "./human-results.js";
import type { PlaceholderReason } from "./locales.js";
import {
  answeredToolCallIdOf,
  copyWith,
  MessageKind,
  messageKindOf,
  toolMessageNameOf,
  withAnsweredId,
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
import type { ToolMessageFactory } from "./tool-message.js";
import { firstUnsoundIndex } from "./well-formed.js";
import {
  answerKindOf,
  type CallChange,
  type CallKind,
  COMPUTER_TOOL_NAME,
  hasInvalidArguments,
  hasInvalidListedArguments,
  isUnsynced,
  lacksName,
  REPAIR_TARGETS,
  type RepairTarget,
  readWire,
  resultKindOf,
  sentCalls,
  type WireCall,
  type WireView,
  withWireChanges,
} from "./wire.js";

/** What a repair did. */
export type RepairKind =
  | "placeholder_inserted"
  | "result_moved"
  | "orphan_dropped"
  | "id_assigned"
  | "name_assigned"
  | "call_listed";

/** One change the engine made to the history. */
export interface ToolCallRepair {
  readonly kind: RepairKind;
  /** The id of the call concerned (for `id_assigned`, the id it was given). */
  readonly toolCallId: string;
  /** The tool's name (for `name_assigned`, the name it was given), or `"unknown"`. */
  readonly toolName: string;
  /** Why a placeholder was needed; only on `placeholder_inserted`. */
  readonly reason?: PlaceholderReason;
  /** Index, in the input, of the AI message that made the call (absent for orphans). */
  readonly callIndex?: number;
  /**
   * Index, in the input, of the tool message moved or dropped (for a result that stood as a
   * `tool_result` block, of the human message that held it).
   */
  readonly resultIndex?: number;
  /** Index, in the returned messages, of the inserted, moved or copied message (absent for drops). */
  readonly outputIndex?: number;
  /** Set when a placeholder function failed and the catalog text was used instead. */
  readonly placeholderError?: unknown;
}

/**
 * What the engine returns, for a history of `M`: the messages given, copies of them, and the tool
 * messages it made. {@link RepairResult} is this for LangChain messages.
 */
export interface HistoryRepair<M> {
  /**
   * The input array itself when nothing needed repair, otherwise a new array: the input's
   * messages, copies of AI messages given ids, and placeholder tool messages.
   */
  readonly messages: M[];
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
  /**
   * The client this call's history is repaired for, overriding the policy's `target`: what the
   * attachments read from the request's model.
   */
  readonly target?: RepairTarget;
}

/**
 * The name a placeholder carries when its call has none, and the name a call without one is given
 * on the copy that is sent.
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

/**
 * The screenshot a computer call's placeholder answers with: a transparent 1×1 PNG. The Responses
 * API takes nothing but an image as a `computer_call_output`, so the placeholder's text cannot
 * travel there; the model sees an empty screen and looks again.
 */
export const BLANK_SCREENSHOT =
  "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=";

const NO_REPAIRS: readonly ToolCallRepair[] = Object.freeze([]);

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/**
 * The engine: {@link repairToolCalls} with the tool messages it writes made by `make`, for
 * histories of any message library (the native-format adapters pass plain objects).
 *
 * @param messages - the history: messages LangChain-shaped, or plain objects of the same shape
 * @param make - makes each tool message the engine writes
 * @param policy - a policy from {@link createRepairPolicy}, or options to validate on the spot
 * @param context - per-call settings, such as the locale of this request
 * @throws {ToolCallResilienceOptionsError} only when `policy` is given as invalid options, or the
 *   context names an unknown target
 *
 * @example
 * ```ts
 * repairHistory(history, plainToolMessage).messages; // placeholders as { type: "tool", ... }
 * ```
 */
export function repairHistory<T, R>(
  messages: readonly T[],
  make: ToolMessageFactory<R>,
  policy?: RepairPolicy | RepairOptions,
  context?: RepairContext,
): HistoryRepair<T | R> {
  const resolved = resolvePolicy(policy);
  const target = targetOf(resolved, context);
  try {
    // A revoked proxy throws even here.
    if (!Array.isArray(messages)) return { messages: messages as T[], repairs: NO_REPAIRS };
    return repairReadable(messages, resolved, context, target, make) as HistoryRepair<T | R>;
  } catch {
    // An entry that throws when read (a getter, a proxy): it is no message any client can send,
    // so it is repaired around as junk. Nothing in a history makes the engine throw.
    return repairAroundUnreadable(messages, resolved, context, target, make) as HistoryRepair<
      T | R
    >;
  }
}

function targetOf(policy: RepairPolicy, context: RepairContext | undefined): RepairTarget {
  const target = context?.target;
  if (target === undefined) return policy.target;
  // A list of four: cheaper to scan than a set's hash, on every model call.
  if ((REPAIR_TARGETS as readonly unknown[]).includes(target)) return target;
  throw new ToolCallResilienceOptionsError(
    [
      {
        path: "target",
        message: `expected one of ${REPAIR_TARGETS.map((name) => `"${name}"`).join(", ")}`,
      },
    ],
    { subject: "repair context" },
  );
}

function repairReadable<T>(
  messages: readonly T[],
  resolved: RepairPolicy,
  context: RepairContext | undefined,
  target: RepairTarget,
  make: ToolMessageFactory,
): HistoryRepair<unknown> {
  const start = windowStart(messages.length, resolved.window);
  const keepUnmatched = keepsUnmatchedResults(resolved, start);
  const unsound = firstUnsoundIndex(messages, start, keepUnmatched, target);
  if (unsound === messages.length) return { messages: messages as unknown[], repairs: NO_REPAIRS };
  const missing = keepUnmatched ? undefined : findMissingResults(messages, unsound, target);
  if (missing !== undefined) {
    return insertPlaceholders(messages, missing, resolved, context, target, make);
  }
  // A result kept where it stood (a stray the clean path let pass) may be the one a later call
  // lacks: the analysis then reads the whole window.
  const from = keepUnmatched ? start : unsound;
  return rebuild(messages, start, from, resolved, context, target, make);
}

/**
 * The repair of a history with unreadable entries: each is read as junk and stays where it is.
 * If even that throws, the history is passed on as it is.
 */
function repairAroundUnreadable<T>(
  messages: readonly T[],
  resolved: RepairPolicy,
  context: RepairContext | undefined,
  target: RepairTarget,
  make: ToolMessageFactory,
): HistoryRepair<unknown> {
  try {
    const shielded = shieldHistory(messages);
    if (shielded === undefined) return { messages: messages as unknown[], repairs: NO_REPAIRS };
    const result = repairReadable(shielded.messages, resolved, context, target, make);
    if (result.messages === shielded.messages) {
      return { messages: messages as unknown[], repairs: NO_REPAIRS };
    }
    return { messages: shielded.restore(result.messages), repairs: result.repairs };
  } catch {
    return { messages: messages as unknown[], repairs: NO_REPAIRS };
  }
}

/**
 * The engine without its shortcuts: the careful analysis of the whole window, every time. Not part
 * of the public surface; the tests hold {@link repairHistory} to giving the same result.
 *
 * @example
 * ```ts
 * expect(repairHistory(history, make)).toEqual(repairHistoryCarefully(history, make));
 * ```
 */
export function repairHistoryCarefully<T, R>(
  messages: readonly T[],
  make: ToolMessageFactory<R>,
  policy?: RepairPolicy | RepairOptions,
  context?: RepairContext,
): HistoryRepair<T | R> {
  const resolved = resolvePolicy(policy);
  const start = windowStart(messages.length, resolved.window);
  const target = targetOf(resolved, context);
  return rebuild(messages, start, start, resolved, context, target, make) as HistoryRepair<T | R>;
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

/** One distinct call of an AI message, as the target's client sends it, and what answers it. */
interface CallSlot {
  readonly owner: AiEntry;
  /** Its index in the owner's `view.calls`. */
  readonly wireIndex: number;
  readonly wire: WireCall;
  readonly id: string;
  /** The id the call had when another call of its message had it first, and it was given `id`. */
  readonly repeatedId: string | undefined;
  /** Whether the call had no id at all (so a result without one may answer it). */
  readonly idless: boolean;
  readonly name: string;
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
  readonly view: WireView;
  /** The distinct calls the target's client sends, in call order. */
  readonly slots: CallSlot[];
  /** New ids and names, by index in `view.calls`; empty when none was needed. */
  readonly changes: Map<number, CallChange>;
  /** Calls to write into the channels that lack them (`"any"` only), by index in `view.calls`. */
  readonly sync: number[];
  /** Whether one of its calls has the id of an earlier one, and so a new id. */
  repeatsIds: boolean;
  /** The slots by id, built only for messages with many calls. */
  slotsById: Map<string, CallSlot> | undefined;
}

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
  /**
   * Results that answer their call with an output of another type than the target's client sends
   * it as (a custom or computer call on the Responses API), by input index: copied with the kind.
   */
  readonly retyped: Map<number, CallKind>;
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
  target: RepairTarget,
): Analysis {
  const entries = new Map<number, AiEntry>();
  const fates = new Map<number, Fate>();
  const renamed = new Map<number, string>();
  const retyped = new Map<number, CallKind>();
  const unanswered = new UnansweredCalls();
  const ids = new AssignedIds(messages, start);
  const keepUnmatched = keepsUnmatchedResults(policy, start);
  let needsRepair = false;
  let groupOwner: AiEntry | undefined;
  /** Results without an id in the current group, waiting to be paired with its id-less calls. */
  let idlessResults: number[] = [];
  /** Results that answer no call (yet), in order. */
  const unmatched: number[] = [];
  const closeGroup = () => {
    if (idlessResults.length === 0) return;
    for (const result of pairIdlessResults(messages, groupOwner, idlessResults)) {
      unmatched.push(result);
    }
    for (const slot of groupOwner?.slots ?? []) {
      if (slot.idless && slot.answeredBy >= 0) renamed.set(slot.answeredBy, slot.id);
    }
    idlessResults = [];
  };

  for (let index = from; index < messages.length; index++) {
    const message = messages[index];
    const kind = messageKindOf(message);
    if (kind === MessageKind.Ai) {
      closeGroup();
      groupOwner = collectCalls(message, index, ids, target);
      if (groupOwner === undefined) continue;
      entries.set(index, groupOwner);
      if (groupOwner.changes.size > 0 || groupOwner.sync.length > 0) needsRepair = true;
      for (const slot of groupOwner.slots) unanswered.add(slot);
      continue;
    }
    if (kind !== MessageKind.Tool) {
      closeGroup();
      groupOwner = undefined;
      continue;
    }
    const id = answeredToolCallIdOf(message);
    if (id === undefined) {
      if (groupOwner?.slots.some((slot) => slot.idless)) idlessResults.push(index);
      else unmatched.push(index);
      continue;
    }
    const slot = claimCall(id, groupOwner, unanswered);
    if (slot === undefined) {
      unmatched.push(index);
      continue;
    }
    slot.answeredBy = index;
    slot.misplaced = slot.owner !== groupOwner;
    if (slot.id !== id) renamed.set(index, slot.id);
    if (slot.misplaced && policy.misplaced === "regroup") {
      fates.set(index, Fate.Consumed);
      needsRepair = true;
    }
  }
  closeGroup();
  // A result before its call is moved after it; never with `misplaced: "keep"`, where it could
  // not answer the call where it stands, nor with a window that leaves messages out, where its
  // call may lie before the window.
  if (start === 0 && policy.misplaced === "regroup") {
    for (const slot of claimEarlyResults(messages, entries, unmatched)) {
      fates.set(slot.answeredBy, Fate.Consumed);
      needsRepair = true;
    }
  }
  for (const result of unmatched) {
    if (keepUnmatched || fates.has(result) || isClaimed(entries, result)) continue;
    fates.set(result, Fate.Dropped);
    needsRepair = true;
  }
  for (const entry of entries.values()) {
    for (const slot of entry.slots) {
      if (slot.answeredBy < 0) {
        needsRepair = true;
        continue;
      }
      const kind = answerKindOf(slot.wire.kind, target);
      if (kind === undefined || resultKindOf(messages[slot.answeredBy]) === kind) continue;
      retyped.set(slot.answeredBy, kind);
      needsRepair = true;
    }
  }
  return { entries, fates, renamed, retyped, needsRepair };
}

function isClaimed(entries: ReadonlyMap<number, AiEntry>, result: number): boolean {
  for (const entry of entries.values()) {
    for (const slot of entry.slots) if (slot.answeredBy === result) return true;
  }
  return false;
}

/**
 * Pairs the results without an id in an AI message's group with its calls that had none: in
 * order when there are as many of each (ToolNode answers in call order), otherwise by tool name
 * where exactly one call has the result's name. Returns the results left unpaired.
 */
function pairIdlessResults(
  messages: readonly unknown[],
  owner: AiEntry | undefined,
  results: readonly number[],
): number[] {
  const calls = owner?.slots.filter((slot) => slot.idless && slot.answeredBy < 0) ?? [];
  if (calls.length === results.length) {
    results.forEach((result, position) => {
      (calls[position] as CallSlot).answeredBy = result;
    });
    return [];
  }
  const left: number[] = [];
  for (const result of results) {
    const name = toolMessageNameOf(messages[result]);
    const named = calls.filter((slot) => slot.answeredBy < 0 && slot.name === name);
    const sameName = results.filter((other) => toolMessageNameOf(messages[other]) === name);
    if (name !== undefined && named.length === 1 && sameName.length === 1) {
      (named[0] as CallSlot).answeredBy = result;
    } else {
      left.push(result);
    }
  }
  return left;
}

/**
 * Results that stand before their call: a result that answered nothing where it stood answers the
 * later call with its id when that id is on one call and one result of the history alone. Returns
 * the slots so answered (each marked misplaced).
 */
function claimEarlyResults(
  messages: readonly unknown[],
  entries: ReadonlyMap<number, AiEntry>,
  unmatched: readonly number[],
): CallSlot[] {
  if (unmatched.length === 0) return [];
  const callsById = new Map<string, CallSlot[]>();
  for (const entry of entries.values()) {
    for (const slot of entry.slots) {
      if (slot.repeatedId !== undefined || slot.idless) continue;
      const list = callsById.get(slot.id);
      if (list === undefined) callsById.set(slot.id, [slot]);
      else list.push(slot);
    }
  }
  const claimed: CallSlot[] = [];
  let resultCounts: Map<string, number> | undefined;
  for (const result of unmatched) {
    const id = answeredToolCallIdOf(messages[result]);
    if (id === undefined) continue;
    const calls = callsById.get(id);
    if (calls === undefined || calls.length !== 1) continue;
    const slot = calls[0] as CallSlot;
    if (slot.answeredBy >= 0 || slot.owner.index < result) continue;
    resultCounts ??= countResults(messages);
    if (resultCounts.get(id) !== 1) continue;
    slot.answeredBy = result;
    slot.misplaced = true;
    claimed.push(slot);
  }
  return claimed;
}

function countResults(messages: readonly unknown[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (let index = 0; index < messages.length; index++) {
    if (messageKindOf(messages[index]) !== MessageKind.Tool) continue;
    const id = answeredToolCallIdOf(messages[index]);
    if (id !== undefined) counts.set(id, (counts.get(id) ?? 0) + 1);
  }
  return counts;
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
      if (messageKindOf(message) !== MessageKind.Ai) continue;
      for (const call of readWire(message)?.calls ?? []) {
        if (call.id !== undefined) taken.add(call.id);
      }
    }
    this.#taken = taken;
    return taken;
  }
}

/**
 * The calls of an AI message that the target's client sends, each with an id of its own and a
 * name: a call without an id, or with the id of an earlier call of the same message, is given a
 * new one (providers that count calls, like Gemini, want a result for each of two calls that
 * share an id, and one result cannot name both); a call a channel sends without a name is given
 * one. For `"any"`, calls that not every client sends are marked to be written where they lack.
 */
function collectCalls(
  ai: unknown,
  index: number,
  ids: AssignedIds,
  target: RepairTarget,
): AiEntry | undefined {
  const view = readWire(ai);
  if (view === undefined || view.calls.length === 0) return undefined;
  const sent = sentCalls(view, target, ai);
  if (sent.length === 0) return undefined;
  const entry: AiEntry = {
    index,
    message: ai,
    view,
    slots: [],
    changes: new Map(),
    sync: [],
    slotsById: undefined,
    repeatsIds: false,
  };
  for (const wire of sent) {
    const wireIndex = view.calls.indexOf(wire);
    let id = wire.id;
    let repeatedId: string | undefined;
    if (id !== undefined && ownSlot(entry, id) !== undefined) {
      repeatedId = id;
      entry.repeatsIds = true;
      id = undefined;
    }
    const change: Mutable<CallChange> = {};
    if (id === undefined) {
      id = ids.next(index, wireIndex);
      change.id = id;
    }
    const name = wire.name ?? (wire.kind === "computer" ? COMPUTER_TOOL_NAME : UNKNOWN_TOOL_NAME);
    if (lacksName(ai, view, wire, target)) change.name = name;
    if (change.id !== undefined || change.name !== undefined) entry.changes.set(wireIndex, change);
    if (target === "any" && isUnsynced(view, wire, ai)) entry.sync.push(wireIndex);
    const slot: CallSlot = {
      owner: entry,
      wireIndex,
      wire,
      id,
      repeatedId,
      idless: wire.id === undefined,
      name,
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
  readonly #target: RepairTarget;
  readonly #make: ToolMessageFactory;
  readonly #repairs: ToolCallRepair[];
  #written = 0;
  /** The locale of this call, resolved at the first placeholder. */
  #locale: string | undefined;
  #localeResolved = false;

  /**
   * Writes to `repairs` from its start: an empty list, or one made to the length it will reach
   * (an empty list that is pushed to reserves room for 17 at once).
   */
  constructor(
    policy: RepairPolicy,
    context: RepairContext | undefined,
    target: RepairTarget,
    make: ToolMessageFactory,
    repairs: ToolCallRepair[],
  ) {
    this.#policy = policy;
    this.#context = context;
    this.#target = target;
    this.#make = make;
    this.#repairs = repairs;
  }

  record(repair: ToolCallRepair): void {
    this.#repairs[this.#written++] = repair;
  }

  /**
   * The placeholder for the call `id` (tool `name`, of `kind`) of the AI message at `aiIndex` in
   * the input, which the caller writes at `outputIndex`. Given field by field: this runs for every
   * dangling call, where an object per call showed.
   */
  placeholder(
    aiIndex: number,
    id: string,
    name: string,
    reason: PlaceholderReason,
    kind: CallKind,
    outputIndex: number,
  ): unknown {
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
    const answer = answerKindOf(kind, this.#target) ?? "function";
    return createPlaceholder(id, name, reason, text, answer, this.#policy, this.#make);
  }
}

/** A copy of a result carrying the markers of this kind of output, and no others. */
function withResultKind(message: unknown, kind: CallKind): unknown {
  const fields = message as Record<string, unknown>;
  const {
    customTool: _custom,
    type: _type,
    ...kwargs
  } = (fields.additional_kwargs ?? {}) as Record<string, unknown>;
  if (kind === "custom") kwargs.customTool = true;
  if (kind === "computer") kwargs.type = "computer_call_output";
  return copyWith(fields, { additional_kwargs: kwargs });
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
  target: RepairTarget,
  make: ToolMessageFactory,
): HistoryRepair<unknown> {
  const first = groups[0];
  if (first === undefined) return { messages: messages as unknown[], repairs: NO_REPAIRS };
  // The output's length is known: written into a list of that length, which measured faster
  // than a copy of the part before the first group that then grows.
  let missing = 0;
  for (const group of groups) missing += group.missing;
  const output: unknown[] = new Array(messages.length + missing);
  let written = 0;
  const repairs: ToolCallRepair[] = new Array(missing);
  const log = new RepairLog(policy, context, target, make, repairs);
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
      const call = group.calls[position] as Record<string, unknown>;
      const id = call.id as string;
      // The shortcut's calls have ids and names (missing-results.ts checks), and make function
      // calls (text content).
      output[written] = log.placeholder(
        group.aiIndex,
        id,
        call.name as string,
        hasInvalidListedArguments(ai, call, id) ? "invalid_arguments" : "interrupted",
        "function",
        written,
      );
      written++;
    }
    copied = keepOrder ? group.aiIndex + 1 : group.end;
  }
  for (let index = copied; index < messages.length; index++) output[written++] = messages[index];
  return { messages: output, repairs };
}

function rebuild<T>(
  input: readonly T[],
  start: number,
  from: number,
  policy: RepairPolicy,
  context: RepairContext | undefined,
  target: RepairTarget,
  make: ToolMessageFactory,
): HistoryRepair<unknown> {
  // Anthropic results in human messages are read, and written, as tool messages.
  const expanded: ExpandedHistory | undefined = expandHumanResults(input, from, make);
  const messages: readonly unknown[] = expanded?.messages ?? input;
  const inputIndexOf = (index: number) => expanded?.origin[index] ?? index;
  const isExtracted = (message: unknown) => expanded?.extracted.has(message) === true;
  const analysis = analyze(messages, start, from, policy, target);
  const { entries, fates, renamed, retyped } = analysis;
  const resultAt = (index: number) => {
    const id = renamed.get(index);
    const kind = retyped.get(index);
    const result = id === undefined ? messages[index] : withAnsweredId(messages[index], id);
    return kind === undefined ? result : withResultKind(result, kind);
  };
  if (!analysis.needsRepair && expanded === undefined) {
    return { messages: input as T[], repairs: NO_REPAIRS };
  }

  const output: unknown[] = messages.slice(0, from);
  const repairs: ToolCallRepair[] = [];
  const log = new RepairLog(policy, context, target, make, repairs);
  const emitPlaceholder = (slot: CallSlot) =>
    output.push(
      log.placeholder(
        inputIndexOf(slot.owner.index),
        slot.id,
        slot.name,
        hasInvalidArguments(slot.owner.message, slot.wire) ? "invalid_arguments" : "interrupted",
        slot.wire.kind,
        output.length,
      ),
    );
  /** Emits a result; one that stood as a block in a human message is recorded as moved. */
  const emitResult = (index: number, slot: CallSlot | undefined) => {
    const message = messages[index];
    if ((slot?.misplaced === true && policy.misplaced === "regroup") || isExtracted(message)) {
      log.record({
        kind: "result_moved",
        toolCallId: slot?.id ?? answeredToolCallIdOf(message) ?? "",
        toolName: slot?.name ?? toolMessageNameOf(message) ?? UNKNOWN_TOOL_NAME,
        ...(slot === undefined ? {} : { callIndex: inputIndexOf(slot.owner.index) }),
        resultIndex: inputIndexOf(index),
        outputIndex: output.length,
      });
    }
    output.push(resultAt(index));
  };

  for (let index = from; index < messages.length; index++) {
    const fate = fates.get(index);
    const message = messages[index];
    if (fate === Fate.Dropped) {
      log.record({
        kind: "orphan_dropped",
        toolCallId: answeredToolCallIdOf(message) ?? "",
        toolName: toolMessageNameOf(message) ?? UNKNOWN_TOOL_NAME,
        resultIndex: inputIndexOf(index),
      });
      continue;
    }
    if (fate === Fate.Consumed) continue;
    const entry = entries.get(index);
    if (entry === undefined) {
      if (isExtracted(message)) emitResult(index, undefined);
      else output.push(resultAt(index));
      continue;
    }
    const written = writeCalls(entry, log, inputIndexOf(index), output.length);
    output.push(written);

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
      fates.set(slot.answeredBy, Fate.Consumed);
      emitResult(slot.answeredBy, slot);
    }
  }
  return { messages: output, repairs };
}

/**
 * The AI message as it is sent: with new ids and names written to every channel of each call,
 * and (for `"any"`) every call written where a client lacked it. Records those repairs.
 */
function writeCalls(
  entry: AiEntry,
  log: RepairLog,
  callIndex: number,
  outputIndex: number,
): unknown {
  const { view } = entry;
  for (const slot of entry.slots) {
    const change = entry.changes.get(slot.wireIndex);
    if (change?.id !== undefined) {
      log.record({
        kind: "id_assigned",
        toolCallId: change.id,
        toolName: slot.name,
        callIndex,
        outputIndex,
      });
    }
    if (change?.name !== undefined) {
      log.record({
        kind: "name_assigned",
        toolCallId: slot.id,
        toolName: change.name,
        callIndex,
        outputIndex,
      });
    }
  }
  const written = withWireChanges(entry.message, view, entry.changes, entry.sync, copyWith);
  for (const wireIndex of written.listed) {
    const slot = entry.slots.find((candidate) => candidate.wireIndex === wireIndex);
    log.record({
      kind: "call_listed",
      toolCallId: slot?.id ?? "",
      toolName: slot?.name ?? UNKNOWN_TOOL_NAME,
      callIndex,
      outputIndex,
    });
  }
  return written.message;
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

/**
 * A placeholder tool message. For the Responses API, a custom tool call's placeholder carries the
 * marker ChatOpenAI sends as a `custom_tool_call_output` (`additional_kwargs.customTool`), and a
 * computer call's the one it sends as a `computer_call_output` (`additional_kwargs.type`), with a
 * blank screenshot, the only content such an output can have.
 *
 * Its fields are one object literal with every key, never an object that grows afterwards: V8
 * gives a grown object a hidden class of its own, drops it at the next full collection once no
 * placeholder holds it, and makes a new one. The code that reads placeholders (`make`, such as
 * ToolMessage's constructor, and ours) then meets a new class after every collection and ends up
 * on its slow, generic path (measured: a repaired 10-message call went from 0.55 to 0.8 µs for good).
 */
function createPlaceholder(
  id: string,
  name: string,
  reason: PlaceholderReason,
  text: string,
  answerKind: CallKind,
  policy: RepairPolicy,
  make: ToolMessageFactory,
): unknown {
  return make({
    content: answerKind === "computer" ? BLANK_SCREENSHOT : text,
    tool_call_id: id,
    name,
    status: "error",
    additional_kwargs:
      answerKind === "custom"
        ? { customTool: true }
        : answerKind === "computer"
          ? { type: "computer_call_output" }
          : {},
    response_metadata: policy.markSynthetic ? syntheticMetadata(reason) : {},
  });
}

/** The metadata that marks a placeholder: a literal with both keys (see {@link createPlaceholder}). */
function syntheticMetadata(reason: PlaceholderReason): Record<string, unknown> {
  return { synthetic: true, synthetic_reason: reason } satisfies Record<
    typeof SYNTHETIC_MARKER | typeof SYNTHETIC_REASON_KEY,
    unknown
  >;
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
