/**
 * The usual break, found cheaply: AI messages whose calls lack results and have no other fault
 * (the user pressed stop, a run timed out). Such a history is repaired by inserting placeholders
 * in those groups alone, without matching every result of the history to its call. Anything else
 * (a stray or misplaced result, a reused or missing id or name, calls outside `tool_calls`,
 * results in a human message) is left to the careful analysis, which decides every case. The
 * groups it takes make the same calls for every client, so it needs no repair target.
 */
import { hasResultBlocks } from "./human-results.js";
import {
  answeredToolCallIdOf,
  isToolCallEntry,
  MessageKind,
  messageKindOf,
  toolCallIdOf,
} from "./messages.js";
import {
  firstUnsoundIndex,
  idsAreDistinct,
  isToolMessage,
  NESTED_LOOP_LIMIT,
} from "./well-formed.js";
import { isUserTurn, NO_TURN_ORDER, type RepairTarget, type TurnOrder } from "./wire.js";

/** A group whose only fault is calls without results. */
export interface MissingResultsGroup {
  /** Index of the AI message. */
  readonly aiIndex: number;
  /** Index just after the group's last tool message. */
  readonly end: number;
  /** The message's calls, in order: objects with distinct, non-empty ids. */
  readonly calls: readonly unknown[];
  /** For each call, the index of the tool message in the group that answers it, or -1. */
  readonly resultIndexes: readonly number[];
  /** How many of the calls have no result. */
  readonly missing: number;
}

type Fields = Record<string, unknown>;

/**
 * Every group that is not well formed, from `firstUnsound` (the index {@link firstUnsoundIndex}
 * gave) on, when each one's only fault is calls without results; `undefined` as soon as one has
 * any other fault. Stray results must count as faults
 * (the policy drops them, and the window starts at the first message), since a stray could be the
 * misplaced result of a call found missing here.
 *
 * @example
 * ```ts
 * findMissingResults([aiCalls("c1", "c2"), toolResult("c2"), human("Stop")], 0);
 * // [{ aiIndex: 0, end: 2, calls: [c1, c2], resultIndexes: [-1, 1], missing: 1 }]
 * ```
 */
export function findMissingResults(
  messages: readonly unknown[],
  firstUnsound: number,
  target?: RepairTarget,
  turns: TurnOrder = NO_TURN_ORDER,
): MissingResultsGroup[] | undefined {
  // Built as it is found, usually of one group: an empty list that is pushed to reserves room
  // for 17, a repair's largest allocation after the placeholder itself.
  let groups: MissingResultsGroup[] | undefined;
  let unsound = firstUnsound;
  while (unsound < messages.length) {
    const group = missingResultsAt(messages, unsound);
    if (group === undefined) return undefined;
    if (groups === undefined) groups = [group];
    else groups.push(group);
    // A user message right after the group gets its reply from the placeholder path itself.
    const next =
      turns.replyAfterResults && isUserTurn(messages[group.end]) ? group.end + 1 : group.end;
    unsound = firstUnsoundIndex(messages, next, false, target, turns);
  }
  return groups ?? [];
}

function missingResultsAt(
  messages: readonly unknown[],
  aiIndex: number,
): MissingResultsGroup | undefined {
  const ai = messages[aiIndex];
  if (messageKindOf(ai) !== MessageKind.Ai) return undefined;
  const fields = ai as Fields;
  const calls = fields.tool_calls;
  if (!Array.isArray(calls) || calls.length === 0 || calls.length > NESTED_LOOP_LIMIT)
    return undefined;
  // Calls may also stand in content blocks, and Responses output items come with them.
  if (Array.isArray(fields.content)) return undefined;
  for (let position = 0; position < calls.length; position++) {
    const call = calls[position] as Fields | null;
    if (!isToolCallEntry(call) || toolCallIdOf(call) === undefined) return undefined;
    // A call without a name needs one (and a message with text content makes function calls).
    const name = (call as Fields).name;
    if (typeof name !== "string" || name === "") return undefined;
  }
  if (!idsAreDistinct(calls)) return undefined;
  let end = aiIndex + 1;
  while (end < messages.length && isToolMessage(messages[end])) end++;
  // Anthropic results in the human message after the group may answer its calls.
  const next = messages[end] as Fields | null | undefined;
  if (next != null && typeof next.content !== "string" && hasResultBlocks(next)) return undefined;
  // Filled in a loop: `fill` measured as the costliest line of a repair.
  const resultIndexes: number[] = new Array(calls.length);
  for (let position = 0; position < calls.length; position++) resultIndexes[position] = -1;
  for (let result = aiIndex + 1; result < end; result++) {
    const id = answeredToolCallIdOf(messages[result]);
    const position = id === undefined ? -1 : positionOf(calls, id);
    // A stray, or a second answer to one call: it may belong to another call.
    if (position < 0 || (resultIndexes[position] as number) >= 0) return undefined;
    resultIndexes[position] = result;
  }
  // Each result answers a different call, so the calls without one are the rest.
  const missing = calls.length - (end - aiIndex - 1);
  if (missing === 0) return undefined; // Nothing is missing: not ours.
  return { aiIndex, end, calls, resultIndexes, missing };
}

/** The position of the call with this id; every call is an object with a string id here. */
function positionOf(calls: readonly unknown[], id: string): number {
  for (let position = 0; position < calls.length; position++) {
    if ((calls[position] as Fields).id === id) return position;
  }
  return -1;
}
