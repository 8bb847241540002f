/**
 * The engine's clean path: how far a history is well formed. It runs before every model call, so
 * it allocates nothing and reads each message about as often as a plain loop over the history
 * would. It may be cautious: a group it cannot vouch for cheaply (reused ids within one message,
 * results in another order than their calls with duplicates) is reported as where the careful
 * analysis must start, and that analysis decides.
 */
import { leadingResultIdsOf } from "./human-results.js";
import { answeredToolCallIdOf, MessageKind, messageKindOf } from "./messages.js";
import {
  answerKindOf,
  type CallKind,
  isUnsynced,
  isUserTurn,
  lacksName,
  NO_TURN_ORDER,
  type RepairTarget,
  readWire,
  resultKindOf,
  sentCalls,
  type TurnOrder,
  type WireCall,
} from "./wire.js";

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
 * with an id of its own and a name. A tool message that answers no call of its group (a stray) is
 * accepted only with `keepStrays`; otherwise its index, or its group's, is returned. Which calls
 * a message makes is read as `target`'s client sends them (`wire.ts`); for `"any"`, every client
 * must send the same calls. Anthropic `tool_result` blocks in a human message right after calls
 * answer them for `"anthropic"` alone, when they are that message's whole group; for every other
 * target such a group needs a repair. Such blocks anywhere else are not looked for here: they
 * answer no call, and the repair drops them when the history needs one for something else.
 *
 * Where the target's wire wants a reply between tool results and a user message (`turns`), a user
 * message right after a tool message is where the history breaks too.
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
  target: RepairTarget = "any",
  turns: TurnOrder = NO_TURN_ORDER,
): number {
  const replyAfterResults = turns.replyAfterResults;
  // One loop with the usual fields read directly: it runs for every message before every model
  // call, where a helper call or a second read per message shows (BENCHMARKS.md). Anything
  // unusual goes to messageKindOf and the careful group check.
  const end = messages.length;
  let index = start;
  // The last group vouched for by its results in call order, and where its results end.
  let lastGroup = -1;
  let lastGroupEnd = -1;
  // The index right after the last tool message read: a user message there wants a reply first
  // (`turns`). Kept as it goes, so that a human message costs one comparison more.
  let afterResult = -1;
  while (index < end) {
    const message = messages[index] as Fields | null | undefined;
    if (message == null) {
      index++;
      continue;
    }
    const type = message.type;
    if (type !== "ai") {
      if (type === "human" || type === "system") {
        // Anthropic results in a human message are read where a group's calls lack answers (its
        // check looks at the message right after it); anywhere else they answer no call, and
        // are dropped or moved only when the history needs a repair for something else. A check
        // of every human message here measured as a tenth of the clean path.
        if (index === afterResult && replyAfterResults && type === "human") return index;
        index++;
        continue;
      }
      const kind = type === "tool" ? MessageKind.Tool : messageKindOf(message);
      if (kind === MessageKind.Tool && !keepStrays)
        return index === lastGroupEnd ? lastGroup : index;
      if (kind !== MessageKind.Ai) {
        if (index === afterResult && replyAfterResults && isUserTurn(message)) return index;
        if (kind === MessageKind.Tool) afterResult = index + 1;
        index++;
        continue;
      }
    }
    const calls = message.tool_calls as readonly unknown[];
    // Calls may also stand in content blocks (Anthropic, v1) or, with them, in Responses output
    // items: the Responses client always writes content blocks, so its messages (and their
    // custom and computer calls) never take the fast path. A message with text content makes
    // the calls of its tool_calls (or raw list), as every client reads it.
    const hasBlocks = Array.isArray(message.content);
    // Calls listed in `tool_calls` alone.
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
    if (!listedOnly && makesNoCalls(message)) {
      // A text answer with content blocks (Anthropic, the Responses API, v1): nothing to answer.
      index++;
      continue;
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
        afterResult = answeredUpTo;
        continue;
      }
    }
    const groupEnd = groupAnsweredUpTo(messages, index, listedOnly, keepStrays, target);
    if (groupEnd < 0) return index;
    if (groupEnd > index + 1 && isToolMessage(messages[groupEnd - 1])) afterResult = groupEnd;
    lastGroup = index;
    index = groupEnd;
    lastGroupEnd = groupEnd;
  }
  return end;
}

/**
 * The careful check of one AI message's group, off the loop's usual path (keeping the loop small
 * keeps it fast): the index after the group when it answers every call, else -1.
 */
function groupAnsweredUpTo(
  messages: readonly unknown[],
  index: number,
  listedOnly: boolean,
  keepStrays: boolean,
  target: RepairTarget,
): number {
  const message = messages[index] as Fields;
  const calls = message.tool_calls as readonly unknown[];
  const groupStart = index + 1;
  let groupEnd = groupStart;
  while (groupEnd < messages.length && isToolMessage(messages[groupEnd])) groupEnd++;
  const answered =
    listedOnly && calls.length <= NESTED_LOOP_LIMIT
      ? groupAnswersListedCalls(messages, calls, groupStart, groupEnd, keepStrays)
      : groupAnswersWireCalls(messages, message, groupStart, groupEnd, keepStrays, target);
  if (answered) return groupEnd;
  // For Anthropic, results may stand as tool_result blocks in the human message right after.
  if (target === "anthropic" && groupEnd === groupStart && humanAnswersGroup(messages, index)) {
    return groupStart + 1;
  }
  return -1;
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
    const call = calls[position] as Fields | null | undefined;
    const id = call?.id;
    if (typeof id !== "string" || id === "") return -1;
    // No name (or an empty one): the careful check reads it. Any other name passes, as ids do.
    if (!(call as Fields).name) return -1;
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
export function isToolMessage(message: unknown): boolean {
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
    if (!call.name) return false;
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

/** The content block types that are calls: Anthropic `tool_use` (v0) and `tool_call` (v1). */
function isCallBlock(block: unknown): boolean {
  const type = (block as Fields | null | undefined)?.type;
  return type === "tool_use" || type === "tool_call";
}

const CALL_ITEM_TYPES: ReadonlySet<unknown> = new Set([
  "function_call",
  "custom_tool_call",
  "computer_call",
]);

/**
 * Whether an AI message makes no call in any channel a client reads, without allocating: no
 * `tool_calls`, no raw calls, no call blocks, no call items in its output.
 */
function makesNoCalls(message: Fields): boolean {
  const calls = message.tool_calls;
  if (Array.isArray(calls) && calls.length > 0) return false;
  const raw = (message.additional_kwargs as Fields | null | undefined)?.tool_calls;
  if (Array.isArray(raw) && raw.length > 0) return false;
  const content = message.content;
  if (Array.isArray(content)) {
    for (let index = 0; index < content.length; index++) {
      if (isCallBlock(content[index])) return false;
    }
  }
  const output = (message.response_metadata as Fields | null | undefined)?.output;
  if (Array.isArray(output)) {
    for (let index = 0; index < output.length; index++) {
      if (CALL_ITEM_TYPES.has((output[index] as Fields | null | undefined)?.type)) return false;
    }
  }
  return true;
}

/**
 * The same check through the wire readers (`wire.ts`), for calls in content blocks, output items
 * or the raw list, junk entries and very many calls: the calls `target`'s client sends, each with
 * an id of its own and a name, each answered once in the group. For `"any"`, every client must
 * send the same calls.
 */
function groupAnswersWireCalls(
  messages: readonly unknown[],
  ai: unknown,
  groupStart: number,
  groupEnd: number,
  keepStrays: boolean,
  target: RepairTarget,
): boolean {
  const view = readWire(ai);
  if (view === undefined) return false;
  const calls = sentCalls(view, target, ai);
  /** The calls not answered yet, by id, with the output type each must be answered with. */
  const unanswered = new Map<string, CallKind | undefined>();
  for (const call of calls) {
    if (call.id === undefined || unanswered.has(call.id)) return false;
    if (lacksName(ai, view, call, target)) return false;
    if (target === "any" && isUnsynced(view, call, ai)) return false;
    unanswered.set(call.id, answerKindOf(call.kind, target));
  }
  // A call no client sends whose id a result names: the result answers nothing on the wire.
  for (let result = groupStart; result < groupEnd; result++) {
    const id = answeredToolCallIdOf(messages[result]);
    const answersCall = id !== undefined && unanswered.has(id);
    if (!answersCall) {
      if (keepStrays) continue;
      return false; // a stray, or a call answered twice
    }
    const kind = unanswered.get(id as string);
    if (kind !== undefined && resultKindOf(messages[result]) !== kind) return false;
    unanswered.delete(id as string);
  }
  return unanswered.size === 0;
}

/**
 * For Anthropic: whether the message right after this AI message is a human message whose leading
 * `tool_result` blocks answer each call ChatAnthropic sends of it once, and nothing else.
 */
function humanAnswersGroup(messages: readonly unknown[], aiIndex: number): boolean {
  const ids = leadingResultIdsOf(messages[aiIndex + 1]);
  if (ids === undefined) return false;
  const ai = messages[aiIndex];
  const view = readWire(ai);
  if (view === undefined) return false;
  const calls: readonly WireCall[] = sentCalls(view, "anthropic", ai);
  if (calls.length !== ids.length) return false;
  const unanswered = new Set<string>();
  for (const call of calls) {
    if (call.id === undefined || unanswered.has(call.id)) return false;
    if (lacksName(ai, view, call, "anthropic")) return false;
    unanswered.add(call.id);
  }
  for (const id of ids) if (!unanswered.delete(id)) return false;
  return true;
}
