/**
 * The engine's clean path: how far a history is well formed. It runs before every model call, so
 * it allocates nothing and reads each message about as often as a plain loop over the history
 * would. It may be cautious: a group it cannot vouch for cheaply (reused ids within one message,
 * results in another order than their calls with duplicates) is reported as where the careful
 * analysis must start, and that analysis decides.
 */
import {
  answeredToolCallIdOf,
  hasUnlistedCalls,
  isToolCallEntry,
  MessageKind,
  messageKindOf,
  toolCallAt,
  toolCallCountOf,
  toolCallIdOf,
} from "./messages.js";

type Fields = Record<string, unknown>;

/**
 * Above this many calls in one message, a group is checked with a set instead of nested loops, and
 * the shortcut of `missing-results.ts` leaves it to the careful analysis.
 */
export const NESTED_LOOP_LIMIT = 32;

/**
 * The index of the first message from `start` on where the history may break the tool-call
 * protocol, or `messages.length` when it does not: every AI message's calls are answered by the
 * tool messages directly after it, once each, and every one of its calls is listed in `tool_calls`
 * with an id of its own. A tool message that answers no call of its group (a stray) is accepted
 * only with `keepStrays`; otherwise its index, or its group's, is returned.
 *
 * Everything before the returned index is well formed, and no later message can change that:
 * results only ever answer calls made before them, and every call before the index is answered.
 *
 * @example
 * ```ts
 * firstUnsoundIndex([human, aiCalls("c1"), toolResult("c1")], 0, false); // 3: well formed
 * firstUnsoundIndex([human, aiCalls("c1"), human], 0, false); // 1: c1 has no result
 * ```
 */
export function firstUnsoundIndex(
  messages: readonly unknown[],
  start: number,
  keepStrays: boolean,
): number {
  // One loop with the usual fields read directly: it runs for every message before every model
  // call, where a helper call or a second read per message shows (BENCHMARKS.md). Anything
  // unusual goes to messageKindOf and the careful group check.
  const end = messages.length;
  let index = start;
  // The last group vouched for by its results in call order, and where its results end.
  let lastGroup = -1;
  let lastGroupEnd = -1;
  while (index < end) {
    const message = messages[index] as Fields | null | undefined;
    if (message == null) {
      index++;
      continue;
    }
    const type = message.type;
    if (type !== "ai") {
      if (type === "human" || type === "system") {
        index++;
        continue;
      }
      const kind = type === "tool" ? MessageKind.Tool : messageKindOf(message);
      if (kind === MessageKind.Tool && !keepStrays)
        return index === lastGroupEnd ? lastGroup : index;
      if (kind !== MessageKind.Ai) {
        index++;
        continue;
      }
    }
    const calls = message.tool_calls as readonly unknown[];
    const hasBlocks = Array.isArray(message.content);
    // Calls listed in `tool_calls` alone: with content blocks, calls may also stand there.
    const listedOnly = Array.isArray(calls) && calls.length > 0 && !hasBlocks;
    if (!listedOnly && !hasBlocks) {
      // No listed calls and no content blocks: an answer, unless raw calls make calls after all.
      // A tool message after it answers nothing, and the loop treats it as it would after a human.
      const raw = (message.additional_kwargs as Fields | null | undefined)?.tool_calls;
      if (!(Array.isArray(raw) && raw.length > 0)) {
        index++;
        continue;
      }
    }
    const groupStart = index + 1;
    if (listedOnly) {
      const answeredUpTo = resultsInCallOrder(messages, calls, groupStart, end);
      if (answeredUpTo !== -1) {
        // Every call answered in order right after it. A further tool message is a stray or a
        // second answer: the loop accepts it with keepStrays, or reports this group.
        lastGroup = index;
        index = answeredUpTo;
        lastGroupEnd = answeredUpTo;
        continue;
      }
    }
    let groupEnd = groupStart;
    while (groupEnd < end && isToolMessage(messages[groupEnd])) groupEnd++;
    const answered =
      listedOnly && calls.length <= NESTED_LOOP_LIMIT
        ? groupAnswersListedCalls(messages, calls, groupStart, groupEnd, keepStrays)
        : groupAnswersCallsAt(messages, message, groupStart, groupEnd, keepStrays);
    if (!answered) return index;
    index = groupEnd;
  }
  return end;
}

/**
 * The common case, checked without a second pass: the tool messages right after an AI message
 * answer its listed calls in call order, each call an object with its own non-empty string id.
 * Returns the index after the last result, or -1 when the group is not of that form.
 */
function resultsInCallOrder(
  messages: readonly unknown[],
  calls: readonly unknown[],
  groupStart: number,
  end: number,
): number {
  const count = calls.length;
  if (count > NESTED_LOOP_LIMIT || groupStart + count > end) return -1;
  let lastCharacters = 0;
  for (let position = 0; position < count; position++) {
    // A junk entry (null, a primitive) has no string id.
    const id = (calls[position] as Fields | null | undefined)?.id;
    if (typeof id !== "string" || id === "") return -1;
    const result = messages[groupStart + position] as Fields | null | undefined;
    if (result?.type !== "tool" || result.tool_call_id !== id) return -1;
    if (count === 1) break;
    const bit = lastCharacterBit(id);
    if ((lastCharacters & bit) !== 0 && madeEarlier(calls, position, id)) return -1;
    lastCharacters |= bit;
  }
  return groupStart + count;
}

/**
 * One of 32 bits for the last character of a non-empty id. The ids of one message nearly always
 * end differently, so an id whose bit no earlier id has set is new without comparing it to them:
 * comparing every pair of ids measured as a fifth of the clean path on parallel calls.
 */
function lastCharacterBit(id: string): number {
  return 1 << (id.charCodeAt(id.length - 1) & 31);
}

/** Whether one of the calls before `position` has this id; each has a non-empty string id. */
function madeEarlier(calls: readonly unknown[], position: number, id: string): boolean {
  for (let earlier = 0; earlier < position; earlier++) {
    if ((calls[earlier] as Fields).id === id) return true;
  }
  return false;
}

/**
 * `messageKindOf(message) === MessageKind.Tool`, with its common cases written out: classifying
 * through messageKindOf here and in the loop made the clean path about 40% slower (BENCHMARKS.md).
 */
function isToolMessage(message: unknown): boolean {
  if (message == null) return false;
  const type = (message as Fields).type;
  if (type === "tool") return true;
  if (type === "ai" || type === "human" || type === "system") return false;
  return messageKindOf(message) === MessageKind.Tool;
}

/**
 * Whether the tool messages from `groupStart` to `groupEnd` answer each of these calls (all of an
 * AI message's calls, from `tool_calls`) once. With as many results as calls, every call answered
 * in the group and no id made twice, each result answers a different call: none is a stray or a
 * second answer. Results usually come in the order of the calls, so the one at the call's
 * position is tried first.
 */
function groupAnswersListedCalls(
  messages: readonly unknown[],
  calls: readonly unknown[],
  groupStart: number,
  groupEnd: number,
  keepStrays: boolean,
): boolean {
  if (!keepStrays && groupEnd - groupStart !== calls.length) return false;
  let junk = false;
  for (let position = 0; position < calls.length; position++) {
    const call = calls[position] as Fields | null;
    if (call === null || typeof call !== "object") {
      // Junk in the list is no call; without strays allowed, the careful analysis counts the calls.
      if (keepStrays) {
        junk = true;
        continue;
      }
      return false;
    }
    const id = call.id;
    if (typeof id !== "string" || id === "") return false;
    // Every message of the group is a tool message, so an object.
    const inOrder = groupStart + position;
    if (inOrder < groupEnd && (messages[inOrder] as Fields).tool_call_id === id) continue;
    let result = groupStart;
    while (result < groupEnd && (messages[result] as Fields).tool_call_id !== id) result++;
    if (result === groupEnd) return false;
  }
  // Two calls with one id need an id each, strays or not; with junk between them the careful
  // analysis tells.
  return calls.length < 2 || (!junk && idsAreDistinct(calls));
}

/** Whether no two calls share an id; each call is known to be an object with a non-empty string id. */
export function idsAreDistinct(calls: readonly unknown[]): boolean {
  let lastCharacters = 0;
  for (let position = 0; position < calls.length; position++) {
    const id = (calls[position] as Fields).id as string;
    const bit = lastCharacterBit(id);
    if ((lastCharacters & bit) !== 0 && madeEarlier(calls, position, id)) return false;
    lastCharacters |= bit;
  }
  return true;
}

/**
 * The same check through the careful readers, call by call: for calls in the raw list or in
 * content blocks, junk entries, and very many calls.
 */
function groupAnswersCallsAt(
  messages: readonly unknown[],
  ai: unknown,
  groupStart: number,
  groupEnd: number,
  keepStrays: boolean,
): boolean {
  if (hasUnlistedCalls(ai)) return false;
  const callCount = toolCallCountOf(ai);
  if (callCount > NESTED_LOOP_LIMIT) {
    return groupAnswersManyCalls(messages, ai, callCount, groupStart, groupEnd, keepStrays);
  }
  for (let position = 0; position < callCount; position++) {
    const call = toolCallAt(ai, position);
    if (!isToolCallEntry(call)) continue;
    const id = toolCallIdOf(call);
    if (id === undefined || !groupHasResult(messages, id, groupStart, groupEnd)) return false;
    if (makesCall(ai, id, position)) return false; // an id made twice
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
    if (id === undefined || unanswered.has(id)) return false;
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

/** Whether one of the first `callCount` calls of this AI message has this id. */
function makesCall(ai: unknown, id: string, callCount: number): boolean {
  for (let call = 0; call < callCount; call++) {
    if (toolCallIdOf(toolCallAt(ai, call)) === id) return true;
  }
  return false;
}
