/**
 * Duck-typed, lenient reading of chat messages: LangChain message instances and plain objects of
 * the same shape (`type` or `role`, `tool_calls`, `tool_call_id`). Nothing here throws on junk, and
 * nothing on the read path allocates, because the engine reads every message before every model call.
 * Which calls of an AI message reach the provider is `wire.ts`'s question.
 */

import { type Fields, fieldsOf } from "./fields.js";

/** What a history entry is, as far as tool calling goes. */
export const MessageKind = {
  /** Anything that neither makes nor answers tool calls, junk included. */
  Other: 0,
  /** An AI (assistant) message, which may carry tool calls. */
  Ai: 1,
  /** A tool message, which answers one tool call by id. */
  Tool: 2,
} as const;
export type MessageKind = (typeof MessageKind)[keyof typeof MessageKind];

/**
 * Classifies a history entry. LangChain instances carry `type` (`"ai"`, `"tool"`); plain objects
 * may carry `role` instead (`"assistant"`, `"tool"`), as may a generic `ChatMessage`.
 */
export function messageKindOf(message: unknown): MessageKind {
  // Nullish entries are junk; any other value can be read (a primitive has no `type`).
  if (message == null) return MessageKind.Other;
  const type = (message as Fields).type;
  // The common LangChain types first: this runs for every message before every model call.
  if (type === "ai") return MessageKind.Ai;
  if (type === "tool") return MessageKind.Tool;
  if (type === "human" || type === "system") return MessageKind.Other;
  return messageKindByRole(message as Fields, type);
}

function messageKindByRole(fields: Fields, type: unknown): MessageKind {
  const name = typeof type !== "string" || type === "generic" ? fields.role : type;
  if (name === "ai" || name === "assistant") return MessageKind.Ai;
  if (name === "tool") return MessageKind.Tool;
  return MessageKind.Other;
}

/**
 * Whether a `tool_calls` entry is a call at all: entries that are not objects are junk, skipped.
 * Any object counts, an array too (unlike `fieldsOf`): the engine gives every call it counts an
 * id, and the wire readers count the same entries.
 */
export function isToolCallEntry(call: unknown): boolean {
  return call !== null && typeof call === "object";
}

/** A call's id, or `undefined` when it is missing, empty or not a string. */
export function toolCallIdOf(call: unknown): string | undefined {
  if (!isToolCallEntry(call)) return undefined;
  const id = (call as Fields).id;
  return typeof id === "string" && id !== "" ? id : undefined;
}

/** The id of the call a tool message answers, or `undefined` when it has none. */
export function answeredToolCallIdOf(message: unknown): string | undefined {
  const id = fieldsOf(message)?.tool_call_id;
  return typeof id === "string" && id !== "" ? id : undefined;
}

/** A tool message's `name`, or `undefined`. */
export function toolMessageNameOf(message: unknown): string | undefined {
  const name = fieldsOf(message)?.name;
  return typeof name === "string" && name !== "" ? name : undefined;
}

/**
 * A copy of a tool message that answers the call with this id instead: for a result whose call
 * was given a new id because another call of its message had the same one.
 *
 * @example
 * ```ts
 * withAnsweredId(new ToolMessage({ content: "42", tool_call_id: "call_1" }), "tcr_0_1").tool_call_id; // "tcr_0_1"
 * ```
 */
export function withAnsweredId(message: unknown, id: string): unknown {
  const fields = fieldsOf(message);
  return fields === undefined ? message : copyWith(fields, { tool_call_id: id });
}

/**
 * A copy of a message with some fields changed. A class instance keeps its prototype (copied by
 * property descriptors, so that accessors are never triggered), and its `lc_kwargs` follow the
 * change so that serialization (checkpointers) stores it; a plain object is spread.
 */
export function copyWith(fields: Fields, changes: Fields): unknown {
  const prototype = Object.getPrototypeOf(fields) as object | null;
  if (prototype === Object.prototype || prototype === null) return { ...fields, ...changes };
  // Copied by descriptors and changed as own data properties: accessors on the prototype are
  // shadowed, never called. The copy is the engine's own, so a frozen message gives a copy that
  // can take the changes (and leaves the original frozen).
  const descriptors = Object.getOwnPropertyDescriptors(fields);
  for (const descriptor of Object.values(descriptors)) {
    descriptor.configurable = true;
    if ("value" in descriptor) descriptor.writable = true;
  }
  const copy = Object.create(prototype, descriptors) as Fields;
  for (const [key, value] of Object.entries(changes)) {
    Object.defineProperty(copy, key, {
      value,
      writable: true,
      enumerable: true,
      configurable: true,
    });
  }
  const serialized = fieldsOf(fields.lc_kwargs);
  if (serialized !== undefined) {
    Object.defineProperty(copy, "lc_kwargs", {
      value: { ...serialized, ...changes },
      writable: true,
      enumerable: true,
      configurable: true,
    });
  }
  return copy;
}
