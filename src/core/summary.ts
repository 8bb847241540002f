/** Counting and describing repairs, for logs and for whoever reports on them. */
import type { RepairKind, ToolCallRepair } from "./repair.js";

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
  const counts: RepairCounts = {
    placeholder_inserted: 0,
    result_moved: 0,
    orphan_dropped: 0,
    id_assigned: 0,
    name_assigned: 0,
    call_listed: 0,
  };
  for (const repair of repairs) counts[repair.kind]++;
  return counts;
}

/**
 * One line that says what was repaired, led by the placeholder count that operators grep for:
 * `Injecting 2 placeholder ToolMessage(s) for dangling tool calls; moved 1 misplaced tool result(s)`.
 *
 * @example
 * ```ts
 * const { repairs } = repairToolCalls(history);
 * if (repairs.length > 0) console.warn(describeRepairs(repairs));
 * ```
 */
export function describeRepairs(repairs: readonly ToolCallRepair[]): string {
  const counts = countRepairs(repairs);
  const parts: string[] = [];
  if (counts.placeholder_inserted > 0) {
    parts.push(
      `Injecting ${counts.placeholder_inserted} placeholder ToolMessage(s) for dangling tool calls`,
    );
  }
  if (counts.result_moved > 0) parts.push(`moved ${counts.result_moved} misplaced tool result(s)`);
  if (counts.orphan_dropped > 0) {
    parts.push(`dropped ${counts.orphan_dropped} orphan tool result(s)`);
  }
  if (counts.id_assigned > 0) {
    parts.push(`assigned ${counts.id_assigned} missing or repeated tool call id(s)`);
  }
  if (counts.name_assigned > 0) {
    parts.push(`named ${counts.name_assigned} tool call(s) that had no name`);
  }
  if (counts.call_listed > 0) {
    parts.push(
      `listed ${counts.call_listed} tool call(s) in tool_calls that not every client sends`,
    );
  }
  if (parts.length === 0) return "No tool-call repair needed";
  const line = parts.join("; ");
  return counts.placeholder_inserted > 0 ? line : `Repaired tool-call history: ${line}`;
}
