/**
 * The AI SDK's language model interface as the middleware reads it, declared here so that nothing
 * loads the AI SDK: a model's identity, a call's params, a generated or streamed answer, what
 * `wrapLanguageModel` hands a middleware; and the provider-level prompt (`LanguageModelV3Prompt`
 * of `@ai-sdk/provider`) as a message format. The prompt is what `transformParams` receives as
 * `params.prompt`, after `generateText` or `streamText` converted the caller's `ModelMessage`s,
 * and what a provider package turns into its request body:
 *
 * - `system`: `{ role: "system", content: string }`;
 * - `user`: text and file parts;
 * - `assistant`: text, file and reasoning parts, `tool-call` parts (`toolCallId`, `toolName`,
 *   `input`, `providerExecuted`), and `tool-result` parts of the calls the provider ran itself;
 * - `tool`: `tool-result` parts (`output: { type: "text" | "json" | "error-text" | "error-json" |
 *   "content" | "execution-denied", … }`) and `tool-approval-response` parts (`approvalId`,
 *   `approved`, `reason`).
 *
 * A call the provider runs (`providerExecuted`) may be answered in a tool message too: when its
 * approval is denied, `generateText` and `streamText` write its `execution-denied` result there.
 *
 * Each message and part may carry `providerOptions`. The prompt is the `ModelMessage` shape with
 * its strings turned into parts, its approval requests taken out and its consecutive tool messages
 * joined into one, so it is read and written by the grouped writer `repairModelMessages` uses too
 * (`src/formats/grouped.ts`).
 */
import {
  type ModelToolResultPlaceholder,
  modelPlaceholderPart,
  providerExecutedCallIds,
  toolSegmentsOf,
} from "../formats/ai-sdk.js";
import { groupedFormat, type Segment, withCallIds } from "../formats/grouped.js";
import type { FormatCall, MessageFormat, MessagePart } from "../formats/message-format.js";
import { listOf, recordOf, stringOrUndefined } from "../formats/read.js";

/** Provider-specific options on a prompt message or part: `SharedV3ProviderOptions`. */
export type PromptProviderOptions = Readonly<Record<string, Readonly<Record<string, unknown>>>>;

/** A part of a prompt message, as far as tool calling reads it; other fields travel as they are. */
export interface PromptPart {
  readonly type: string;
  readonly providerOptions?: PromptProviderOptions;
}

/** A call in an assistant message: `LanguageModelV3ToolCallPart`. */
export interface PromptToolCallPart extends PromptPart {
  readonly type: "tool-call";
  readonly toolCallId: string;
  readonly toolName: string;
  readonly input: unknown;
  /** Set when the provider runs the call itself: its result comes in the assistant message. */
  readonly providerExecuted?: boolean;
}

/** A result in a tool (or, for a provider-executed call, assistant) message. */
export interface PromptToolResultPart extends PromptPart {
  readonly type: "tool-result";
  readonly toolCallId: string;
  readonly toolName: string;
  readonly output: { readonly type: string; readonly value?: unknown; readonly reason?: string };
}

/** A user's answer to a provider-executed call that asked for approval. */
export interface PromptToolApprovalResponsePart extends PromptPart {
  readonly type: "tool-approval-response";
  readonly approvalId: string;
  readonly approved: boolean;
  readonly reason?: string;
}

/**
 * One message of the provider-level prompt: `LanguageModelV3Message`, declared structurally so
 * that `@ai-sdk/provider`'s own type is assignable to it.
 */
export type PromptMessage =
  | {
      readonly role: "system";
      readonly content: string;
      readonly providerOptions?: PromptProviderOptions;
    }
  | {
      readonly role: "user" | "assistant";
      readonly content: readonly PromptPart[];
      readonly providerOptions?: PromptProviderOptions;
    }
  | {
      readonly role: "tool";
      readonly content: readonly PromptPart[];
      readonly providerOptions?: PromptProviderOptions;
    };

/**
 * What the middleware reads of a model: `LanguageModelV3`'s `provider` (`"openai.responses"`,
 * recorded as its `gen_ai.provider.name`) and `modelId` (recorded as `gen_ai.request.model`).
 *
 * @example
 * ```ts
 * const model: AiSdkLanguageModel = openai("gpt-4.1");
 * ```
 */
export interface AiSdkLanguageModel {
  readonly provider: string;
  readonly modelId: string;
}

/**
 * What the middleware reads of a call's parameters (`LanguageModelV3CallOptions`): the prompt it
 * repairs, the tools offered (for the per-tool labels), and the thread the call names, in
 * `providerOptions.toolCallResilience.threadId` or else the `x-tool-call-resilience-thread-id`
 * header. Everything else is passed on as it came.
 *
 * @example
 * ```ts
 * const params: AiSdkCallParams = {
 *   prompt: [{ role: "user", content: [{ type: "text", text: "hi" }] }],
 *   providerOptions: { toolCallResilience: { threadId: "thread-1" } },
 * };
 * ```
 */
export interface AiSdkCallParams {
  readonly prompt: readonly PromptMessage[];
  readonly tools?: readonly { readonly type: string; readonly name: string }[];
  readonly headers?: Readonly<Record<string, string | undefined>>;
  readonly providerOptions?: PromptProviderOptions;
}

/**
 * What the middleware reads of a generated answer (`LanguageModelV3GenerateResult`): its content
 * parts, whose `tool-call` parts it counts.
 *
 * @example
 * ```ts
 * const result: AiSdkGenerateResult = { content: [{ type: "text", text: "Hi." }] };
 * ```
 */
export interface AiSdkGenerateResult {
  readonly content: readonly unknown[];
}

/**
 * What the middleware reads of a streamed answer (`LanguageModelV3StreamResult`): its stream of
 * parts, passed on unchanged, whose `tool-call` parts it counts once the stream has ended.
 *
 * @example
 * ```ts
 * const result: AiSdkStreamResult = { stream: new ReadableStream() };
 * ```
 */
export interface AiSdkStreamResult {
  readonly stream: ReadableStream<unknown>;
}

/**
 * What `transformParams` is given (`wrapLanguageModel` passes the operation's `type` too).
 *
 * @example
 * ```ts
 * await repair.transformParams({ type: "generate", params, model });
 * ```
 */
export interface TransformParamsOptions<P extends AiSdkCallParams> {
  readonly type?: "generate" | "stream";
  readonly params: P;
  readonly model: AiSdkLanguageModel;
}

/**
 * What `wrapGenerate` is given: the model's `doGenerate`, and the params `transformParams`
 * returned, which tell it which model call the answer belongs to.
 *
 * @example
 * ```ts
 * await repair.wrapGenerate({ doGenerate: () => model.doGenerate(params), params, model });
 * ```
 */
export interface WrapGenerateOptions<R extends AiSdkGenerateResult> {
  readonly doGenerate: () => PromiseLike<R>;
  readonly params: AiSdkCallParams;
  readonly model: AiSdkLanguageModel;
}

/**
 * What `wrapStream` is given: the model's `doStream`, and the params `transformParams` returned.
 *
 * @example
 * ```ts
 * await repair.wrapStream({ doStream: () => model.doStream(params), params, model });
 * ```
 */
export interface WrapStreamOptions<R extends AiSdkStreamResult> {
  readonly doStream: () => PromiseLike<R>;
  readonly params: AiSdkCallParams;
  readonly model: AiSdkLanguageModel;
}

/**
 * The tool message a repair writes: placeholders, perhaps with the results and approval responses
 * of the tool message they joined.
 */
export interface PromptToolMessage {
  role: "tool";
  content: Array<ModelToolResultPlaceholder | PromptPart>;
  providerOptions?: PromptProviderOptions;
}

const OTHER_PART: MessagePart = { role: "other" };
const OTHER: readonly Segment[] = [{ part: OTHER_PART, pieces: [] }];
const USER: readonly Segment[] = [{ part: { role: "user" }, pieces: [] }];
const SYSTEM: readonly Segment[] = [{ part: { role: "system" }, pieces: [] }];
const NO_IDS: ReadonlySet<string> = new Set();

/** Whether a piece is a call the client runs: a `tool-call` part the provider does not run. */
function isCall(piece: unknown): boolean {
  const fields = recordOf(piece);
  return fields?.type === "tool-call" && fields.providerExecuted !== true;
}

function callsOf(pieces: readonly unknown[]): FormatCall[] {
  const calls: FormatCall[] = [];
  for (const piece of pieces) {
    if (!isCall(piece)) continue;
    const fields = recordOf(piece) ?? {};
    calls.push({
      id: stringOrUndefined(fields.toolCallId),
      name: stringOrUndefined(fields.toolName),
    });
  }
  return calls;
}

function segmentsOf(message: unknown, providerCallIds: ReadonlySet<string>): readonly Segment[] {
  const fields = recordOf(message);
  switch (fields?.role) {
    case "assistant": {
      const pieces = listOf(fields.content);
      return [{ part: { role: "assistant", calls: callsOf(pieces) }, pieces }];
    }
    case "tool":
      return toolSegmentsOf(listOf(fields.content), { providerCallIds });
    case "user":
      return USER;
    case "system":
      return SYSTEM;
    default:
      return OTHER;
  }
}

/** The format, reading the tool-message results of the calls with these ids as other parts. */
function promptFormatWith(providerCallIds: ReadonlySet<string>): MessageFormat<PromptMessage> {
  return groupedFormat({
    name: "ai-sdk-prompt",
    provider: undefined,
    segmentsOf: (message) => segmentsOf(message, providerCallIds),
    joinsResults: (message) => recordOf(message)?.role === "tool",
    messageWith: (pieces, source): PromptToolMessage => ({
      ...recordOf(source),
      role: "tool",
      content: [...(pieces as PromptPart[])],
    }),
    placeholderPiece: modelPlaceholderPart,
    resultPieceWithId: (piece, toolCallId) => ({ ...recordOf(piece), toolCallId }),
    callsWithIds: (message, ids, names) =>
      withCallIds(message, ids, names, isCall, { id: "toolCallId", name: "toolName" }),
  }) as MessageFormat<PromptMessage>;
}

/**
 * The provider-level prompt of the AI SDK as a {@link MessageFormat}, for a prompt in which no
 * tool message answers a call the provider runs; {@link languageModelPromptFormatOf} gives the
 * format for any prompt, and is what the middleware repairs with. It reads:
 *
 * - a `tool-call` part without `providerExecuted` as a call; the provider's own calls and their
 *   results (in the assistant message) are left alone, as the AI SDK's own prompt check leaves
 *   them: a provider may continue such a call on the next request (Anthropic's `pause_turn`, an
 *   approval), and only the provider can answer it;
 * - a `tool-result` part of a tool message as a result; the tool message's other parts
 *   (`tool-approval-response`) are read after its results, and stay in a tool message.
 *
 * A placeholder is a `tool-result` part with `output: { type: "error-text", value }` in the tool
 * message right after its call's assistant message. Every provider package takes `error-text`
 * (the OpenAI ones send its text as the call's output, Anthropic's an `is_error` result), it tells
 * the model that the tool did not succeed, and it is what `repairModelMessages` writes. With
 * `markSynthetic` it carries `providerOptions["tool-call-resilience"] = { synthetic: true, reason }`,
 * which providers ignore. Messages that needed nothing come back as the same objects.
 *
 * @example
 * ```ts
 * const { messages } = repairInFormat(languageModelPromptFormat, prompt, { logger: false });
 * ```
 */
export const languageModelPromptFormat: MessageFormat<PromptMessage> = promptFormatWith(NO_IDS);

/**
 * The format to repair this prompt with: {@link languageModelPromptFormat}, reading a tool-message
 * result of a call the provider runs as a part of the tool message to leave alone, not as a
 * result. When an approval of a provider-executed call (an MCP tool) is denied, the AI SDK answers
 * that call with an `execution-denied` result in a tool message, which the provider reads; no call
 * of the client makes it, and read as a result it would be dropped as an orphan.
 *
 * @example
 * ```ts
 * const format = languageModelPromptFormatOf(params.prompt);
 * const { messages } = repairInFormat(format, params.prompt, { logger: false });
 * ```
 */
export function languageModelPromptFormatOf(
  prompt: readonly PromptMessage[],
): MessageFormat<PromptMessage> {
  const ids = providerExecutedCallIds(prompt);
  return ids.size === 0 ? languageModelPromptFormat : promptFormatWith(ids);
}
