/**
 * The Vercel AI SDK's `ModelMessage`: an assistant message makes calls with `tool-call` parts
 * (`toolCallId`, `toolName`, `input`), and `role: "tool"` messages answer them with `tool-result`
 * parts. Calls the provider ran itself (`providerExecuted`) carry their results with them and are
 * left alone.
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

/**
 * The `providerOptions` key of the marker on a placeholder part, with `markSynthetic` on:
 * `{ "tool-call-resilience": { synthetic: true, reason } }`. Providers read only their own keys.
 *
 * @example
 * ```ts
 * part.providerOptions?.[AI_SDK_MARKER_KEY]?.synthetic === true; // inserted by this library
 * ```
 */
export const AI_SDK_MARKER_KEY = "tool-call-resilience";

/** The `tool-result` part a placeholder is. */
export interface ModelToolResultPlaceholder {
  type: "tool-result";
  toolCallId: string;
  toolName: string;
  output: { type: "error-text"; value: string };
  providerOptions?: Record<string, Record<string, string | boolean>>;
}

/** The parts a tool message of the history's own type holds. */
type ToolPartOf<M> = M extends { role: "tool"; content: ReadonlyArray<infer P> } ? P : never;

/**
 * A tool message holding placeholders, perhaps with results of the original message: a
 * `ToolModelMessage` of the AI SDK when the history is typed as `ModelMessage[]`.
 */
export interface ModelToolMessage<M = unknown> {
  role: "tool";
  content: Array<ModelToolResultPlaceholder | ToolPartOf<M>>;
}

const OTHER_PART: MessagePart = { role: "other" };
const OTHER: Segment = { part: OTHER_PART, pieces: [] };

function segmentsOf(message: unknown): readonly Segment[] {
  const fields = recordOf(message);
  switch (fields?.role) {
    case "assistant":
      return [
        {
          part: { role: "assistant", calls: callsOf(fields.content) },
          pieces: listOf(fields.content),
        },
      ];
    case "tool":
      return segmentPieces(listOf(fields.content), resultOf, OTHER_PART);
    case "user":
      return [{ part: { role: "user" }, pieces: [] }];
    case "system":
      return [{ part: { role: "system" }, pieces: [] }];
    default:
      return [OTHER];
  }
}

function resultOf(part: unknown): MessagePart | undefined {
  const fields = recordOf(part);
  if (fields?.type !== "tool-result") return undefined;
  return {
    role: "tool",
    toolCallId: stringOrUndefined(fields.toolCallId),
    toolName: stringOrUndefined(fields.toolName),
  };
}

function isCall(part: unknown): boolean {
  const fields = recordOf(part);
  return fields?.type === "tool-call" && fields.providerExecuted !== true;
}

function callsOf(content: unknown): FormatCall[] {
  const calls: FormatCall[] = [];
  for (const part of listOf(content)) {
    if (!isCall(part)) continue;
    const fields = recordOf(part) ?? {};
    calls.push({
      id: stringOrUndefined(fields.toolCallId),
      name: stringOrUndefined(fields.toolName),
    });
  }
  return calls;
}

/**
 * The AI SDK `ModelMessage` format, as {@link repairModelMessages} reads and writes it: a worked
 * {@link MessageFormat} of a format whose results are parts of a tool message, and a base for your
 * own when your messages wrap the AI SDK's.
 *
 * @example
 * ```ts
 * const { messages } = repairInFormat(modelMessageFormat, history, options, { model: "gpt-4.1" });
 * ```
 */
export const modelMessageFormat = groupedFormat({
  name: "ai-sdk",
  provider: undefined,
  segmentsOf,
  joinsResults: (message) => recordOf(message)?.role === "tool",
  messageWith: (pieces, source) => ({ ...recordOf(source), role: "tool", content: [...pieces] }),
  placeholderPiece: (placeholder): ModelToolResultPlaceholder => {
    const part: ModelToolResultPlaceholder = {
      type: "tool-result",
      toolCallId: placeholder.toolCallId,
      toolName: placeholder.toolName,
      output: { type: "error-text", value: placeholder.text },
    };
    if (placeholder.synthetic) {
      part.providerOptions = {
        [AI_SDK_MARKER_KEY]: { synthetic: true, reason: placeholder.reason },
      };
    }
    return part;
  },
  resultPieceWithId: (part, toolCallId) => ({ ...recordOf(part), toolCallId }),
  callsWithIds: (message, ids, names) =>
    withCallIds(message, ids, names, isCall, { id: "toolCallId", name: "toolName" }),
});

/**
 * Repairs a history of AI SDK `ModelMessage`s (what `generateText`, `streamText` and agents take
 * as `messages`): each `tool-call` without a `tool-result` gets one (`output: { type:
 * "error-text" }`, the placeholder text) in a tool message right after its assistant message;
 * misplaced results are moved there, orphans dropped and missing ids assigned, as the options
 * say. With `markSynthetic` (the default) a placeholder part carries
 * `providerOptions["tool-call-resilience"] = { synthetic: true, reason }`. Same engine, policy,
 * logging and telemetry as the `createAgent` middleware. Messages that needed nothing come back
 * as the same objects; the input array itself when nothing needed repair.
 *
 * @param options - the shared options, validated once per options object (keep one)
 * @param context - `threadId`, `model`, `tools`, `locale` of this call
 * @throws {ToolCallResilienceOptionsError} when an option is invalid
 *
 * @example
 * ```ts
 * import { generateText } from "ai";
 * import { repairModelMessages } from "tool-call-resilience/formats";
 *
 * const { messages } = repairModelMessages(history, { logger: false }, { threadId });
 * const result = await generateText({ model, tools, messages });
 * ```
 */
export function repairModelMessages<M>(
  messages: readonly M[],
  options?: ToolCallRepairOptions,
  context?: FormatRepairContext,
): FormatRepairResult<M | ModelToolMessage<M>> {
  return repairInFormat(modelMessageFormat, messages, options, context) as FormatRepairResult<
    M | ModelToolMessage<M>
  >;
}
