/** Counting and describing repairs, for logs and for whoever reports on them. */

import {
  describeRepairCount,
  REPAIR_KIND_NAMES,
  type RepairKind,
  TOOL_RESULT_WORDS,
} from "./repair-kinds.js";
import type { ToolCallRepair } from "./repair-log.js";

/** How many repairs of each kind. */
export type RepairCounts = Record<RepairKind, number>;

/**
 * Counts repairs by kind.
 *
 * @example
 * ```ts
 * const { repairs } = repairToolCalls(history);
 * countRepairs(repairs).placeholder_inserted; // 2
 * ```
 */
export function countRepairs(repairs: readonly ToolCallRepair[]): RepairCounts {
  const counts = Object.fromEntries(REPAIR_KIND_NAMES.map((kind) => [kind, 0])) as RepairCounts;
  for (const repair of repairs) counts[repair.kind]++;
  return counts;
}

/** The kind the log line leads with when there is any: what operators grep for. */
const LEADING_KIND: RepairKind = "placeholder_inserted";

/**
 * One line that says what was repaired, led by the placeholder count that operators grep for:
 * `Injecting 2 placeholder tool result(s) for dangling tool calls; moved 1 misplaced tool result(s)`.
 * Each kind is told in its words from the table of kinds, in the table's order.
 *
 * @param result - what the placeholders are called: `"tool result"`, or the class of the
 *   messages written; the LangChain attachments' warning says `"ToolMessage"`
 * @example
 * ```ts
 * const { repairs } = repairToolCalls(history);
 * if (repairs.length > 0) console.warn(describeRepairs(repairs, "ToolMessage"));
 * ```
 */
export function describeRepairs(
  repairs: readonly ToolCallRepair[],
  result: string = TOOL_RESULT_WORDS,
): string {
  const counts = countRepairs(repairs);
  const parts = REPAIR_KIND_NAMES.filter((kind) => counts[kind] > 0).map((kind) =>
    describeRepairCount(kind, counts[kind], result),
  );
  if (parts.length === 0) return "No tool-call repair needed";
  const line = parts.join("; ");
  return counts[LEADING_KIND] > 0 ? line : `Repaired tool-call history: ${line}`;
}
