/**
 * Lenient access to values of unknown shape: the fields of a record and the entries of a list,
 * for the engine, the wire readers, the native formats and the telemetry. A message, a call, a
 * content block or a tool definition is a record; a list of them is an array. The one difference
 * between readers, whether an array can stand as a record, is a named rule of {@link fieldsOf}.
 * Nothing here reads a property, so nothing here triggers a getter or a proxy trap.
 */

/** The fields of a record, read by name; every value may be anything. */
export type Fields = Record<string, unknown>;

/** The one empty list {@link listOf} gives for anything that is not an array. */
const NO_ENTRIES: readonly unknown[] = Object.freeze([]);

/**
 * Which values {@link fieldsOf} reads as records of fields:
 * - `"objects"`: every object, arrays included. The engine and the telemetry read LangChain-shaped
 *   values this way: whatever object stands where a message, a call or a block is expected has
 *   its fields read, so that the kind of a message and its calls and results are read alike.
 * - `"records"`: objects that are not arrays. The native formats read JSON this way: an array
 *   where a message, a call or an argument object belongs is junk, not a record.
 */
export type FieldsRule = "objects" | "records";

/**
 * The value as a record of fields, or `undefined` when it is not one by `rule` (by default every
 * object, arrays included). A function, `null` and every primitive are never records. No
 * property is read: a throwing getter is not triggered, and a proxy's traps are not called; under
 * `"records"`, a revoked proxy throws (a `TypeError`), as any read of it would.
 *
 * @example
 * ```ts
 * fieldsOf({ id: "call_1" })?.id; // "call_1"
 * fieldsOf([{ id: "call_1" }], "records"); // undefined: a JSON list, not a record
 * fieldsOf("call_1"); // undefined
 * ```
 */
export function fieldsOf(value: unknown, rule: FieldsRule = "objects"): Fields | undefined {
  if (value === null || typeof value !== "object") return undefined;
  return rule === "objects" || !Array.isArray(value) ? (value as Fields) : undefined;
}

/**
 * The value as a list: the array itself, or one shared, frozen empty list for anything else
 * (`undefined`, a record, a primitive). The array is not copied; callers must not modify what
 * they are given.
 *
 * @example
 * ```ts
 * listOf(message.tool_calls).length; // 0 when the message has no tool_calls array
 * ```
 */
export function listOf(value: unknown): readonly unknown[] {
  return Array.isArray(value) ? value : NO_ENTRIES;
}
