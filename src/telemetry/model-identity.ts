/**
 * Which provider and model a request goes to, read from `request.model` the way LangChain's own
 * classes describe themselves, and mapped to the well-known `gen_ai.provider.name` values.
 */

import {
  GEN_AI_PROVIDER_NAME_VALUE_ANTHROPIC,
  GEN_AI_PROVIDER_NAME_VALUE_AWS_BEDROCK,
  GEN_AI_PROVIDER_NAME_VALUE_AZURE_AI_INFERENCE,
  GEN_AI_PROVIDER_NAME_VALUE_AZURE_AI_OPENAI,
  GEN_AI_PROVIDER_NAME_VALUE_COHERE,
  GEN_AI_PROVIDER_NAME_VALUE_DEEPSEEK,
  GEN_AI_PROVIDER_NAME_VALUE_GCP_GEMINI,
  GEN_AI_PROVIDER_NAME_VALUE_GCP_VERTEX_AI,
  GEN_AI_PROVIDER_NAME_VALUE_GROQ,
  GEN_AI_PROVIDER_NAME_VALUE_IBM_WATSONX_AI,
  GEN_AI_PROVIDER_NAME_VALUE_MISTRAL_AI,
  GEN_AI_PROVIDER_NAME_VALUE_OPENAI,
  GEN_AI_PROVIDER_NAME_VALUE_PERPLEXITY,
  GEN_AI_PROVIDER_NAME_VALUE_UNKNOWN,
  GEN_AI_PROVIDER_NAME_VALUE_X_AI,
  GEN_AI_PROVIDER_NAME_VALUES,
  GEN_AI_REQUEST_MODEL_VALUE_UNKNOWN,
} from "./semconv.js";

/** The provider and model a request goes to; `"unknown"` where they cannot be found. */
export interface ModelIdentity {
  readonly provider: string;
  readonly model: string;
}

/**
 * LangChain's provider ids (from `initChatModel`, `getLsParams().ls_provider` and `_llmType()`)
 * and the AI SDK's (a provider package's name: `amazon-bedrock`, `vertex`), normalized to lower
 * case with `_`, and the `gen_ai.provider.name` value each one means.
 */
const PROVIDER_NAMES: ReadonlyMap<string, string> = new Map([
  ["openai", GEN_AI_PROVIDER_NAME_VALUE_OPENAI],
  ["azure", GEN_AI_PROVIDER_NAME_VALUE_AZURE_AI_OPENAI],
  ["azure_openai", GEN_AI_PROVIDER_NAME_VALUE_AZURE_AI_OPENAI],
  ["azure_ai_inference", GEN_AI_PROVIDER_NAME_VALUE_AZURE_AI_INFERENCE],
  ["anthropic", GEN_AI_PROVIDER_NAME_VALUE_ANTHROPIC],
  ["google", GEN_AI_PROVIDER_NAME_VALUE_GCP_GEMINI],
  ["google_genai", GEN_AI_PROVIDER_NAME_VALUE_GCP_GEMINI],
  ["googlegenerativeai", GEN_AI_PROVIDER_NAME_VALUE_GCP_GEMINI],
  ["google_vertexai", GEN_AI_PROVIDER_NAME_VALUE_GCP_VERTEX_AI],
  ["google_vertexai_web", GEN_AI_PROVIDER_NAME_VALUE_GCP_VERTEX_AI],
  ["vertexai", GEN_AI_PROVIDER_NAME_VALUE_GCP_VERTEX_AI],
  ["vertex", GEN_AI_PROVIDER_NAME_VALUE_GCP_VERTEX_AI],
  ["bedrock", GEN_AI_PROVIDER_NAME_VALUE_AWS_BEDROCK],
  ["amazon_bedrock", GEN_AI_PROVIDER_NAME_VALUE_AWS_BEDROCK],
  ["aws_bedrock", GEN_AI_PROVIDER_NAME_VALUE_AWS_BEDROCK],
  ["bedrock_converse", GEN_AI_PROVIDER_NAME_VALUE_AWS_BEDROCK],
  ["chat_bedrock_converse", GEN_AI_PROVIDER_NAME_VALUE_AWS_BEDROCK],
  ["mistral", GEN_AI_PROVIDER_NAME_VALUE_MISTRAL_AI],
  ["mistralai", GEN_AI_PROVIDER_NAME_VALUE_MISTRAL_AI],
  ["mistral_ai", GEN_AI_PROVIDER_NAME_VALUE_MISTRAL_AI],
  ["groq", GEN_AI_PROVIDER_NAME_VALUE_GROQ],
  ["deepseek", GEN_AI_PROVIDER_NAME_VALUE_DEEPSEEK],
  ["cohere", GEN_AI_PROVIDER_NAME_VALUE_COHERE],
  ["xai", GEN_AI_PROVIDER_NAME_VALUE_X_AI],
  ["x_ai", GEN_AI_PROVIDER_NAME_VALUE_X_AI],
  ["perplexity", GEN_AI_PROVIDER_NAME_VALUE_PERPLEXITY],
  ["ibm", GEN_AI_PROVIDER_NAME_VALUE_IBM_WATSONX_AI],
  ["watsonx", GEN_AI_PROVIDER_NAME_VALUE_IBM_WATSONX_AI],
]);

const WELL_KNOWN_PROVIDERS: ReadonlySet<string> = new Set(
  Object.values(GEN_AI_PROVIDER_NAME_VALUES),
);

/**
 * The `gen_ai.provider.name` value of a LangChain (or AI SDK) provider id: a well-known value
 * where one applies (`"google-genai"` → `"gcp.gemini"`), otherwise the id as it is (`"ollama"`).
 *
 * @example
 * ```ts
 * genAiProviderName("mistralai"); // "mistral_ai"
 * genAiProviderName("ollama"); // "ollama"
 * ```
 */
export function genAiProviderName(providerId: string): string {
  if (WELL_KNOWN_PROVIDERS.has(providerId)) return providerId;
  return PROVIDER_NAMES.get(providerId.toLowerCase().replaceAll("-", "_")) ?? providerId;
}

/**
 * A provider guessed from a model name alone (`"gpt-4.1"` → `"openai"`), as LangChain's
 * `initChatModel` guesses it; `undefined` when there is no guess. The LangChain attachments pass
 * LangChain's own; without LangChain there is none.
 */
export type ProviderInference = (model: string) => unknown;

/** No guess: the provider is only what a model or a message says. */
export const NO_PROVIDER_INFERENCE: ProviderInference = () => undefined;

const identities = new WeakMap<object, ModelIdentity>();

/**
 * The provider and model of a chat model, tried in this order: `.model`, `.modelName`, a
 * `ConfigurableModel`'s `_defaultConfig` (`model`, and `modelProvider` or the provider
 * `inferProvider` guesses from the model name), `getLsParams()`, then `_llmType()` for the
 * provider. Anything that throws or is not a non-empty string is skipped; what is left unfound is
 * `"unknown"`. The answer is remembered per model object. `modelIdentityOf` is this with
 * LangChain's guess.
 *
 * @example
 * ```ts
 * chatModelIdentityOf(new ChatOpenAI({ model: "gpt-4.1" }), NO_PROVIDER_INFERENCE);
 * // { provider: "openai", model: "gpt-4.1" }
 * ```
 */
export function chatModelIdentityOf(
  chatModel: unknown,
  inferProvider: ProviderInference,
): ModelIdentity {
  if (typeof chatModel !== "object" || chatModel === null) {
    return {
      provider: GEN_AI_PROVIDER_NAME_VALUE_UNKNOWN,
      model: GEN_AI_REQUEST_MODEL_VALUE_UNKNOWN,
    };
  }
  const known = identities.get(chatModel);
  if (known !== undefined) return known;
  const identity = readIdentity(chatModel as Record<string, unknown>, inferProvider);
  identities.set(chatModel, identity);
  return identity;
}

function readIdentity(
  chatModel: Record<string, unknown>,
  inferProvider: ProviderInference,
): ModelIdentity {
  const configured = attempt(() => chatModel._defaultConfig);
  const isConfigurable = typeof configured === "object" && configured !== null;
  const defaults = (isConfigurable ? configured : {}) as Record<string, unknown>;
  const lsParams = isConfigurable ? undefined : attempt(() => callMethod(chatModel, "getLsParams"));
  const ls = (typeof lsParams === "object" && lsParams !== null ? lsParams : {}) as Record<
    string,
    unknown
  >;

  const model =
    nonEmpty(attempt(() => chatModel.model)) ??
    nonEmpty(attempt(() => chatModel.modelName)) ??
    nonEmpty(defaults.model) ??
    nonEmpty(ls.ls_model_name);

  const providerId = isConfigurable
    ? (nonEmpty(defaults.modelProvider) ??
      (model === undefined ? undefined : nonEmpty(attempt(() => inferProvider(model)))))
    : (nonEmpty(ls.ls_provider) ?? nonEmpty(attempt(() => callMethod(chatModel, "_llmType"))));

  return {
    provider:
      providerId === undefined ? GEN_AI_PROVIDER_NAME_VALUE_UNKNOWN : genAiProviderName(providerId),
    model: model ?? GEN_AI_REQUEST_MODEL_VALUE_UNKNOWN,
  };
}

function callMethod(target: Record<string, unknown>, name: string): unknown {
  const method = target[name];
  return typeof method === "function" ? method.call(target, {}) : undefined;
}

function attempt(read: () => unknown): unknown {
  try {
    return read();
  } catch {
    return undefined;
  }
}

function nonEmpty(value: unknown): string | undefined {
  return typeof value === "string" && value.length > 0 ? value : undefined;
}

/**
 * The model an AI message says made it, as its provider named it: `response_metadata.model_name`
 * (OpenAI, Gemini, the v1 standard), `response_metadata.model` (Anthropic), or
 * `additional_kwargs.model` (a streamed Anthropic message); and the provider from
 * `response_metadata.model_provider`. `undefined` when the message names no model. Never throws.
 *
 * @example
 * ```ts
 * modelNamedBy(await new ChatOpenAI({ model: "gpt-4.1" }).invoke("hi"));
 * // { model: "gpt-4.1-2025-04-14", provider: "openai" }
 * ```
 */
export function modelNamedBy(
  message: unknown,
): { readonly model: string; readonly provider: string | undefined } | undefined {
  if (typeof message !== "object" || message === null) return undefined;
  const fields = message as Record<string, unknown>;
  const metadata = attempt(() => fields.response_metadata) as Record<string, unknown> | undefined;
  const kwargs = attempt(() => fields.additional_kwargs) as Record<string, unknown> | undefined;
  const model =
    nonEmpty(attempt(() => metadata?.model_name)) ??
    nonEmpty(attempt(() => metadata?.model)) ??
    nonEmpty(attempt(() => kwargs?.model));
  if (model === undefined) return undefined;
  const providerId = nonEmpty(attempt(() => metadata?.model_provider));
  return { model, provider: providerId === undefined ? undefined : genAiProviderName(providerId) };
}

/**
 * How many model names answers have come back with are remembered, each with the request's model
 * and provider it answered for (the most recently learned kept).
 */
const ANSWERED_NAMES_LIMIT = 1_000;

/** A model name answers come back with → the request's model and provider it answered for. */
const requestOfAnsweredName = new Map<string, ModelIdentity>();

/**
 * A name at the end of a model name that only dates a snapshot of it: `2025-04-14` in
 * `gpt-4.1-2025-04-14`, `20250929` in `claude-sonnet-4-5-20250929`, and what follows a date.
 */
const SNAPSHOT_DATE = /^\d{4}-?\d{2}-?\d{2}(?:[-.:@].*)?$/;

/**
 * Whether a model name an answer gives is the requested model: the same name, or a dated
 * snapshot of it (`gpt-4.1-2025-04-14` for `gpt-4.1`; not `gpt-4.1-mini-2025-04-14`).
 *
 * @example
 * ```ts
 * answersForRequestedModel("claude-sonnet-4-5-20250929", "claude-sonnet-4-5"); // true
 * ```
 */
export function answersForRequestedModel(answered: string, requested: string): boolean {
  if (answered === requested) return true;
  return (
    answered.startsWith(`${requested}-`) && SNAPSHOT_DATE.test(answered.slice(requested.length + 1))
  );
}

/**
 * The model and provider a tool call is charged to: the model that made its AI message, named
 * the way requests name it, so that a model's calls, its dangling calls and its model calls share
 * a series.
 * - A message that names no model: the request's.
 * - A message that names the request's model, or a dated snapshot of it: the request's (and the
 *   name is learned as that model's, for the requests of other models that see the message).
 * - A message that names a model learned so: that model, as its requests name it.
 * - Any other: the name the message gives, with the provider it names, else the one
 *   `inferProvider` guesses from the name (LangChain's, in the LangChain attachments), else the
 *   request's.
 *
 * @example
 * ```ts
 * chargedModelOf(backupsAnswer, { provider: "anthropic", model: "claude-sonnet-4-5" }); // learned
 * chargedModelOf(backupsAnswer, { provider: "openai", model: "gpt-4.1" });
 * // { provider: "anthropic", model: "claude-sonnet-4-5" }
 * ```
 */
export function chargedModelOf(
  message: unknown,
  request: ModelIdentity,
  inferProvider: ProviderInference = NO_PROVIDER_INFERENCE,
): ModelIdentity {
  const named = modelNamedBy(message);
  if (named === undefined) return request;
  if (answersForRequestedModel(named.model, request.model)) {
    learnAnsweredName(named.model, request);
    return request;
  }
  const learned = requestOfAnsweredName.get(named.model);
  if (learned !== undefined) return learned;
  const inferred = named.provider ?? nonEmpty(attempt(() => inferProvider(named.model)));
  return {
    model: named.model,
    provider: inferred === undefined ? request.provider : genAiProviderName(inferred),
  };
}

function learnAnsweredName(answered: string, request: ModelIdentity): void {
  const known = requestOfAnsweredName.get(answered);
  if (known?.model === request.model && known.provider === request.provider) return;
  if (known === undefined && requestOfAnsweredName.size >= ANSWERED_NAMES_LIMIT) {
    const oldest = requestOfAnsweredName.keys().next();
    if (!oldest.done) requestOfAnsweredName.delete(oldest.value);
  }
  requestOfAnsweredName.set(answered, { model: request.model, provider: request.provider });
}
