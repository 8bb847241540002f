/**
 * Each provider's own LangChain chat model with only its network call replaced: the model's own
 * converter builds the request, the capture records the body at the seam where the SDK (or the
 * model's transport) would send it, and answers with a plain assistant text, so that a
 * `createAgent` run ends after one model call. Fake keys, no retries, no network, no credentials.
 *
 * The seams, each on the model's own code path:
 * - `ChatBedrockConverse`: `client.send`, with the `ConverseCommand` (its `input` is recorded).
 * - `ChatMistralAI`: `completionWithRetry(input, streaming)`; the request is the Mistral SDK's
 *   input (camelCase: `toolCalls`, `toolCallId`), which the SDK sends as `tool_calls` and
 *   `tool_call_id`. `_generate` streams whenever the call has a signal, so both are answered.
 * - `ChatGoogleGenerativeAI`: the `@google/generative-ai` model's `generateContent`.
 * - `ChatVertexAI` (google-common's `ChatGoogleBase`): the auth client's `request(opts)`, under
 *   the connection's `request` and `_request`; `opts.data` is the body `formatData` built. With an
 *   API key the client is google-common's `ApiKeyGoogleAuth`: no project id, no Google login.
 * - `ChatGroq`, `ChatXAI`, `ChatDeepSeek`: the SDK client's `chat.completions.create` (for xAI
 *   and DeepSeek, `@langchain/openai`'s `ChatOpenAICompletions` underneath, whose client is made
 *   lazily and so is given here).
 * - `ChatOllama`: the `ollama` client's `chat`, which `ChatOllama` always streams.
 * - `ChatCohere` (v1 chat): the `cohere-ai` client's `chat`, given through the `client` field.
 */
import { ChatBedrockConverse } from "@langchain/aws";
import { ChatCohere } from "@langchain/cohere";
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { ChatDeepSeek } from "@langchain/deepseek";
import type { GoogleAbstractedClient, GoogleAbstractedClientOps } from "@langchain/google-common";
import { ChatGoogleGenerativeAI } from "@langchain/google-genai";
import { ChatVertexAI } from "@langchain/google-vertexai";
import { ChatGroq } from "@langchain/groq";
import { ChatMistralAI } from "@langchain/mistralai";
import { ChatOllama } from "@langchain/ollama";
import { ChatXAI } from "@langchain/xai";
import {
  converseViolations,
  type GeminiContent,
  geminiTurnViolations,
  mistralViolations,
  openAIViolations,
  type Violation,
} from "./provider-rules.js";

/** The providers whose chat models can be captured. */
export type CapturedProvider =
  | "bedrock"
  | "mistral"
  | "google-genai"
  | "vertex"
  | "groq"
  | "ollama"
  | "cohere"
  | "xai"
  | "deepseek";

/** Every captured provider, in a stable order for `it.each`. */
export const CAPTURED_PROVIDERS: readonly CapturedProvider[] = [
  "bedrock",
  "mistral",
  "google-genai",
  "vertex",
  "groq",
  "ollama",
  "cohere",
  "xai",
  "deepseek",
];

type Body = Record<string, unknown>;

const listOf = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);
const geminiRules = (body: Body) => geminiTurnViolations(listOf(body.contents) as GeminiContent[]);
const chatCompletionsRules = (body: Body) => openAIViolations(listOf(body.messages));

/** Each provider's rules, on a captured body; none are written here for Ollama and Cohere. */
const RULES: Partial<Record<CapturedProvider, (body: Body) => Violation[]>> = {
  bedrock: (body) => converseViolations(listOf(body.messages)),
  mistral: (body) => mistralViolations(listOf(body.messages)),
  "google-genai": geminiRules,
  vertex: geminiRules,
  groq: chatCompletionsRules,
  xai: chatCompletionsRules,
  deepseek: chatCompletionsRules,
};

/**
 * What the provider refuses in a captured request body, by its rules (`provider-rules.ts`); none
 * for a provider whose rules are not written here (Ollama, Cohere).
 */
export function violationsOf(provider: CapturedProvider, body: Body): Violation[] {
  return RULES[provider]?.(body) ?? [];
}

/** The text the captured models answer with, unless a capture is given another. */
export const CAPTURED_ANSWER = "Done.";

/** A chat model whose requests are recorded instead of sent. */
export interface Capture {
  /** The provider's own chat model; `bindTools` results go through the same capture. */
  readonly model: BaseChatModel;
  /** The request bodies, as the provider's SDK (or transport) was given them, oldest first. */
  readonly requests: Record<string, unknown>[];
}

/**
 * The provider's chat model with its network call replaced by a capture: every call's request
 * body is recorded in `requests`, and the call resolves with `answer` as a plain AI text message
 * (no tool calls).
 *
 * @example
 * ```ts
 * const { model, requests } = capturingModel("bedrock");
 * await model.invoke([new HumanMessage("hi")]);
 * requests[0]?.messages; // [{ role: "user", content: [{ text: "hi" }] }]
 * ```
 */
export function capturingModel(
  provider: CapturedProvider,
  options: { readonly answer?: string } = {},
): Capture {
  const requests: Record<string, unknown>[] = [];
  const record = (body: unknown) => {
    requests.push(structuredClone(body) as Record<string, unknown>);
  };
  const model = BUILDERS[provider](record, options.answer ?? CAPTURED_ANSWER);
  return { model, requests };
}

type Build = (record: (body: unknown) => void, answer: string) => BaseChatModel;

/** An object typed as the seam sees it: only the fields the capture replaces or hands over. */
function seamOf<T>(model: object): T {
  return model as unknown as T;
}

/** `disableStreaming` keeps `invoke` on `_generate` even when a streaming callback listens. */
const COMMON = { maxRetries: 0, disableStreaming: true } as const;

const USAGE_OPENAI = { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 };

/** An OpenAI-compatible `chat.completions.create` that records the body and answers `answer`. */
function completionsClient(record: (body: unknown) => void, answer: string, model: string) {
  return {
    chat: {
      completions: {
        create: async (body: unknown) => {
          record(body);
          return {
            id: "chatcmpl-capture",
            object: "chat.completion",
            created: 0,
            model,
            choices: [
              {
                index: 0,
                message: { role: "assistant", content: answer },
                finish_reason: "stop",
                logprobs: null,
              },
            ],
            usage: USAGE_OPENAI,
          };
        },
      },
    },
  };
}

/** A Gemini `GenerateContentResponse` with one text candidate. */
function geminiAnswer(answer: string) {
  return {
    candidates: [
      { content: { role: "model", parts: [{ text: answer }] }, finishReason: "STOP", index: 0 },
    ],
    usageMetadata: { promptTokenCount: 1, candidatesTokenCount: 1, totalTokenCount: 2 },
  };
}

const BUILDERS: Readonly<Record<CapturedProvider, Build>> = {
  bedrock: (record, answer) => {
    const model = new ChatBedrockConverse({
      ...COMMON,
      model: "anthropic.claude-3-5-sonnet-20240620-v1:0",
      region: "us-east-1",
      credentials: { accessKeyId: "test-key", secretAccessKey: "test-secret" },
    });
    seamOf<{ client: { send: (command: { input: unknown }) => Promise<unknown> } }>(
      model,
    ).client.send = async (command) => {
      record(command.input);
      return {
        output: { message: { role: "assistant", content: [{ text: answer }] } },
        stopReason: "end_turn",
        usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 },
        metrics: { latencyMs: 1 },
        $metadata: {},
      };
    };
    return model;
  },
  mistral: (record, answer) => {
    const model = new ChatMistralAI({
      ...COMMON,
      model: "mistral-large-latest",
      apiKey: "test-key",
    });
    const usage = { promptTokens: 1, completionTokens: 1, totalTokens: 2 };
    seamOf<{ completionWithRetry: (input: unknown, streaming: boolean) => Promise<unknown> }>(
      model,
    ).completionWithRetry = async (input, streaming) => {
      record(input);
      if (!streaming) {
        return {
          id: "capture",
          object: "chat.completion",
          model: "mistral-large-latest",
          created: 0,
          choices: [
            { index: 0, message: { role: "assistant", content: answer }, finishReason: "stop" },
          ],
          usage,
        };
      }
      return (async function* () {
        yield {
          data: {
            id: "capture",
            model: "mistral-large-latest",
            choices: [
              { index: 0, delta: { role: "assistant", content: answer }, finishReason: "stop" },
            ],
            usage,
          },
        };
      })();
    };
    return model;
  },
  "google-genai": (record, answer) => {
    const model = new ChatGoogleGenerativeAI({
      ...COMMON,
      model: "gemini-2.5-flash",
      apiKey: "test-key",
    });
    seamOf<{ client: { generateContent: (request: unknown) => Promise<unknown> } }>(
      model,
    ).client.generateContent = async (request) => {
      record(request);
      return { response: geminiAnswer(answer) };
    };
    return model;
  },
  vertex: (record, answer) => {
    const model = new ChatVertexAI({ ...COMMON, model: "gemini-2.5-flash", apiKey: "test-key" });
    seamOf<{ connection: { client: GoogleAbstractedClient } }>(model).connection.client.request =
      async (opts: GoogleAbstractedClientOps) => {
        record(opts.data);
        return {
          data: geminiAnswer(answer),
          status: 200,
          statusText: "OK",
          headers: {},
          config: {},
        };
      };
    return model;
  },
  groq: (record, answer) => {
    const model = new ChatGroq({ ...COMMON, model: "llama-3.3-70b-versatile", apiKey: "test-key" });
    seamOf<{ client: unknown }>(model).client = completionsClient(record, answer, model.model);
    return model;
  },
  ollama: (record, answer) => {
    const model = new ChatOllama({ ...COMMON, model: "llama3.1" });
    seamOf<{ client: { chat: (request: unknown) => Promise<AsyncIterable<unknown>> } }>(
      model,
    ).client.chat = async (request) => {
      record(request);
      return (async function* () {
        yield {
          model: "llama3.1",
          created_at: new Date(0),
          message: { role: "assistant", content: answer },
          done: true,
          done_reason: "stop",
          prompt_eval_count: 1,
          eval_count: 1,
        };
      })();
    };
    return model;
  },
  cohere: (record, answer) => {
    const client = {
      chat: async (request: unknown) => {
        record(request);
        return {
          text: answer,
          generationId: "capture",
          finishReason: "COMPLETE",
          meta: { tokens: { inputTokens: 1, outputTokens: 1 } },
        };
      },
    };
    return new ChatCohere({
      ...COMMON,
      model: "command-r-plus",
      client: seamOf<NonNullable<ConstructorParameters<typeof ChatCohere>[0]>["client"]>(client),
    });
  },
  xai: (record, answer) => {
    const model = new ChatXAI({ ...COMMON, model: "grok-3-fast", apiKey: "test-key" });
    seamOf<{ client: unknown }>(model).client = completionsClient(record, answer, model.model);
    return model;
  },
  deepseek: (record, answer) => {
    const model = new ChatDeepSeek({ ...COMMON, model: "deepseek-chat", apiKey: "test-key" });
    seamOf<{ client: unknown }>(model).client = completionsClient(record, answer, model.model);
    return model;
  },
};
