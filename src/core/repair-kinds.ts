/**
 * Every kind of repair the engine makes, in one table: the name the audit reports it under, and
 * the words the log line uses for it. A kind's key is also the value of the
 * `tool_call_resilience.repair.kind` attribute. The type of a repair's kind, the telemetry values
 * and the audit's vocabulary all derive from this table, so a new kind is one entry here, and the
 * compiler then points at every place that must handle it.
 */

/** What the table holds for one kind of repair. */
interface RepairKindEntry {
  /** The problem the audit counts when it makes this repair: a column of its report. */
  readonly auditName: string;
  /**
   * How the log line tells of `n` such repairs: `<verb> <n> <object>`, as in
   * `moved 1 misplaced tool result(s)`. `{result}` in the object stands for what the repair wrote
   * (see {@link describeRepairCount}).
   */
  readonly phrase: { readonly verb: string; readonly object: string };
}

/** The table, checked as it is written. */
function defineRepairKinds<const Table extends { [Kind in keyof Table]: RepairKindEntry }>(
  table: Table,
): Table {
  return Object.freeze(table);
}

/**
 * The kinds of repair, in the order the log line lists them (placeholders first: they are what
 * operators grep for).
 *
 * @example
 * ```ts
 * REPAIR_KINDS.orphan_dropped.auditName; // "orphan"
 * for (const kind of Object.keys(REPAIR_KINDS)) console.log(kind);
 * ```
 */
export const REPAIR_KINDS = defineRepairKinds({
  /** A placeholder result was inserted for a dangling call. */
  placeholder_inserted: {
    auditName: "dangling",
    phrase: { verb: "Injecting", object: "placeholder {result}(s) for dangling tool calls" },
  },
  /** A result separated from its call was moved back. */
  result_moved: {
    auditName: "misplaced",
    phrase: { verb: "moved", object: "misplaced tool result(s)" },
  },
  /** A result answering no call was dropped. */
  orphan_dropped: {
    auditName: "orphan",
    phrase: { verb: "dropped", object: "orphan tool result(s)" },
  },
  /** A call without an id, or with an id another call of its message has, was given one. */
  id_assigned: {
    auditName: "missing_id",
    phrase: { verb: "assigned", object: "missing or repeated tool call id(s)" },
  },
  /** A call whose name was missing or empty where a client reads it was given one. */
  name_assigned: {
    auditName: "missing_name",
    phrase: { verb: "named", object: "tool call(s) that had no name" },
  },
  /**
   * A call only some providers' clients send (a raw OpenAI-shaped call, an Anthropic `tool_use`
   * block, a v1 `tool_call` block, a Responses output item) was written where the other clients
   * read calls, so that every client sends it (target `"any"`).
   */
  call_listed: {
    auditName: "unlisted",
    phrase: { verb: "listed", object: "tool call(s) in tool_calls that not every client sends" },
  },
  /**
   * A short synthetic turn was written where a provider's order of turns needs one: an assistant
   * turn between tool results and a following user message (Bedrock Converse, Mistral), or a user
   * turn before an assistant message that a dropped orphan left first (Bedrock Converse).
   */
  turn_inserted: {
    auditName: "turn_order",
    phrase: { verb: "inserted", object: "synthetic turn(s) the order of turns needs" },
  },
});

/**
 * What a repair did: one of the keys of {@link REPAIR_KINDS}.
 *
 * @example
 * ```ts
 * const kind: RepairKind = "placeholder_inserted";
 * ```
 */
export type RepairKind = keyof typeof REPAIR_KINDS;

/**
 * The name the audit reports a kind of repair under.
 *
 * @example
 * ```ts
 * const problem: RepairAuditName = REPAIR_KINDS.result_moved.auditName; // "misplaced"
 * ```
 */
export type RepairAuditName = (typeof REPAIR_KINDS)[RepairKind]["auditName"];

/**
 * Every kind, in the table's order.
 *
 * @example
 * ```ts
 * const counts = Object.fromEntries(REPAIR_KIND_NAMES.map((kind) => [kind, 0]));
 * ```
 */
export const REPAIR_KIND_NAMES: readonly RepairKind[] = Object.freeze(
  Object.keys(REPAIR_KINDS) as RepairKind[],
);

/**
 * What the log line calls a tool result the engine wrote, unless the messages it writes have a
 * name of their own: the native formats' placeholders are tool results of their format.
 */
export const TOOL_RESULT_WORDS = "tool result";

/**
 * The log line's words for `count` repairs of a kind.
 *
 * @param result - what the repair wrote, for `{result}` in the phrase: `"ToolMessage"` on the
 *   LangChain paths
 * @example
 * ```ts
 * describeRepairCount("result_moved", 2); // "moved 2 misplaced tool result(s)"
 * describeRepairCount("placeholder_inserted", 1, "ToolMessage"); // "Injecting 1 placeholder ToolMessage(s) for dangling tool calls"
 * ```
 */
export function describeRepairCount(
  kind: RepairKind,
  count: number,
  result: string = TOOL_RESULT_WORDS,
): string {
  const { verb, object } = REPAIR_KINDS[kind].phrase;
  return `${verb} ${count} ${object.replace("{result}", result)}`;
}
