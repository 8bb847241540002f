/**
 * Lenient reading shared by the native-format adapters: nothing here throws on junk. Records and
 * lists are read by `core/fields.ts`, under its `"records"` rule: a JSON message, call, block or
 * part is an object, and an array in its place is junk, not a record.
 */
import { type Fields, fieldsOf as fieldsByRule } from "../core/fields.js";

export { listOf } from "../core/fields.js";

/** The fields of a JSON record; `undefined` for an array, `null` or a primitive. */
export function recordOf(value: unknown): Fields | undefined {
  return fieldsByRule(value, "records");
}

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
