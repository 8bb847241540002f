/**
 * Duck-typed, lenient reading of chat messages: LangChain message instances and plain objects of
 * the same shape (`type` or `role`, `tool_calls`, `tool_call_id`). Nothing here throws on junk, and
 * nothing on the read path allocates, because the engine reads every message before every model call.
 */

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

type Fields = Record<string, unknown>;

const NO_CALLS: readonly unknown[] = Object.freeze([]);

function fieldsOf(value: unknown): Fields | undefined {
  return value !== null && typeof value === "object" ? (value as Fields) : undefined;
}

function listOf(value: unknown): readonly unknown[] {
  return Array.isArray(value) ? value : NO_CALLS;
}

/**
 * Classifies a history entry. LangChain instances carry `type` (`"ai"`, `"tool"`); plain objects
 * may carry `role` instead (`"assistant"`, `"tool"`), as may a generic `ChatMessage`.
 */
export function messageKindOf(message: unknown): MessageKind {
  const fields = fieldsOf(message);
  if (fields === undefined) return MessageKind.Other;
  let type = fields.type;
  if (typeof type !== "string" || type === "generic") type = fields.role;
  if (type === "ai" || type === "assistant") return MessageKind.Ai;
  if (type === "tool") return MessageKind.Tool;
  return MessageKind.Other;
}

function rawToolCallsOf(fields: Fields): readonly unknown[] {
  return listOf(fieldsOf(fields.additional_kwargs)?.tool_calls);
}

/**
 * Where an AI message's calls are read from. Provider converters send `tool_calls` (and the
 * invalid ones) when there are any, and fall back to the raw `additional_kwargs.tool_calls`
 * (OpenAI shape) only when there are none; reading the same way keeps us from answering calls the
 * provider never sees.
 */
function usesRawToolCalls(fields: Fields): boolean {
  return listOf(fields.tool_calls).length === 0 && listOf(fields.invalid_tool_calls).length === 0;
}

/** How many tool calls an AI message makes (valid, invalid, or raw-only). Zero for anything else. */
export function toolCallCountOf(message: unknown): number {
  const fields = fieldsOf(message);
  if (fields === undefined) return 0;
  if (usesRawToolCalls(fields)) return rawToolCallsOf(fields).length;
  return listOf(fields.tool_calls).length + listOf(fields.invalid_tool_calls).length;
}

/** Where the k-th call of an AI message comes from. */
export const ToolCallSource = {
  /** `tool_calls`: parsed, valid calls. */
  Parsed: 0,
  /** `invalid_tool_calls`: calls whose arguments could not be parsed. */
  Invalid: 1,
  /** `additional_kwargs.tool_calls`: raw OpenAI-shaped calls, read only when the others are empty. */
  Raw: 2,
} as const;
export type ToolCallSource = (typeof ToolCallSource)[keyof typeof ToolCallSource];

/** The source of the k-th call of an AI message, in the order {@link toolCallAt} uses. */
export function toolCallSourceAt(message: unknown, index: number): ToolCallSource {
  const fields = fieldsOf(message);
  if (fields === undefined || usesRawToolCalls(fields)) return ToolCallSource.Raw;
  return index < listOf(fields.tool_calls).length ? ToolCallSource.Parsed : ToolCallSource.Invalid;
}

/**
 * The k-th tool call of an AI message: `tool_calls` first, then `invalid_tool_calls`; or, when
 * both are empty, the raw `additional_kwargs.tool_calls`.
 */
export function toolCallAt(message: unknown, index: number): unknown {
  const fields = fieldsOf(message);
  if (fields === undefined) return undefined;
  if (usesRawToolCalls(fields)) return rawToolCallsOf(fields)[index];
  const parsed = listOf(fields.tool_calls);
  return index < parsed.length
    ? parsed[index]
    : listOf(fields.invalid_tool_calls)[index - parsed.length];
}

/** Whether a `tool_calls` entry is a call at all: entries that are not objects are junk, skipped. */
export function isToolCallEntry(call: unknown): boolean {
  return call !== null && typeof call === "object";
}

/** A call's id, or `undefined` when it is missing, empty or not a string. */
export function toolCallIdOf(call: unknown): string | undefined {
  const id = fieldsOf(call)?.id;
  return typeof id === "string" && id !== "" ? id : undefined;
}

/** A call's tool name (`name`, or `function.name` in the OpenAI shape), or `undefined`. */
export function toolCallNameOf(call: unknown): string | undefined {
  const fields = fieldsOf(call);
  if (fields === undefined) return undefined;
  const name = typeof fields.name === "string" ? fields.name : fieldsOf(fields.function)?.name;
  return typeof name === "string" && name !== "" ? name : undefined;
}

/**
 * Whether an OpenAI-shaped call (`function.arguments` as a JSON string) carries arguments that do
 * not parse. Only asked about calls that went unanswered, never on the clean path.
 */
export function hasUnparsableArguments(call: unknown): boolean {
  const functionFields = fieldsOf(fieldsOf(call)?.function);
  if (functionFields === undefined || typeof functionFields.arguments !== "string") return false;
  try {
    JSON.parse(functionFields.arguments);
    return false;
  } catch {
    return true;
  }
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

function withIds(list: readonly unknown[], ids: ReadonlyMap<number, string>, offset: number) {
  return list.map((call, index) => {
    const id = ids.get(index + offset);
    return id === undefined ? call : { ...fieldsOf(call), id };
  });
}

/**
 * A copy of an AI message whose calls at the given positions (as numbered by {@link toolCallAt})
 * carry the given ids. The original is left untouched. A class instance keeps its prototype, and
 * its `lc_kwargs` follow the change so that serialization (checkpointers) stores the new ids.
 */
export function withToolCallIds(message: unknown, ids: ReadonlyMap<number, string>): unknown {
  const fields = fieldsOf(message);
  if (fields === undefined || ids.size === 0) return message;
  const changes: Fields = {};
  if (usesRawToolCalls(fields)) {
    const additional = { ...fieldsOf(fields.additional_kwargs) };
    additional.tool_calls = withIds(rawToolCallsOf(fields), ids, 0);
    changes.additional_kwargs = additional;
  } else {
    const parsed = listOf(fields.tool_calls);
    if (parsed.length > 0) changes.tool_calls = withIds(parsed, ids, 0);
    const invalid = listOf(fields.invalid_tool_calls);
    if (invalid.length > 0) changes.invalid_tool_calls = withIds(invalid, ids, parsed.length);
  }
  const prototype = Object.getPrototypeOf(fields) as object | null;
  if (prototype === Object.prototype || prototype === null) return { ...fields, ...changes };
  const copy = Object.assign(Object.create(prototype) as Fields, fields, changes);
  const serialized = fieldsOf(fields.lc_kwargs);
  if (serialized !== undefined) copy.lc_kwargs = { ...serialized, ...changes };
  return copy;
}
