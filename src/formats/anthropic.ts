/**
 * Anthropic Messages: an assistant message makes calls with `tool_use` content blocks (`id`,
 * `name`, `input`), and the next user message answers them with `tool_result` blocks
 * (`tool_use_id`), before any other block.
 */
import type { ToolCallRepairOptions } from "../attach/options.js";
import { repairInFormat } from "./format.js";
import { groupedFormat, type Segment, segmentPieces, withCallIds } from "./grouped.js";
import type {
  FormatCall,
  FormatRepairContext,
  FormatRepairResult,
  MessagePart,
} from "./message-format.js";
import { listOf, recordOf, stringOrUndefined } from "./read.js";

/** The `tool_result` block a placeholder is (the format has no field for a marker). */
export interface AnthropicToolResultBlock {
  type: "tool_result";
  tool_use_id: string;
  content: string;
  is_error: true;
}

/** The content blocks a user message of the history's own type holds. */
type UserBlockOf<M> = M extends { role: "user"; content: infer C }
  ? C extends ReadonlyArray<infer B>
    ? B
    : never
  : never;

/**
 * A user message holding placeholders, perhaps with results and text of the original message: a
 * `MessageParam` of the Anthropic SDK when the history is typed as `MessageParam[]`.
 */
export interface AnthropicUserMessage<M = unknown> {
  role: "user";
  content: Array<AnthropicToolResultBlock | UserBlockOf<M>>;
}

const USER: MessagePart = { role: "user" };
const OTHER: Segment = { part: { role: "other" }, pieces: [] };

function segmentsOf(message: unknown): readonly Segment[] {
  const fields = recordOf(message);
  if (fields === undefined) return [OTHER];
  const content = fields.content;
  if (fields.role === "assistant") {
    return [{ part: { role: "assistant", calls: callsOf(content) }, pieces: listOf(content) }];
  }
  if (fields.role !== "user") return [OTHER];
  if (!Array.isArray(content)) return [{ part: USER, pieces: [] }];
  return segmentPieces(content, resultOf, USER);
}

function resultOf(block: unknown): MessagePart | undefined {
  const fields = recordOf(block);
  if (fields?.type !== "tool_result") return undefined;
  return { role: "tool", toolCallId: stringOrUndefined(fields.tool_use_id) };
}

function isCall(block: unknown): boolean {
  return recordOf(block)?.type === "tool_use";
}

function callsOf(content: unknown): FormatCall[] {
  const calls: FormatCall[] = [];
  for (const block of listOf(content)) {
    if (!isCall(block)) continue;
    const fields = recordOf(block) ?? {};
    const input = fields.input;
    calls.push({
      id: stringOrUndefined(fields.id),
      name: stringOrUndefined(fields.name),
      // A stream cut off mid-call leaves the input as partial JSON text.
      invalidArguments: input !== undefined && recordOf(input) === undefined,
    });
  }
  return calls;
}

/**
 * The Anthropic Messages format, as {@link repairAnthropicMessages} reads and writes it: a worked
 * {@link MessageFormat} of a format whose results are blocks of a user message, and a base for your
 * own when your messages wrap Anthropic's.
 *
 * @example
 * ```ts
 * const { messages } = repairInFormat(anthropicFormat, history, options, { model: "claude-sonnet-4-5" });
 * ```
 */
export const anthropicFormat = groupedFormat({
  name: "anthropic",
  provider: "anthropic",
  segmentsOf,
  joinsResults: (message, segment) =>
    recordOf(message)?.role === "user" && segment.part.role === "user",
  messageWith: (pieces, source) => ({ ...recordOf(source), role: "user", content: [...pieces] }),
  placeholderPiece: (placeholder): AnthropicToolResultBlock => ({
    type: "tool_result",
    tool_use_id: placeholder.toolCallId,
    content: placeholder.text,
    is_error: true,
  }),
  resultPieceWithId: (block, toolCallId) => ({ ...recordOf(block), tool_use_id: toolCallId }),
  callsWithIds: (message, ids, names) =>
    withCallIds(message, ids, names, isCall, { id: "id", name: "name" }),
});

/**
 * Repairs a history of Anthropic Messages before it is sent: each `tool_use` without a
 * `tool_result` gets one (`is_error: true`, the placeholder text) in the user message right after
 * its assistant message, ahead of that message's text; misplaced results are moved there, orphans
 * dropped and missing ids assigned, as the options say. Same engine, policy, logging and telemetry
 * as the `createAgent` middleware; `window` counts messages. Messages that needed nothing come
 * back as the same objects; the input array itself when nothing needed repair.
 *
 * Content blocks take no extra fields, so `markSynthetic` marks nothing here; the returned
 * `repairs` list every placeholder, with the index of the message that holds it.
 *
 * @param options - the shared options, validated once per options object (keep one)
 * @param context - `threadId`, `model`, `tools`, `locale` of this call
 * @throws {ToolCallResilienceOptionsError} when an option is invalid, or `messages` is the object
 *   that holds the history (a request's parameters) rather than the array
 *
 * @example
 * ```ts
 * import Anthropic from "@anthropic-ai/sdk";
 * import { repairAnthropicMessages } from "tool-call-resilience/formats";
 *
 * const { messages } = repairAnthropicMessages(history, { logger: false });
 * await new Anthropic().messages.create({ model: "claude-sonnet-4-5", max_tokens: 1024, messages, tools });
 * ```
 */
export function repairAnthropicMessages<M>(
  messages: readonly M[],
  options?: ToolCallRepairOptions,
  context?: FormatRepairContext,
): FormatRepairResult<M | AnthropicUserMessage<M>> {
  return repairInFormat(anthropicFormat, messages, options, context) as FormatRepairResult<
    M | AnthropicUserMessage<M>
  >;
}
