/**
 * Lenient reading shared by the native-format adapters: nothing here throws on junk. Records and
 * lists are read as everywhere else in the package (`core/fields.ts`): a JSON message, call,
 * block or part is an object, and an array in its place is junk, not a record.
 */

export { fieldsOf, listOf } from "../core/fields.js";

/** A non-empty string, or `undefined` for anything else. */
export function stringOrUndefined(value: unknown): string | undefined {
  return typeof value === "string" && value !== "" ? value : undefined;
}

/** Whether a text parses as JSON. */
export function isParsableJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}
