/**
 * A LangChain history as each provider receives it, through the clients' own converters
 * (`@langchain/openai`, `@langchain/anthropic`; Gemini through {@link toGeminiContents}), and what
 * each provider would refuse in it.
 */
import { convertPromptToAnthropic } from "@langchain/anthropic";
import type { BaseMessage } from "@langchain/core/messages";
import { ChatPromptValue } from "@langchain/core/prompt_values";
import { convertMessagesToCompletionsMessageParams } from "@langchain/openai";
import {
  anthropicViolations,
  geminiViolations,
  openAIViolations,
  toGeminiContents,
  type Violation,
} from "./provider-rules.js";

/** The OpenAI Chat Completions `messages` the OpenAI client sends for this history. */
export function openAIMessagesOf(messages: readonly BaseMessage[]): unknown[] {
  return convertMessagesToCompletionsMessageParams({ messages: [...messages], model: "gpt-4.1" });
}

/** The Anthropic Messages `messages` the Anthropic client sends for this history. */
export function anthropicMessagesOf(messages: readonly BaseMessage[]): unknown[] {
  return convertPromptToAnthropic(new ChatPromptValue([...messages])).messages;
}

/** Each provider's refusals of this history; all empty when every provider accepts it. */
export function providerViolations(messages: readonly BaseMessage[]): {
  readonly openai: Violation[];
  readonly anthropic: Violation[];
  readonly gemini: Violation[];
} {
  return {
    openai: openAIViolations(openAIMessagesOf(messages)),
    anthropic: anthropicViolations(anthropicMessagesOf(messages)),
    gemini: geminiViolations(toGeminiContents(messages)),
  };
}
