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
 * in `invalid_tool_calls`) still reaches the provider. A block without an id is such a call too:
 * it reaches Anthropic, which then wants a result for it, so it must be given an id.
 */
function isExtraToolUseBlock(block: unknown, sent: readonly unknown[]): boolean {
  const fields = fieldsOf(block);
  if (fields === undefined || fields.type !== "tool_use") return false;
  const id = toolCallIdOf(fields);
  if (id === undefined) return true;
  for (let index = 0; index < sent.length; index++) {
    if (toolCallIdOf(sent[index]) === id) return false;
  }
  return true;
}

/**
 * Whether an AI message makes calls that are not listed in its `tool_calls`: calls only in the raw
 * OpenAI-shaped `additional_kwargs.tool_calls` (which the OpenAI client sends and the Anthropic
 * client does not), or Anthropic `tool_use` content blocks for calls `tool_calls` lacks (which the
 * Anthropic client sends and the OpenAI client does not). Every client sends the calls of
 * `tool_calls`, so the engine lists such calls there ({@link withListedToolCalls}) before it
 * answers them: otherwise one provider would get a result for a call it never saw.
 *
 * @example
 * ```ts
 * hasUnlistedCalls({ type: "ai", tool_calls: [], additional_kwargs: { tool_calls: [raw] } }); // true
 * ```
 */
export function hasUnlistedCalls(message: unknown): boolean {
  const fields = fieldsOf(message);
  if (fields === undefined) return false;
  const listed = listOf(fields.tool_calls);
  if (listed.length === 0 && rawToolCallsOf(fields).some(isToolCallEntry)) return true;
  const content = fields.content;
  if (!Array.isArray(content)) return false;
  for (let index = 0; index < content.length; index++) {
    if (isExtraToolUseBlock(content[index], listed)) return true;
  }
  return false;
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

/** The arguments of a raw or `tool_use` call as an object: parsed when they are text, else `{}`. */
function argumentsOf(call: Fields): Fields {
  const given = call.input !== undefined ? call.input : fieldsOf(call.function)?.arguments;
  if (typeof given === "string") {
    try {
      const parsed: unknown = JSON.parse(given);
      return fieldsOf(parsed) !== undefined && !Array.isArray(parsed) ? (parsed as Fields) : {};
    } catch {
      return {};
    }
  }
  return fieldsOf(given) !== undefined && !Array.isArray(given) ? (given as Fields) : {};
}

/** A raw OpenAI-shaped call or a `tool_use` block, as a LangChain `tool_calls` entry. */
function asListedCall(call: Fields, id: string | undefined): Fields {
  return { id, name: toolCallNameOf(call) ?? "", args: argumentsOf(call), type: "tool_call" };
}

/**
 * A copy of an AI message in which every call the engine answers is listed in `tool_calls`, so
 * that every provider's client sends it, and whose calls at the given positions (as numbered by
 * {@link toolCallAt}) carry the given ids; the message itself when neither is needed.
 *
 * - Calls only in the raw `additional_kwargs.tool_calls` are listed with their arguments parsed
 *   (`{}` when they do not parse; `invalid_tool_calls` still says which ones failed), and the raw
 *   list keeps them, with the new ids.
 * - `tool_use` content blocks for calls `tool_calls` lacks are listed with their input; a block
 *   given an id carries it too, since the Anthropic client sends the block itself.
 *
 * The original is left untouched. A class instance keeps its prototype, and its `lc_kwargs`
 * follow the change so that serialization (checkpointers) stores the new calls and ids.
 *
 * @example
 * ```ts
 * const copy = withListedToolCalls(aiWithRawCalls, new Map());
 * copy.tool_calls; // [{ id: "call_1", name: "search", args: { q: "x" }, type: "tool_call" }]
 * ```
 */
export function withListedToolCalls(message: unknown, ids: ReadonlyMap<number, string>): unknown {
  const fields = fieldsOf(message);
  if (fields === undefined) return message;
  const unlisted = hasUnlistedCalls(fields);
  if (ids.size === 0 && !unlisted) return message;
  const changes: Fields = {};
  const listed = listOf(fields.tool_calls);
  const raw = listed.length > 0 ? NO_CALLS : rawToolCallsOf(fields);
  if (raw.length > 0) {
    changes.additional_kwargs = {
      ...fieldsOf(fields.additional_kwargs),
      tool_calls: withIds(raw, ids),
    };
  }
  if (!unlisted) {
    if (listed.length > 0) changes.tool_calls = withIds(listed, ids);
    return copyWith(fields, changes);
  }
  const calls: unknown[] = [];
  const blockIds = new Map<unknown, string>();
  const count = toolCallCountOf(fields);
  for (let position = 0; position < count; position++) {
    const call = toolCallAt(fields, position);
    const assigned = ids.get(position);
    if (position < listed.length) {
      calls.push(assigned === undefined ? call : { ...fieldsOf(call), id: assigned });
      continue;
    }
    const callFields = fieldsOf(call);
    if (callFields === undefined) continue; // junk in the raw list: no call to send
    calls.push(asListedCall(callFields, assigned ?? toolCallIdOf(callFields)));
    if (assigned !== undefined && position >= listed.length + raw.length) {
      blockIds.set(call, assigned);
    }
  }
  changes.tool_calls = calls;
  if (blockIds.size > 0) {
    changes.content = (fields.content as readonly unknown[]).map((block) => {
      const id = blockIds.get(block);
      return id === undefined ? block : { ...fieldsOf(block), id };
    });
  }
  return copyWith(fields, changes);
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

function copyWith(fields: Fields, changes: Fields): unknown {
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
