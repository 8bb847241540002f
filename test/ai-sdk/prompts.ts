/**
 * Provider-level prompts (`Prompt`) and models for the AI SDK middleware's tests:
 * parts as `generateText` writes them, a model stand-in that answers from a script, and a
 * middleware whose telemetry goes to in-memory readers. The provider-level types are read off the
 * AI SDK's own `LanguageModelMiddleware` (`@ai-sdk/provider` is its dependency, not ours).
 */
import { type LanguageModelMiddleware, simulateReadableStream, wrapLanguageModel } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import {
  type ToolCallRepairMiddlewareOptions,
  toolCallRepairMiddleware,
} from "../../src/stacks/ai-sdk.js";
import { metricsHarness, tracingHarness } from "../helpers/telemetry.js";

type Middleware = Required<LanguageModelMiddleware>;
/** `CallOptions`. */
export type CallOptions = Parameters<Middleware["transformParams"]>[0]["params"];
type Prompt = CallOptions["prompt"];
/** `PromptMessage`. */
export type PromptMessage = Prompt[number];
/** `GenerateResult`. */
export type GenerateResult = Awaited<ReturnType<Middleware["wrapGenerate"]>>;
type Content = GenerateResult["content"][number];
/** `StreamPart`. */
export type StreamPart =
  Awaited<ReturnType<Middleware["wrapStream"]>>["stream"] extends ReadableStream<infer P>
    ? P
    : never;

/** Freezes a value and everything in it, so that a test fails if anything writes to it. */
export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === "object") {
    for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key]);
    Object.freeze(value);
  }
  return value;
}

export const system = (text: string): PromptMessage => ({ role: "system", content: text });

export const user = (text: string): PromptMessage => ({
  role: "user",
  content: [{ type: "text", text }],
});

export const call = (toolCallId: string, toolName = "search") =>
  ({ type: "tool-call", toolCallId, toolName, input: { query: toolCallId } }) as const;

export const result = (toolCallId: string, toolName = "search") =>
  ({
    type: "tool-result",
    toolCallId,
    toolName,
    output: { type: "text", value: `result of ${toolCallId}` },
  }) as const;

/** An assistant message of these parts (calls, text, reasoning, provider-executed results). */
export const assistant = (
  ...content: Extract<PromptMessage, { role: "assistant" }>["content"]
): PromptMessage => ({ role: "assistant", content });

/** A tool message of these parts (results, approval responses). */
export const tool = (
  ...content: Extract<PromptMessage, { role: "tool" }>["content"]
): PromptMessage => ({ role: "tool", content });

/** A prompt whose `search` call (call_1) got no result before the user wrote again. */
export const danglingPrompt = (): Prompt => [
  user("find it"),
  assistant(call("call_1")),
  user("go on"),
];

/** A prompt whose tool message answers a call no message made (its call was cut off). */
export const orphanPrompt = (): Prompt => [
  tool(result("call_ghost")),
  assistant({ type: "text", text: "It is sunny." }),
  user("and tomorrow?"),
];

/** The params of a call with this prompt, the `search` and `weather` tools, on a thread. */
export function paramsOf(prompt: Prompt, threadId?: string): CallOptions {
  return {
    prompt,
    tools: [
      { type: "function", name: "search", inputSchema: { type: "object" } },
      { type: "function", name: "weather", inputSchema: { type: "object" } },
    ],
    ...(threadId === undefined ? {} : { providerOptions: { toolCallResilience: { threadId } } }),
  };
}

const USAGE: GenerateResult["usage"] = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 3, text: 3, reasoning: undefined },
};

/** A generated answer of these parts. */
export function answer(...content: Content[]): GenerateResult {
  const calls = content.some((part) => part.type === "tool-call");
  return {
    content,
    finishReason: { unified: calls ? "tool-calls" : "stop", raw: undefined },
    usage: USAGE,
    warnings: [],
  };
}

/** A call the model makes, as a provider package reports it (its input JSON-encoded). */
export const madeCall = (
  toolCallId: string,
  toolName = "search",
): Extract<Content, { type: "tool-call" }> => ({
  type: "tool-call",
  toolCallId,
  toolName,
  input: "{}",
});

/** A stream of these parts, ended with a `finish` part. */
export function streamOf(...parts: StreamPart[]) {
  return {
    stream: simulateReadableStream<StreamPart>({
      chunks: [
        { type: "stream-start", warnings: [] },
        ...parts,
        { type: "finish", usage: USAGE, finishReason: { unified: "stop", raw: undefined } },
      ],
    }),
  };
}

/**
 * A middleware recording to fresh in-memory metrics and spans, around a model stand-in of this
 * provider and model id, which answers `next()` (a text, unless the test sets one).
 */
export function instrumented(
  options: ToolCallRepairMiddlewareOptions = {},
  identity: { provider?: string; modelId?: string } = {},
) {
  const metrics = metricsHarness();
  const tracing = tracingHarness();
  const middleware = toolCallRepairMiddleware({
    logger: false,
    meterProvider: metrics.meterProvider,
    tracerProvider: tracing.tracerProvider,
    ...options,
  });
  const scripted = {
    next: (): GenerateResult => answer({ type: "text", text: "All set." }),
    stream: () => streamOf({ type: "text-start", id: "t" }, { type: "text-end", id: "t" }),
  };
  const inner = new MockLanguageModelV3({
    provider: identity.provider ?? "openai.responses",
    modelId: identity.modelId ?? "gpt-4.1",
    doGenerate: async () => scripted.next(),
    doStream: async () => scripted.stream(),
  });
  const model = wrapLanguageModel({ model: inner, middleware });
  return { metrics, tracing, middleware, inner, model, scripted };
}
