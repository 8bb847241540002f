/**
 * tool-call-resilience/formats: the repair of histories in a provider's native message format,
 * for applications on the OpenAI SDK, the Anthropic SDK or the AI SDK, with or without LangChain.
 * Nothing here loads LangChain: the engine, the policy, the logging and the telemetry (through
 * `@opentelemetry/api`) are the same as the main entry's, which exports all of this too.
 *
 * @example
 * ```ts
 * import { repairOpenAIChatMessages } from "tool-call-resilience/formats";
 *
 * const { messages } = repairOpenAIChatMessages(history, undefined, { model: "gpt-4.1" });
 * await openai.chat.completions.create({ model: "gpt-4.1", messages, tools });
 * ```
 */

export type {
  LocaleRequest,
  LocaleResolver,
  RepairLogger,
  ToolCallRepairOptions,
} from "../attach/options.js";
export type { OptionsProblem } from "../core/errors.js";
export {
  isOptionsError,
  isToolCallResilienceError,
  ToolCallResilienceError,
  ToolCallResilienceOptionsError,
} from "../core/errors.js";
export type { PlaceholderReason } from "../core/locales.js";
export type { PlaceholderContext, PlaceholderFunction } from "../core/placeholder.js";
export type { MisplacedPolicy, OrphanPolicy } from "../core/policy.js";
export type { RepairKind } from "../core/repair-kinds.js";
export type { ToolCallRepair } from "../core/repair-log.js";
export type { ModelToolMessage, ModelToolResultPlaceholder } from "./ai-sdk.js";
export { repairModelMessages } from "./ai-sdk.js";
export type { AnthropicToolResultBlock, AnthropicUserMessage } from "./anthropic.js";
export { repairAnthropicMessages } from "./anthropic.js";
export type { FormatRepairContext, FormatRepairResult } from "./message-format.js";
export type { OpenAIChatToolMessage } from "./openai-chat.js";
export { repairOpenAIChatMessages } from "./openai-chat.js";
export type { ResponsesPlaceholderItem, ResponsesRepairContext } from "./openai-responses.js";
export { repairResponsesInput } from "./openai-responses.js";
