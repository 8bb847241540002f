/**
 * The placeholder-only path: the repair of a history whose only faults are calls without results,
 * found by the clean pass. It writes the same output as the rebuild would, without the analysis.
 */
import type { MissingResultsGroup } from "./missing-results.js";
import type { RepairPolicy } from "./policy.js";
import {
  type HistoryRepair,
  NO_REPAIRS,
  type RepairContext,
  RepairLog,
  type ToolCallRepair,
} from "./repair-log.js";
import type { ToolMessageFactory } from "./tool-message.js";
import {
  hasInvalidListedArguments,
  isUserTurn,
  type RepairTarget,
  type TurnOrder,
} from "./wire.js";

/**
 * The repair of a history whose only faults are calls without results: each such group is
 * written in call order, results where they exist and placeholders where they do not, and every
 * other message is copied as it is; where the wire wants it (`turns`), a user message right after
 * a group gets a synthetic reply before it. The same output as {@link rebuild} gives, at the cost
 * of a copy.
 */
export function insertPlaceholders<T>(
  messages: readonly T[],
  groups: readonly MissingResultsGroup[],
  policy: RepairPolicy,
  context: RepairContext | undefined,
  target: RepairTarget,
  turns: TurnOrder,
  make: ToolMessageFactory,
): HistoryRepair<unknown> {
  const first = groups[0];
  if (first === undefined) return { messages: messages as unknown[], repairs: NO_REPAIRS };
  // The output's length is known: written into a list of that length, which measured faster
  // than a copy of the part before the first group that then grows.
  let missing = 0;
  let replies = 0;
  for (const group of groups) {
    missing += group.missing;
    if (needsReply(messages, group, turns)) replies++;
  }
  const output: unknown[] = new Array(messages.length + missing + replies);
  let written = 0;
  const repairs: ToolCallRepair[] = new Array(missing + replies);
  const log = new RepairLog(policy, context, target, make, repairs);
  let copied = 0;
  /** The last group, when the user message right after it wants a reply before it. */
  let replyDue: MissingResultsGroup | undefined;
  for (const group of groups) {
    if (replyDue !== undefined) {
      written = copyThenReply(messages, copied, replyDue, output, written, log);
      copied = replyDue.end;
    }
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
    replyDue = needsReply(messages, group, turns) ? group : undefined;
  }
  if (replyDue !== undefined) {
    written = copyThenReply(messages, copied, replyDue, output, written, log);
    copied = replyDue.end;
  }
  for (let index = copied; index < messages.length; index++) output[written++] = messages[index];
  return { messages: output, repairs };
}

/** Whether the user message right after a group wants a synthetic reply before it. */
function needsReply(
  messages: readonly unknown[],
  group: MissingResultsGroup,
  turns: TurnOrder,
): boolean {
  return turns.replyAfterResults && isUserTurn(messages[group.end]);
}

/**
 * Copies the messages from `copied` up to the user message right after `group`, then writes the
 * synthetic reply before it; returns how many messages `output` then holds.
 */
function copyThenReply(
  messages: readonly unknown[],
  copied: number,
  group: MissingResultsGroup,
  output: unknown[],
  written: number,
  log: RepairLog,
): number {
  let at = written;
  for (let index = copied; index < group.end; index++) output[at++] = messages[index];
  output[at] = log.reply(output[at - 1], group.aiIndex, at);
  return at + 1;
}
