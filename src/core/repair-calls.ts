/**
 * The calls of the AI messages in a history as the repair reads them: one slot per call the
 * target's client sends, each with an id of its own and a name, and what answers it. The ids given
 * to calls that had none are made here, unique across the window.
 */
import { answeredToolCallIdOf, MessageKind, messageKindOf } from "./messages.js";
import { type Mutable, UNKNOWN_TOOL_NAME } from "./repair-log.js";
import {
  type CallChange,
  COMPUTER_TOOL_NAME,
  isUnsynced,
  lacksName,
  type RepairTarget,
  readWire,
  sentCalls,
  type WireCall,
  type WireView,
} from "./wire.js";

// The prefix of the ids given to calls that had none; the rest is `<message index>_<call index>`.
const ASSIGNED_ID_PREFIX = "tcr_";

/** One distinct call of an AI message, as the target's client sends it, and what answers it. */
export interface CallSlot {
  readonly owner: AiEntry;
  /** Its index in the owner's `view.calls`. */
  readonly wireIndex: number;
  readonly wire: WireCall;
  readonly id: string;
  /** The id the call had when another call of its message had it first, and it was given `id`. */
  readonly repeatedId: string | undefined;
  /** Whether the call had no id at all (so a result without one may answer it). */
  readonly idless: boolean;
  /** Its name; for a call without one, its result's name once a result that has one answers it. */
  name: string;
  /** Input index of the tool message that answers it, or -1. */
  answeredBy: number;
  /** Whether that tool message stands somewhere other than the group right after the call. */
  misplaced: boolean;
  /** The next call made later with the same id (ids reused across turns), oldest first. */
  laterWithSameId: CallSlot | undefined;
  /** On the first slot of such a chain: its last slot, where the next reuse is appended. */
  lastWithSameId: CallSlot;
}

/** An AI message that makes calls, and the slots of the calls its target's client sends. */
export interface AiEntry {
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
 * Deterministic ids for calls that have none: `tcr_<message index>_<call index>`, with a `_1`,
 * `_2`, ... suffix when a call or result in the window already uses it (say, an id assigned by an
 * earlier repair that was persisted, and has shifted since).
 */
export class AssignedIds {
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
export function collectCalls(
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
export function ownSlot(entry: AiEntry, id: string): CallSlot | undefined {
  const { slots } = entry;
  if (slots.length <= LINEAR_LOOKUP_LIMIT) {
    for (const slot of slots) if (slot.id === id) return slot;
    return undefined;
  }
  // Built once; collectCalls adds each later slot to it.
  entry.slotsById ??= new Map(slots.map((slot) => [slot.id, slot]));
  return entry.slotsById.get(id);
}
