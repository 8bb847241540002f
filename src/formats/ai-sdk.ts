/**
 * The Vercel AI SDK's `ModelMessage`: an assistant message makes calls with `tool-call` parts
 * (`toolCallId`, `toolName`, `input`), and `role: "tool"` messages answer them with `tool-result`
 * parts. Calls the provider ran itself (`providerExecuted`) carry their results with them and are
 * left alone, as is a tool-message result of one (a denied approval). A call of the client that
 * asked for approval counts as answered by its approval response where the AI SDK writes the
 * call's result after that response (or will: a response in the history's last message). Both are
 * read off the whole history, once, by the format made for it (`modelMessageFormatOf`).
 */
import type { ToolCallRepairOptions } from "../attach/options.js";
import { repairInFormat } from "./format.js";
import { groupedFormat, type Segment, withCallIds } from "./grouped.js";
import type {
  FormatCall,
  FormatRepairContext,
  FormatRepairResult,
  MessageFormat,
  MessagePart,
  PlaceholderResult,
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
const NO_IDS: ReadonlySet<string> = new Set();

/** A result, as the engine reads it. */
type ResultPart = Extract<MessagePart, { role: "tool" }>;

/** How the tool messages of one history are read. */
interface ToolMessageReading {
  /** The ids of the calls the provider runs: a tool-message result of one is another part. */
  readonly providerCallIds: ReadonlySet<string>;
  /** Approval responses read as the result of the client's call they answer. */
  readonly standIns?: ReadonlyMap<unknown, ResultPart>;
  /** Results read as other parts: an approval response before them stands for them. */
  readonly deferred?: ReadonlySet<unknown>;
}

const PLAIN_READING: ToolMessageReading = { providerCallIds: NO_IDS };

function segmentsOf(message: unknown, reading: ToolMessageReading): readonly Segment[] {
  const fields = recordOf(message);
  switch (fields?.role) {
    case "assistant": {
      const pieces = listOf(fields.content);
      return [{ part: { role: "assistant", calls: callsOf(pieces) }, pieces }];
    }
    case "tool":
      return toolSegmentsOf(listOf(fields.content), reading);
    case "user":
    case "system":
      return [{ part: { role: fields.role }, pieces: [] }];
    default:
      return [{ part: OTHER_PART, pieces: [] }];
  }
}

/**
 * A tool message's segments, for the `ModelMessage` format and the provider-level prompt's: each
 * `tool-result` part on its own, in order, then every other part (approval responses, results of
 * calls the provider runs) as one segment after them. The AI SDK may put an approval response
 * before its call's result (`convertToModelMessages` does, and the prompt joins consecutive tool
 * messages); read where it stands, it would part a call from its result, and a sound history
 * would count as repaired. An approval response of `standIns` reads as its call's result.
 *
 * @example
 * ```ts
 * toolSegmentsOf(message.content, { providerCallIds: providerExecutedCallIds(history) });
 * ```
 */
export function toolSegmentsOf(pieces: readonly unknown[], reading: ToolMessageReading): Segment[] {
  const segments: Segment[] = [];
  const others: unknown[] = [];
  for (const piece of pieces) {
    const part = reading.standIns?.get(piece) ?? resultPartOf(piece, reading);
    if (part === undefined) others.push(piece);
    else segments.push({ part, pieces: [piece] });
  }
  if (others.length > 0 || segments.length === 0) {
    segments.push({ part: OTHER_PART, pieces: others });
  }
  return segments;
}

/** A `tool-result` part as a result; none for a result read as another part. */
function resultPartOf(piece: unknown, reading: ToolMessageReading): ResultPart | undefined {
  const fields = recordOf(piece);
  if (fields?.type !== "tool-result" || reading.deferred?.has(piece) === true) return undefined;
  const toolCallId = stringOrUndefined(fields.toolCallId);
  if (toolCallId !== undefined && reading.providerCallIds.has(toolCallId)) return undefined;
  return { role: "tool", toolCallId, toolName: stringOrUndefined(fields.toolName) };
}

function isCall(part: unknown): boolean {
  const fields = recordOf(part);
  return fields?.type === "tool-call" && fields.providerExecuted !== true;
}

function callsOf(pieces: readonly unknown[]): FormatCall[] {
  return pieces.filter(isCall).map((piece) => {
    const fields = recordOf(piece) ?? {};
    return { id: stringOrUndefined(fields.toolCallId), name: stringOrUndefined(fields.toolName) };
  });
}

/**
 * The ids of the calls the provider runs (`tool-call` parts with `providerExecuted: true` in
 * assistant messages), but those a call of the client uses too: a tool-message result of one of
 * these ids answers the provider's call (the `execution-denied` result the AI SDK writes when the
 * user denies its approval), not a call of the client. For `ModelMessage`s and the provider-level
 * prompt alike. Never throws: a history that cannot be read has none.
 *
 * @example
 * ```ts
 * providerExecutedCallIds([
 *   { role: "assistant", content: [{ type: "tool-call", toolCallId: "mcp_1", toolName: "mcp.create_issue", input: {}, providerExecuted: true }] },
 * ]); // Set { "mcp_1" }
 * ```
 */
export function providerExecutedCallIds(messages: readonly unknown[]): ReadonlySet<string> {
  const provider = new Set<string>();
  const client = new Set<string>();
  try {
    for (const message of messages) {
      const fields = recordOf(message);
      if (fields?.role !== "assistant") continue;
      for (const piece of listOf(fields.content)) {
        const part = recordOf(piece);
        const id = part?.type === "tool-call" ? stringOrUndefined(part.toolCallId) : undefined;
        if (id !== undefined) (part?.providerExecuted === true ? provider : client).add(id);
      }
    }
  } catch {
    // The repair reads the history again, and reports what cannot be read.
    return NO_IDS;
  }
  for (const id of client) provider.delete(id);
  return provider;
}

/**
 * The results an assistant message's approval requests stand for, by approval id: those of its
 * calls of the client, but a call whose id the message uses twice (the repair gives it a new id).
 */
function approvalRequestsOf(pieces: readonly unknown[]): Map<string, ResultPart> {
  const calls = callsOf(pieces);
  const requests = new Map<string, ResultPart>();
  for (const piece of pieces) {
    const fields = recordOf(piece);
    const approvalId = stringOrUndefined(fields?.approvalId);
    if (fields?.type !== "tool-approval-request" || approvalId === undefined) continue;
    const toolCallId = stringOrUndefined(fields.toolCallId);
    const made = calls.filter((call) => call.id !== undefined && call.id === toolCallId);
    if (made.length === 1) {
      requests.set(approvalId, { role: "tool", toolCallId, toolName: made[0]?.name });
    }
  }
  return requests;
}

/**
 * Which approval responses stand for their call's result, and which results are then other parts.
 * The AI SDK answers a call of the client that asked for approval in two steps: the application
 * writes the approval response in a tool message, and `generateText` or `streamText`, given a
 * history ending in it, runs the call (or, denied, writes its `execution-denied` result) in a
 * tool message after it. So, in the tool messages right after the call's assistant message, an
 * approval response followed by its call's result stands for that result, which is read as
 * another part; one in the history's last message stands for the result the AI SDK will write.
 */
function approvalsOf(list: readonly unknown[]): Omit<ToolMessageReading, "providerCallIds"> {
  const standIns = new Map<unknown, ResultPart>();
  const deferred = new Set<unknown>();
  for (let at = 0; at < list.length; at++) {
    const fields = recordOf(list[at]);
    const requests = approvalRequestsOf(fields?.role === "assistant" ? listOf(fields.content) : []);
    if (requests.size === 0) continue;
    const answered = new Set<unknown>();
    const waiting = new Map<unknown, { piece: unknown; part: ResultPart; at: number }>();
    for (at++; at < list.length && recordOf(list[at])?.role === "tool"; at++) {
      const pieces = listOf(recordOf(list[at])?.content);
      // A tool message's results are read before its other parts.
      for (const piece of pieces) {
        const part = recordOf(piece);
        const id = part?.type === "tool-result" ? stringOrUndefined(part.toolCallId) : undefined;
        if (id === undefined || answered.has(id)) continue;
        answered.add(id);
        const approval = waiting.get(id);
        if (approval === undefined) continue;
        waiting.delete(id);
        standIns.set(approval.piece, approval.part);
        deferred.add(piece);
      }
      for (const piece of pieces) {
        const part = recordOf(piece);
        const call =
          part?.type === "tool-approval-response"
            ? requests.get(stringOrUndefined(part.approvalId) ?? "")
            : undefined;
        if (call === undefined || answered.has(call.toolCallId) || waiting.has(call.toolCallId))
          continue;
        waiting.set(call.toolCallId, { piece, part: call, at });
      }
    }
    for (const approval of waiting.values()) {
      if (approval.at === list.length - 1) standIns.set(approval.piece, approval.part);
    }
    at--;
  }
  const read = new Set([...standIns.keys(), ...deferred]);
  return standIns.size > 0 && eachOnce(list, read) ? { standIns, deferred } : {};
}

/** Whether each of these parts stands once in the history's tool messages (read by identity). */
function eachOnce(list: readonly unknown[], parts: ReadonlySet<unknown>): boolean {
  const seen = new Set<unknown>();
  for (const message of list) {
    const fields = recordOf(message);
    for (const piece of fields?.role === "tool" ? listOf(fields.content) : []) {
      if (seen.has(piece)) return false;
      if (parts.has(piece)) seen.add(piece);
    }
  }
  return true;
}

/** How this history's tool messages are read. Never throws: one that cannot be read, plainly. */
function readingOf(messages: readonly unknown[]): ToolMessageReading {
  const providerCallIds = providerExecutedCallIds(messages);
  let approvals: Omit<ToolMessageReading, "providerCallIds"> = {};
  try {
    approvals = approvalsOf(Array.from(messages));
  } catch {
    // The repair reads the history again, and reports what cannot be read.
  }
  if (providerCallIds.size === 0 && approvals.standIns === undefined) return PLAIN_READING;
  return { providerCallIds, ...approvals };
}

function formatWith(reading: ToolMessageReading): MessageFormat<unknown> {
  return groupedFormat({
    name: "ai-sdk",
    provider: undefined,
    segmentsOf: (message) => segmentsOf(message, reading),
    joinsResults: (message) => recordOf(message)?.role === "tool",
    messageWith: (pieces, source) => ({ ...recordOf(source), role: "tool", content: [...pieces] }),
    placeholderPiece: modelPlaceholderPart,
    // An approval response that stands for a result names no call: it keeps its fields.
    resultPieceWithId: (part, toolCallId) =>
      recordOf(part)?.type === "tool-result" ? { ...recordOf(part), toolCallId } : part,
    callsWithIds: (message, ids, names) =>
      withCallIds(message, ids, names, isCall, { id: "toolCallId", name: "toolName" }),
  });
}

/**
 * The `tool-result` part a placeholder is, in a `ModelMessage` tool message and in the
 * provider-level prompt alike: `output: { type: "error-text" }` with the placeholder's text, and,
 * with `markSynthetic`, the marker under {@link AI_SDK_MARKER_KEY}.
 *
 * @example
 * ```ts
 * modelPlaceholderPart({ toolCallId: "c1", toolName: "search", text: "…", reason: "interrupted", synthetic: true });
 * ```
 */
export function modelPlaceholderPart(placeholder: PlaceholderResult): ModelToolResultPlaceholder {
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
}

/**
 * The AI SDK `ModelMessage` format, as {@link repairModelMessages} reads and writes it: a worked
 * {@link MessageFormat} of a format whose results are parts of a tool message, and a base for your
 * own when your messages wrap the AI SDK's.
 *
 * It reads one message at a time, so it cannot know which ids belong to calls the provider runs,
 * nor which approval response stands for its call's result: a tool-message result of a
 * provider-executed call reads as an orphan, and a call of the client waiting on its approval as
 * a call without a result. {@link modelMessageFormatOf} gives the format that knows them, for one
 * history; `repairModelMessages` repairs with it.
 *
 * @example
 * ```ts
 * const { messages } = repairInFormat(modelMessageFormat, history, options, { model: "gpt-4.1" });
 * ```
 */
export const modelMessageFormat = formatWith(PLAIN_READING);

/**
 * The format to repair this `ModelMessage` history with: {@link modelMessageFormat}, knowing the
 * history's calls.
 *
 * - A tool-message result whose id only a provider-executed call of the history has (the
 *   `execution-denied` result the AI SDK writes when the user denies the approval of an MCP
 *   tool) answers that call: it is left where it is, not dropped as an orphan.
 * - A call of the client that asked for approval (`tool-approval-request`) is answered by the
 *   tool message holding the approval response (`tool-approval-response`), when its result follows
 *   in the tool messages right after, as `generateText` and `streamText` write it, or when that
 *   approval response is in the history's last message, which the AI SDK answers itself (it runs
 *   the call, or writes its denial) before the model sees it: no placeholder is inserted for it,
 *   and its result is not moved.
 *
 * @example
 * ```ts
 * const { messages } = repairInFormat(modelMessageFormatOf(history), history, { logger: false });
 * ```
 */
export function modelMessageFormatOf(messages: readonly unknown[]): MessageFormat<unknown> {
  const reading = readingOf(messages);
  return reading === PLAIN_READING ? modelMessageFormat : formatWith(reading);
}

/**
 * Repairs a history of AI SDK `ModelMessage`s (what `generateText`, `streamText` and agents take
 * as `messages`): each `tool-call` without a `tool-result` gets one (`output: { type:
 * "error-text" }`, the placeholder text) in a tool message right after its assistant message;
 * misplaced results are moved there, orphans dropped and missing ids assigned, as the options
 * say. Results of provider-executed calls and pending approvals stay as they are (see
 * {@link modelMessageFormatOf}). With `markSynthetic` (the default) a placeholder part carries
 * `providerOptions["tool-call-resilience"] = { synthetic: true, reason }`. Same engine, policy,
 * logging and telemetry as the `createAgent` middleware. Messages that needed nothing come back
 * as the same objects; the input array itself when nothing needed repair.
 *
 * @param options - the shared options, validated once per options object (keep one)
 * @param context - `threadId`, `model`, `tools`, `locale` of this call
 * @throws {ToolCallResilienceOptionsError} when an option is invalid, or `messages` is the object
 *   that holds the history (a request's parameters) rather than the array
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
  const format = modelMessageFormatOf(messages);
  return repairInFormat(format, messages, options, context) as FormatRepairResult<
    M | ModelToolMessage<M>
  >;
}
