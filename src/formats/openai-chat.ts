/**
 * OpenAI Chat Completions messages: an assistant message lists its calls in `tool_calls`
 * (`id`, `function.name`, `function.arguments`), and each result is a `role: "tool"` message with
 * the `tool_call_id` it answers.
 */
import type { ToolCallRepairOptions } from "../attach/options.js";
import { repairInFormat } from "./format.js";
import type {
  FormatCall,
  FormatRepairContext,
  FormatRepairResult,
  MessageFormat,
  MessagePart,
  RepairedItem,
  WrittenMessage,
} from "./message-format.js";
import { isParsableJson, listOf, recordOf, stringOrUndefined } from "./read.js";

/** The placeholder this adapter writes: a tool message (the format has no field for a marker). */
export interface OpenAIChatToolMessage {
  role: "tool";
  tool_call_id: string;
  content: string;
}

/**
 * The OpenAI Chat Completions format, as {@link repairOpenAIChatMessages} reads and writes it: a
 * worked {@link MessageFormat}, and a base for your own when your messages wrap OpenAI's (for
 * example a stored record holding the message in a field).
 *
 * @example
 * ```ts
 * const storedFormat: MessageFormat<StoredMessage> = {
 *   ...openAIChatFormat,
 *   name: "stored-openai-chat",
 *   partsOf: (record) => openAIChatFormat.partsOf(record.message),
 *   write: (items) => ..., // your records for the repaired sequence
 * };
 * ```
 */
export const openAIChatFormat: MessageFormat<unknown> = Object.freeze({
  name: "openai-chat",
  provider: "openai",
  partsOf: (message: unknown) => [partOf(message)],
  write: (items: readonly RepairedItem<unknown>[]) =>
    items.map((item, index) => written(item, index)),
});

function partOf(message: unknown): MessagePart {
  const fields = recordOf(message);
  switch (fields?.role) {
    case "assistant":
      return { role: "assistant", calls: callsOf(fields.tool_calls) };
    case "tool":
      return { role: "tool", toolCallId: stringOrUndefined(fields.tool_call_id) };
    case "user":
      return { role: "user" };
    case "system":
    case "developer":
      return { role: "system" };
    default:
      return { role: "other" };
  }
}

function callsOf(toolCalls: unknown): FormatCall[] {
  const calls: FormatCall[] = [];
  for (const entry of listOf(toolCalls)) {
    const call = recordOf(entry);
    if (call === undefined) continue;
    const fn = recordOf(call.function);
    calls.push({
      id: stringOrUndefined(call.id),
      name: stringOrUndefined(fn?.name),
      invalidArguments: typeof fn?.arguments === "string" && !isParsableJson(fn.arguments),
    });
  }
  return calls;
}

function written(item: RepairedItem<unknown>, index: number): WrittenMessage<unknown> {
  const items = [index];
  switch (item.kind) {
    case "message":
    case "part":
      return { message: item.message, items };
    case "renamed_calls": {
      const fields = recordOf(item.message) ?? {};
      let next = 0;
      const toolCalls = listOf(fields.tool_calls).map((entry) => {
        const call = recordOf(entry);
        if (call === undefined) return entry;
        const position = next++;
        const fn = recordOf(call.function);
        return {
          ...call,
          id: item.ids[position],
          function: { ...fn, name: item.names[position] },
        };
      });
      return { message: { ...fields, tool_calls: toolCalls }, items };
    }
    case "renamed_result":
      return { message: { ...recordOf(item.message), tool_call_id: item.toolCallId }, items };
    case "placeholder": {
      const placeholder: OpenAIChatToolMessage = {
        role: "tool",
        tool_call_id: item.placeholder.toolCallId,
        content: item.placeholder.text,
      };
      return { message: placeholder, items };
    }
  }
}

/**
 * Repairs a history of OpenAI Chat Completions messages before it is sent: each call without a
 * result gets a `role: "tool"` message right after its assistant message, misplaced results are
 * moved back, orphans dropped and missing ids assigned, as the options say. Same engine, policy,
 * logging and telemetry as the `createAgent` middleware. Messages that needed nothing come back
 * as the same objects; the input array itself when nothing needed repair.
 *
 * The format has no field for the synthetic marker, so `markSynthetic` marks nothing here; the
 * returned `repairs` list every inserted message by `outputIndex`.
 *
 * @param options - the shared options, validated once per options object (keep one)
 * @param context - `threadId`, `model`, `tools`, `locale` of this call
 * @throws {ToolCallResilienceOptionsError} when an option is invalid, or `messages` is the object
 *   that holds the history (a request's parameters) rather than the array
 *
 * @example
 * ```ts
 * import OpenAI from "openai";
 * import { repairOpenAIChatMessages } from "tool-call-resilience/formats";
 *
 * const { messages } = repairOpenAIChatMessages(history, { logger: false }, { model: "gpt-4.1" });
 * await new OpenAI().chat.completions.create({ model: "gpt-4.1", messages, tools });
 * ```
 */
export function repairOpenAIChatMessages<M>(
  messages: readonly M[],
  options?: ToolCallRepairOptions,
  context?: FormatRepairContext,
): FormatRepairResult<M | OpenAIChatToolMessage> {
  return repairInFormat(openAIChatFormat, messages, options, context) as FormatRepairResult<
    M | OpenAIChatToolMessage
  >;
}
