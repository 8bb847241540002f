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
import { hasInvalidListedArguments, type RepairTarget } from "./wire.js";

/**
 * The repair of a history whose only faults are calls without results: each such group is
 * written in call order, results where they exist and placeholders where they do not, and every
 * other message is copied as it is. The same output as {@link rebuild} gives, at the cost of a copy.
 */
export function insertPlaceholders<T>(
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
