/**
 * The careful analysis: which result answers which call, from the first message the clean path
 * could not vouch for, and so what becomes of every message of the window (kept, moved, dropped,
 * copied with a new id or another kind of output). It decides; the rebuild writes.
 */
import { answeredToolCallIdOf, MessageKind, messageKindOf, toolMessageNameOf } from "./messages.js";
import type { RepairPolicy } from "./policy.js";
import { type AiEntry, AssignedIds, type CallSlot, collectCalls, ownSlot } from "./repair-calls.js";
import { answerKindOf, type CallKind, type RepairTarget, resultKindOf } from "./wire.js";

/**
 * Whether a result that answers no call is kept where it is: with `orphans: "keep"`, and with a
 * window that leaves messages out, since its call may lie before the window.
 */
export function keepsUnmatchedResults(policy: RepairPolicy, start: number): boolean {
  return policy.orphans === "keep" || start > 0;
}

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
export const Fate = { Consumed: 1, Dropped: 2 } as const;
/** What becomes of a message in the window: {@link Fate}'s values. */
export type Fate = (typeof Fate)[keyof typeof Fate];

/** What the analysis decided: what becomes of each message, and whether anything needs repair. */
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
export function analyze(
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
      nameAfterResult(entry, slot, messages);
      const kind = answerKindOf(slot.wire.kind, target);
      if (kind === undefined || resultKindOf(messages[slot.answeredBy]) === kind) continue;
      retyped.set(slot.answeredBy, kind);
      needsRepair = true;
    }
  }
  return { entries, fates, renamed, retyped, needsRepair };
}

/**
 * A call without a name takes the name of the result that answers it, where that result has one:
 * the providers that pair a response with its call by name (Gemini, Mistral) then see one name.
 */
function nameAfterResult(entry: AiEntry, slot: CallSlot, messages: readonly unknown[]): void {
  if (slot.wire.name !== undefined || slot.wire.kind === "computer") return;
  const name = toolMessageNameOf(messages[slot.answeredBy]);
  if (name === undefined) return;
  slot.name = name;
  const change = entry.changes.get(slot.wireIndex);
  if (change?.name !== undefined) entry.changes.set(slot.wireIndex, { ...change, name });
}

function isClaimed(entries: ReadonlyMap<number, AiEntry>, result: number): boolean {
  for (const entry of entries.values()) {
    for (const slot of entry.slots) if (slot.answeredBy === result) return true;
  }
  return false;
}

/**
 * Pairs the results without an id in an AI message's group with its calls that had none: in
 * order when there are as many of each (ToolNode answers in call order); otherwise each result,
 * in order, answers the first call still unanswered that has its name, else the first that has
 * no name (or any, for a result without a name). An ambiguous result is so paired, never lost;
 * returns the results left unpaired, which no call can take.
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
    const open = (slot: CallSlot) => slot.answeredBy < 0;
    const call =
      calls.find((slot) => open(slot) && slot.name === name) ??
      calls.find((slot) => open(slot) && (name === undefined || slot.wire.name === undefined));
    if (call === undefined) left.push(result);
    else call.answeredBy = result;
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
