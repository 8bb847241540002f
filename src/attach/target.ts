/**
 * Which client a model request goes through, read from `request.model`, so that the repair is for
 * what that client's converter will send (`src/core/wire.ts`). Duck-typed: neither
 * `@langchain/openai` nor `@langchain/anthropic` is a dependency, and a model this cannot tell
 * gets `"any"`, the repair that every supported client sends alike.
 */
import { type Fields, fieldsOf } from "../core/fields.js";
import type { RepairTarget } from "../core/wire.js";

/** Class names of ChatOpenAI's two halves, which a user may also build on their own. */
const OPENAI_HALVES: Readonly<Record<string, RepairTarget>> = {
  ChatOpenAIResponses: "openai-responses",
  AzureChatOpenAIResponses: "openai-responses",
  ChatOpenAICompletions: "openai-completions",
  AzureChatOpenAICompletions: "openai-completions",
};

/**
 * The client a request to this model goes through:
 *
 * - `ChatOpenAI` (and `AzureChatOpenAI`): its own choice for these tools, `_useResponsesApi`,
 *   which is `useResponsesApi`, built-in or custom tools, Responses-only options, or a model that
 *   prefers that API; `"openai-responses"` if so, else `"openai-completions"`. `ChatOpenAIResponses`
 *   and `ChatOpenAICompletions` built alone are what they say.
 * - `ChatAnthropic`: `"anthropic"`.
 * - A model made by `initChatModel` (what `createAgent` builds from `"openai:gpt-4.1"`): the model
 *   it holds, once it holds exactly one; a bound model (`bindTools`, `withConfig`): the model it
 *   binds.
 * - Anything else, or anything that throws when read: `"any"`.
 *
 * @example
 * ```ts
 * repairTargetOf(new ChatOpenAI({ model: "gpt-4.1", useResponsesApi: true })); // "openai-responses"
 * repairTargetOf(new ChatAnthropic({ model: "claude-sonnet-4-5" })); // "anthropic"
 * ```
 */
export function repairTargetOf(model: unknown, tools?: readonly unknown[]): RepairTarget {
  try {
    return targetOf(model, tools);
  } catch {
    return "any";
  }
}

function targetOf(model: unknown, tools: readonly unknown[] | undefined): RepairTarget {
  return readInnerModel(model, targetIn, tools) ?? "any";
}

function targetIn(
  fields: Fields,
  model: unknown,
  tools: readonly unknown[] | undefined,
): RepairTarget | undefined {
  if (typeof fields._useResponsesApi === "function") {
    const responses = (fields._useResponsesApi as (options: unknown) => unknown).call(model, {
      tools,
    });
    return responses === true ? "openai-responses" : "openai-completions";
  }
  const className = (fields.constructor as { name?: unknown } | undefined)?.name;
  if (typeof className === "string" && OPENAI_HALVES[className] !== undefined) {
    return OPENAI_HALVES[className];
  }
  return llmTypeIn(fields, model) === "anthropic" ? "anthropic" : undefined;
}

/**
 * The `_llmType()` of the chat model a request goes through (`"googlegenerativeai"`, `"google"`,
 * `"chat_bedrock_converse"`, ...), through `initChatModel` and bound models as
 * {@link repairTargetOf} reads them; `undefined` when it has none, or it throws.
 */
export function llmTypeOf(model: unknown): string | undefined {
  try {
    return readInnerModel(model, llmTypeIn, undefined);
  } catch {
    return undefined;
  }
}

function llmTypeIn(fields: Fields, model: unknown): string | undefined {
  if (typeof fields._llmType !== "function") return undefined;
  const type = (fields._llmType as () => unknown).call(model);
  return typeof type === "string" ? type : undefined;
}

/**
 * What `read` finds in a model, or else in the model it holds: the one model of a model made by
 * `initChatModel`, or the model a bound model binds (three levels at most). `read` takes `arg`
 * rather than a closure: this runs before every model call.
 */
function readInnerModel<A, T>(
  model: unknown,
  read: (fields: Fields, model: unknown, arg: A) => T | undefined,
  arg: A,
  depth = 0,
): T | undefined {
  // A model may be a callable object; `fieldsOf` takes only records that are not functions.
  const fields = typeof model === "function" ? (model as unknown as Fields) : fieldsOf(model);
  if (fields === undefined || depth > 3) return undefined;
  const found = read(fields, model, arg);
  if (found !== undefined) return found;
  const cache = fields._modelInstanceCache;
  if (cache instanceof Map && cache.size === 1) {
    return readInnerModel(cache.values().next().value, read, arg, depth + 1);
  }
  if (fields.bound !== undefined) return readInnerModel(fields.bound, read, arg, depth + 1);
  return undefined;
}
