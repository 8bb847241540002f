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

function rawToolCallsOf(fields: Fields): readonly unknown[] {
  return listOf(fieldsOf(fields.additional_kwargs)?.tool_calls);
}

/**
 * The list an AI message's calls are sent from, as LangChain's provider converters read it:
 * `tool_calls` when there are any, otherwise the raw `additional_kwargs.tool_calls` (OpenAI shape).
 * `invalid_tool_calls` are never sent from here: a call that the provider never sees must get no
 * result, or the provider refuses the result instead.
 */
function sentCallsOf(fields: Fields): readonly unknown[] {
  const parsed = listOf(fields.tool_calls);
  return parsed.length > 0 ? parsed : rawToolCallsOf(fields);
}

/**
 * Whether a content block is an Anthropic `tool_use` block for a call the sent list lacks. The
 * Anthropic converter sends such blocks as calls; they are how a call with truncated input (kept
 * in `invalid_tool_calls`) still reaches the provider.
 */
function isExtraToolUseBlock(block: unknown, sent: readonly unknown[]): boolean {
  const fields = fieldsOf(block);
  if (fields === undefined || fields.type !== "tool_use") return false;
  const id = toolCallIdOf(fields);
  if (id === undefined) return false;
  for (let index = 0; index < sent.length; index++) {
    if (toolCallIdOf(sent[index]) === id) return false;
  }
  return true;
}

/**
 * How many tool calls an AI message makes as a provider sees them: its sent calls, then its extra
 * `tool_use` content blocks. Zero for anything else.
 */
export function toolCallCountOf(message: unknown): number {
  const fields = fieldsOf(message);
  if (fields === undefined) return 0;
  const sent = sentCallsOf(fields);
  const content = fields.content;
  if (!Array.isArray(content)) return sent.length;
  let count = sent.length;
  for (let index = 0; index < content.length; index++) {
    if (isExtraToolUseBlock(content[index], sent)) count++;
  }
  return count;
}

/** The k-th tool call of an AI message, numbered as {@link toolCallCountOf} counts them. */
export function toolCallAt(message: unknown, index: number): unknown {
  const fields = fieldsOf(message);
  if (fields === undefined) return undefined;
  const sent = sentCallsOf(fields);
  if (index < sent.length) return sent[index];
  const content = fields.content;
  if (!Array.isArray(content)) return undefined;
  let remaining = index - sent.length;
  for (let position = 0; position < content.length; position++) {
    if (isExtraToolUseBlock(content[position], sent) && remaining-- === 0) return content[position];
  }
  return undefined;
}

/**
 * Whether a call of this AI message could not run because of its arguments: LangChain listed it in
 * `invalid_tool_calls`, or its raw OpenAI-shaped arguments do not parse. Only asked about calls
 * that went unanswered, never on the clean path.
 */
export function hasInvalidArguments(message: unknown, call: unknown): boolean {
  const id = toolCallIdOf(call);
  const invalid = listOf(fieldsOf(message)?.invalid_tool_calls);
  if (id !== undefined && invalid.some((entry) => toolCallIdOf(entry) === id)) return true;
  const functionFields = fieldsOf(fieldsOf(call)?.function);
  if (functionFields === undefined || typeof functionFields.arguments !== "string") return false;
  try {
    JSON.parse(functionFields.arguments);
    return false;
  } catch {
    return true;
  }
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

function withIds(list: readonly unknown[], ids: ReadonlyMap<number, string>) {
  return list.map((call, index) => {
    const id = ids.get(index);
    return id === undefined ? call : { ...fieldsOf(call), id };
  });
}

/**
 * A copy of an AI message whose sent calls at the given positions (as numbered by
 * {@link toolCallAt}) carry the given ids. The original is left untouched. A class instance keeps
 * its prototype, and its `lc_kwargs` follow the change so that serialization (checkpointers)
 * stores the new ids.
 */
export function withToolCallIds(message: unknown, ids: ReadonlyMap<number, string>): unknown {
  const fields = fieldsOf(message);
  if (fields === undefined || ids.size === 0) return message;
  const changes: Fields = {};
  if (listOf(fields.tool_calls).length > 0) {
    changes.tool_calls = withIds(listOf(fields.tool_calls), ids);
  } else {
    changes.additional_kwargs = {
      ...fieldsOf(fields.additional_kwargs),
      tool_calls: withIds(rawToolCallsOf(fields), ids),
    };
  }
  const prototype = Object.getPrototypeOf(fields) as object | null;
  if (prototype === Object.prototype || prototype === null) return { ...fields, ...changes };
  // Copied by descriptors and changed as own data properties: accessors on the prototype are
  // shadowed, never called.
  const copy = Object.create(prototype, Object.getOwnPropertyDescriptors(fields)) as Fields;
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
