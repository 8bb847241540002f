/**
 * Lenient access to values of unknown shape: the fields of a record and the entries of a list,
 * read the same way by the engine, the wire readers, the native formats and the telemetry. A
 * message, a call, a content block or a tool definition is a record; a list of them is an array.
 * Nothing here reads a property, so nothing here triggers a getter or a proxy trap.
 */

/** The fields of a record, read by name; every value may be anything. */
export type Fields = Record<string, unknown>;

/** The one empty list {@link listOf} gives for anything that is not an array. */
const NO_ENTRIES: readonly unknown[] = Object.freeze([]);

/**
 * The value as a record of fields, or `undefined` when it is not one. A record is any object that
 * is not an array: a plain object, a class instance (a LangChain message), a proxy of one. An
 * array is a list, read with {@link listOf}; a function, `null` and every primitive are not
 * records. No property is read: a throwing getter is not triggered, and a proxy's traps are not
 * called. Only a revoked proxy throws (a `TypeError`), as any read of it would.
 *
 * A caller that takes an array as a record too (the engine counts any object in `tool_calls` as a
 * call) says so where it reads, with `isToolCallEntry` or its own check.
 *
 * @example
 * ```ts
 * fieldsOf({ id: "call_1" })?.id; // "call_1"
 * fieldsOf([{ id: "call_1" }]); // undefined: a list, not a record
 * fieldsOf("call_1"); // undefined
 * ```
 */
export function fieldsOf(value: unknown): Fields | undefined {
  return value !== null && typeof value === "object" && !Array.isArray(value)
    ? (value as Fields)
    : undefined;
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
