/**
 * Anthropic-native results: `tool_result` content blocks in a human message, the shape an
 * Anthropic user turn has. ChatAnthropic sends them as they are, and they answer the calls of the
 * AI message before; ChatOpenAI sends them as content parts OpenAI refuses, and a placeholder added
 * beside them would give Anthropic two results for one call. The engine reads such a message as
 * results, and where it repairs, writes each block as a tool message (which every client sends)
 * followed by the rest of the message.
 */
import { copyWith } from "./messages.js";
import type { ToolMessageFactory, ToolMessageFields } from "./tool-message.js";

type Fields = Record<string, unknown>;

/**
 * Whether a history entry is a human (user) message with `tool_result` content blocks. Cheap for
 * the usual human message, whose content is a string.
 */
export function hasResultBlocks(message: unknown): boolean {
  if (message === null || typeof message !== "object") return false;
  const fields = message as Fields;
  const content = fields.content;
  if (!Array.isArray(content)) return false;
  if (!isHuman(fields)) return false;
  for (let index = 0; index < content.length; index++) {
    if ((content[index] as Fields | null)?.type === "tool_result") return true;
  }
  return false;
}

function isHuman(fields: Fields): boolean {
  const type = fields.type;
  if (type === "human") return true;
  if (typeof type === "string" && type !== "generic") return false;
  return fields.role === "user" || fields.role === "human";
}

/**
 * The ids a human message's leading `tool_result` blocks answer, in order, when the message is an
 * Anthropic results turn: every `tool_result` block comes before any other block and has an id.
 * `undefined` otherwise (no such blocks, one after other content, or one without an id).
 */
export function leadingResultIdsOf(message: unknown): string[] | undefined {
  if (!hasResultBlocks(message)) return undefined;
  const content = (message as Fields).content as readonly unknown[];
  const ids: string[] = [];
  let leading = true;
  for (const block of content) {
    const fields = block as Fields | null;
    if (fields?.type !== "tool_result") {
      leading = false;
      continue;
    }
    const id = fields.tool_use_id;
    if (!leading || typeof id !== "string" || id === "") return undefined;
    ids.push(id);
  }
  return ids;
}

/** A history with its human results written out, and where each entry came from. */
export interface ExpandedHistory {
  readonly messages: readonly unknown[];
  /** For each entry, the index in the original history of the message it came from. */
  readonly origin: readonly number[];
  /** The entries that were `tool_result` blocks. */
  readonly extracted: ReadonlySet<unknown>;
}

/**
 * The history with every human message from `from` on that has `tool_result` blocks replaced by a
 * tool message per block, made by `make` (its content, its `tool_use_id`, `status: "error"` for
 * `is_error`), and then, when anything else is left, a copy of the message with the rest.
 * `undefined` when there is no such message.
 *
 * @example
 * ```ts
 * expandHumanResults([ai, human([{ type: "tool_result", tool_use_id: "t1", content: "42" }, text])], 0, newToolMessage);
 * // messages: [ai, ToolMessage(t1, "42"), human([text])], origin: [0, 1, 1]
 * ```
 */
export function expandHumanResults(
  messages: readonly unknown[],
  from: number,
  make: ToolMessageFactory,
): ExpandedHistory | undefined {
  let first = -1;
  for (let index = from; index < messages.length; index++) {
    if (hasResultBlocks(messages[index])) {
      first = index;
      break;
    }
  }
  if (first < 0) return undefined;
  const expanded: unknown[] = messages.slice(0, first);
  const origin: number[] = expanded.map((_, index) => index);
  const extracted = new Set<unknown>();
  for (let index = first; index < messages.length; index++) {
    const message = messages[index];
    if (!hasResultBlocks(message)) {
      expanded.push(message);
      origin.push(index);
      continue;
    }
    const fields = message as Fields;
    const rest: unknown[] = [];
    for (const block of fields.content as readonly unknown[]) {
      const blockFields = block as Fields | null;
      if (blockFields?.type !== "tool_result") {
        rest.push(block);
        continue;
      }
      const result = make(toolMessageFieldsOf(blockFields));
      extracted.add(result);
      expanded.push(result);
      origin.push(index);
    }
    if (rest.length > 0) {
      expanded.push(copyWith(fields, { content: rest }));
      origin.push(index);
    }
  }
  return { messages: expanded, origin, extracted };
}

function toolMessageFieldsOf(block: Fields): ToolMessageFields {
  const id = block.tool_use_id;
  const content = block.content;
  return {
    content: typeof content === "string" || Array.isArray(content) ? content : "",
    tool_call_id: typeof id === "string" ? id : "",
    ...(block.is_error === true ? { status: "error" as const } : {}),
  };
}
