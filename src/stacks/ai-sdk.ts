/**
 * tool-call-resilience/ai-sdk: a language model middleware for the Vercel AI SDK (`ai` 6,
 * `wrapLanguageModel`), with the engine, policy, logging, fail-open and telemetry every other
 * attachment has. It repairs the provider-level prompt of each model call and counts the tool
 * calls of its answer, generated or streamed. Nothing here loads the AI SDK: its interfaces are
 * declared structurally, and the middleware is assignable to its `LanguageModelMiddleware`.
 *
 * @example
 * ```ts
 * import { generateText, wrapLanguageModel } from "ai";
 * import { openai } from "@ai-sdk/openai";
 * import { toolCallRepairMiddleware } from "tool-call-resilience/ai-sdk";
 *
 * const repair = toolCallRepairMiddleware({ locale: "de" });
 * const model = wrapLanguageModel({ model: openai("gpt-4.1"), middleware: repair });
 * const { messages } = repair.repairMessages(history, { threadId });
 * await generateText({ model, messages, tools, providerOptions: { toolCallResilience: { threadId } } });
 * ```
 */
import { logFailedOpen } from "../attach/logging.js";
import { type ToolCallRepairOptions, toolCallRepairOptionsSchema } from "../attach/options.js";
import { recordFailedOpen, repairerFrom } from "../attach/repairer.js";
import { optionsError } from "../core/errors.js";
import { type ModelToolMessage, modelMessageFormatOf } from "../formats/ai-sdk.js";
import {
  formatRequestOf,
  PLAIN_MESSAGES,
  type PreparedFormatCall,
  prepareInFormat,
} from "../formats/format.js";
import type { FormatRepairResult } from "../formats/message-format.js";
import {
  answerMessageOf,
  callContextOf,
  ModelCallTelemetry,
  observedStream,
} from "./ai-sdk-calls.js";
import {
  type AiSdkCallParams,
  type AiSdkGenerateResult,
  type AiSdkStreamResult,
  languageModelPromptFormat,
  languageModelPromptFormatOf,
  type PromptMessage,
  type TransformParamsOptions,
  type WrapGenerateOptions,
  type WrapStreamOptions,
} from "./ai-sdk-prompt.js";

export type {
  LocaleRequest,
  LocaleResolver,
  RepairLogger,
  ToolCallRepairOptions,
} from "../attach/options.js";
export type { OptionsProblem } from "../core/errors.js";
export { isOptionsError, ToolCallResilienceOptionsError } from "../core/errors.js";
export type { ModelToolMessage, ModelToolResultPlaceholder } from "../formats/ai-sdk.js";
export type { FormatRepairResult } from "../formats/message-format.js";
export { THREAD_ID_HEADER, THREAD_ID_PROVIDER_OPTIONS_KEY } from "./ai-sdk-calls.js";
export type {
  AiSdkCallParams,
  AiSdkGenerateResult,
  AiSdkLanguageModel,
  AiSdkStreamResult,
  PromptMessage,
  PromptPart,
  PromptProviderOptions,
  PromptToolApprovalResponsePart,
  PromptToolCallPart,
  PromptToolMessage,
  PromptToolResultPart,
  TransformParamsOptions,
  WrapGenerateOptions,
  WrapStreamOptions,
} from "./ai-sdk-prompt.js";

/** A model call `transformParams` prepared: the prompt it was given, and its repair and record. */
interface PreparedPrompt {
  readonly prompt: readonly PromptMessage[];
  readonly call: PreparedFormatCall<PromptMessage>;
}

/** The name the middleware's option errors give it. */
const MIDDLEWARE_NAME = "toolCallRepairMiddleware";

/** How the middleware's own failures are named in the log. */
const ATTACHMENT = "AI SDK tool-call middleware";

/**
 * The middleware's options: the options every attachment takes (the engine's policy, the logger,
 * the telemetry), validated once when the middleware is made.
 *
 * @example
 * ```ts
 * const options: ToolCallRepairMiddlewareOptions = { locale: "fr", logger: false };
 * ```
 */
export type ToolCallRepairMiddlewareOptions = ToolCallRepairOptions;

/**
 * The settings of one {@link ToolCallRepairMiddleware.repairMessages} call.
 *
 * @example
 * ```ts
 * repair.repairMessages(history, { threadId: "thread-1", locale: "ja" });
 * ```
 */
export interface MessagesRepairContext {
  /** The conversation's id; name the same thread on the model call (see `THREAD_ID_HEADER`). */
  readonly threadId?: string;
  /** BCP 47 tag of this call's placeholder texts, overriding the options' `locale`. */
  readonly locale?: string;
}

/**
 * The middleware `toolCallRepairMiddleware` returns: an AI SDK `LanguageModelMiddleware`
 * (`specificationVersion: "v3"`) for `wrapLanguageModel`, and {@link repairMessages} for the
 * `ModelMessage` history of a call through it.
 *
 * @example
 * ```ts
 * const model = wrapLanguageModel({ model: openai("gpt-4.1"), middleware: toolCallRepairMiddleware() });
 * ```
 */
export interface ToolCallRepairMiddleware {
  readonly specificationVersion: "v3";
  /**
   * Repairs `params.prompt` (orphan and misplaced results, missing and reused ids, calls without
   * results) and records the model call; returns `params` itself when the prompt needs nothing,
   * else a copy with the repaired prompt. A retry (the prompt of a call that failed, which the AI
   * SDK sends again with `maxRetries`) gets the same repair and is the same model call. Never
   * throws, never changes `params`.
   */
  transformParams<P extends AiSdkCallParams>(options: TransformParamsOptions<P>): Promise<P>;
  /** Calls the model and counts the tool calls of its answer, which comes back as it came. */
  wrapGenerate<R extends AiSdkGenerateResult>(options: WrapGenerateOptions<R>): Promise<R>;
  /** Calls the model and counts the tool calls of its stream once the stream has ended. */
  wrapStream<R extends AiSdkStreamResult>(options: WrapStreamOptions<R>): Promise<R>;
  /**
   * Repairs a `ModelMessage` history for a call through this middleware, as `repairModelMessages`
   * does, but records it with that call: the thread's next model call through the middleware
   * (same `threadId`; without one, the next call that names no thread) is one model call with
   * both repairs, not two. A repair whose model call does not come within 30 s is recorded
   * without one (its repairs and dangling calls, no model call). Never throws: on a failure of
   * ours the history comes back as it is.
   */
  repairMessages<M>(
    messages: readonly M[],
    context?: MessagesRepairContext,
  ): FormatRepairResult<M | ModelToolMessage<M>>;
}

/**
 * An AI SDK language model middleware that repairs the tool-call protocol of each model call's
 * prompt and counts it with OpenTelemetry, as `danglingToolCallMiddleware` does for LangChain.
 *
 * - `transformParams` repairs `params.prompt`, the provider-level prompt (see
 *   `languageModelPromptFormatOf`): orphan results (OpenAI refuses them), results after other
 *   messages, calls without an id or with an id used twice, and calls without results in a
 *   prompt built without `generateText` (a direct `doGenerate`, a framework's own prompt). It
 *   reads the model's `provider` and `modelId`, the offered `tools`, and the thread from
 *   `providerOptions.toolCallResilience.threadId` or else the `x-tool-call-resilience-thread-id`
 *   header (both are passed on; providers ignore them).
 * - `wrapGenerate` and `wrapStream` count the `tool-call` parts of the answer (not the provider's
 *   own calls); a streamed answer once it has ended, and none when it fails or is cancelled.
 * - A call the AI SDK retries (`maxRetries`) is one model call: `generateText` and `streamText`
 *   send each attempt of a step with the same prompt, which is repaired, logged and recorded once,
 *   and the answer of the attempt that succeeds is counted.
 *
 * `generateText` and `streamText` refuse a `ModelMessage` history with a call without a result
 * (`MissingToolResultsError`) before any middleware runs: repair such a history with
 * {@link ToolCallRepairMiddleware.repairMessages}, which records it with the call it is sent
 * with. (`repairModelMessages` of `tool-call-resilience/formats` repairs it as well, but records
 * a model call of its own.)
 *
 * Fail-open: a failure of ours is logged and the call goes on with the params, the answer or the
 * stream as they came; the model's own errors pass through untouched.
 *
 * @param options - validated once, here
 * @throws {ToolCallResilienceOptionsError} when an option is invalid
 *
 * @example
 * ```ts
 * import { streamText, wrapLanguageModel } from "ai";
 * import { anthropic } from "@ai-sdk/anthropic";
 * import { toolCallRepairMiddleware } from "tool-call-resilience/ai-sdk";
 *
 * const repair = toolCallRepairMiddleware({ logger: false });
 * const model = wrapLanguageModel({ model: anthropic("claude-sonnet-4-5"), middleware: repair });
 * const { messages } = repair.repairMessages(history, { threadId: "thread-1" });
 * const result = streamText({ model, messages, headers: { "x-tool-call-resilience-thread-id": "thread-1" } });
 * ```
 */
export function toolCallRepairMiddleware(
  options: ToolCallRepairMiddlewareOptions = {},
): ToolCallRepairMiddleware {
  const parsed = toolCallRepairOptionsSchema.safeParse(options ?? {});
  if (!parsed.success) throw optionsError(parsed.error, MIDDLEWARE_NAME, true);
  const repairer = repairerFrom(
    parsed.data,
    ATTACHMENT,
    PLAIN_MESSAGES,
    (settings) => new ModelCallTelemetry(settings),
  );
  const { telemetry } = repairer;
  // A ModelMessage repair: the same steps, whose record waits for the model call.
  const messagesRepairer =
    telemetry instanceof ModelCallTelemetry
      ? { ...repairer, telemetry: telemetry.beforeModelCall }
      : repairer;
  /** The model calls prepared by `transformParams`, by the params it returned, in order. */
  const prepared = new WeakMap<object, PreparedPrompt[]>();
  /** The model calls that failed, by the prompt they were prepared for: a retry takes one back. */
  const failed = new WeakMap<object, PreparedPrompt>();

  function remember(params: object, call: PreparedPrompt): void {
    const waiting = prepared.get(params);
    if (waiting === undefined) prepared.set(params, [call]);
    else waiting.push(call);
  }

  function take(params: unknown): PreparedPrompt | undefined {
    if (typeof params !== "object" || params === null) return undefined;
    const waiting = prepared.get(params);
    const call = waiting?.shift();
    if (waiting?.length === 0) prepared.delete(params);
    return call;
  }

  /**
   * Ends a failed attempt's record, and keeps its call for a retry of its prompt. An AI SDK call
   * is recorded when it is prepared (no nested agent's name waits for its answer), so ending it
   * records nothing that its retry's answer records again: that answer's tool calls alone.
   */
  function fail(attempt: PreparedPrompt): void {
    attempt.call.afterFailure?.();
    failed.set(attempt.prompt, attempt);
  }

  /** Counts an answer; a failure of ours is logged, and the answer goes on. */
  function count(call: PreparedFormatCall<PromptMessage>, parts: () => readonly unknown[]): void {
    try {
      call.afterResponse?.(answerMessageOf(parts()));
    } catch (error) {
      logFailedOpen(repairer, "response", error);
    }
  }

  function repairParams<P extends AiSdkCallParams>(params: P, model: unknown): P {
    try {
      const context = callContextOf(params, model);
      const prompt = promptOf(params);
      if (prompt === undefined) {
        recordFailedOpen(
          repairer,
          formatRequestOf(languageModelPromptFormat, [], context),
          new TypeError("params.prompt is no list"),
        );
        return params;
      }
      // The AI SDK retries a failed call with the prompt it built for the step: the same model call.
      const retried = failed.get(prompt);
      if (retried !== undefined) failed.delete(prompt);
      const attempt = retried ?? prepareParams(prompt, context);
      const { messages } = attempt.call.repaired;
      const repaired = messages === prompt ? params : { ...params, prompt: messages };
      const { afterResponse, afterFailure } = attempt.call;
      if (afterResponse !== undefined || afterFailure !== undefined || messages !== prompt) {
        remember(repaired, attempt);
      }
      return repaired;
    } catch (error) {
      // The engine and prepareInFormat guard themselves: this is a bug of ours around them.
      logFailedOpen(repairer, "request", error);
      return params;
    }
  }

  function prepareParams(
    prompt: readonly PromptMessage[],
    context: ReturnType<typeof callContextOf>,
  ): PreparedPrompt {
    const format = languageModelPromptFormatOf(prompt);
    return { prompt, call: prepareInFormat(format, prompt, undefined, context, repairer) };
  }

  return {
    specificationVersion: "v3",
    transformParams: async ({ params, model }) => repairParams(params, model),
    async wrapGenerate<R extends AiSdkGenerateResult>({
      doGenerate,
      params,
    }: WrapGenerateOptions<R>): Promise<R> {
      const attempt = take(params);
      if (attempt === undefined) return doGenerate();
      let result: R;
      try {
        result = await doGenerate();
      } catch (error) {
        fail(attempt);
        throw error;
      }
      count(attempt.call, () => result.content);
      return result;
    },
    async wrapStream<R extends AiSdkStreamResult>({
      doStream,
      params,
    }: WrapStreamOptions<R>): Promise<R> {
      const attempt = take(params);
      if (attempt === undefined) return doStream();
      let result: R;
      try {
        result = await doStream();
      } catch (error) {
        fail(attempt);
        throw error;
      }
      const { call } = attempt;
      if (call.afterResponse === undefined) return result;
      try {
        const stream = observedStream(result.stream, {
          answered: (parts) => count(call, () => parts),
          failed: () => fail(attempt),
        });
        return { ...result, stream };
      } catch (error) {
        logFailedOpen(repairer, "response", error);
        return result;
      }
    },
    repairMessages: (messages, context) => {
      try {
        const { threadId, locale } = context ?? {};
        return prepareInFormat(
          modelMessageFormatOf(messages),
          messages,
          undefined,
          { threadId, locale },
          messagesRepairer,
        ).repaired as FormatRepairResult<never>;
      } catch (error) {
        logFailedOpen(repairer, "messages", error);
        return { messages: messages as never[], repairs: [] };
      }
    },
  };
}

/** The prompt of a call's params; none when it is no list or cannot be read. */
function promptOf(params: unknown): readonly PromptMessage[] | undefined {
  try {
    const prompt: unknown = (params as { prompt?: unknown }).prompt;
    return Array.isArray(prompt) ? prompt : undefined;
  } catch {
    return undefined;
  }
}
