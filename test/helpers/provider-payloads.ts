/**
 * A LangChain history as each provider receives it, through the clients' own converters
 * (`@langchain/openai` for Chat Completions and the Responses API, `@langchain/anthropic`; Gemini
 * through {@link toGeminiContents}; the AI SDK through the Chat Completions body), and what each
 * provider would refuse in it. A converter that throws is a refusal too: the client never sends
 * the request.
 */
import { convertPromptToAnthropic } from "@langchain/anthropic";
import type { BaseMessage } from "@langchain/core/messages";
import { ChatPromptValue } from "@langchain/core/prompt_values";
import {
  convertMessagesToCompletionsMessageParams,
  convertMessagesToResponsesInput,
} from "@langchain/openai";
import { aiSdkRefusal, modelMessagesOf } from "./native-formats.js";
import {
  anthropicViolations,
  geminiViolations,
  openAIViolations,
  responsesViolations,
  toGeminiContents,
  type Violation,
} from "./provider-rules.js";

/** The OpenAI Chat Completions `messages` the OpenAI client sends for this history. */
export function openAIMessagesOf(messages: readonly BaseMessage[]): unknown[] {
  return convertMessagesToCompletionsMessageParams({ messages: [...messages], model: "gpt-4.1" });
}

/** The Responses API `input` the OpenAI client sends for this history (`useResponsesApi`). */
export function responsesInputOf(messages: readonly BaseMessage[]): unknown[] {
  return convertMessagesToResponsesInput({
    messages: [...messages],
    zdrEnabled: false,
    model: "gpt-4.1",
  }) as unknown[];
}

/** The Anthropic Messages `messages` the Anthropic client sends for this history. */
export function anthropicMessagesOf(messages: readonly BaseMessage[]): unknown[] {
  return convertPromptToAnthropic(new ChatPromptValue([...messages])).messages;
}

/** The clients whose wire the tests check, by the name of their rules. */
export type Client = "openai" | "responses" | "anthropic" | "gemini";

/** The violations of one client's body, or the converter's own error as one. */
function checked(convert: () => Violation[]): Violation[] {
  try {
    return convert();
  } catch (error) {
    return [{ message: `the client threw: ${(error as Error).message}`, param: "" }];
  }
}

/** Each provider's refusals of this history; all empty when every provider accepts it. */
export function providerViolations(messages: readonly BaseMessage[]): Record<Client, Violation[]> {
  return {
    openai: checked(() => openAIViolations(openAIMessagesOf(messages))),
    responses: checked(() => responsesViolations(responsesInputOf(messages))),
    anthropic: checked(() => anthropicViolations(anthropicMessagesOf(messages))),
    gemini: checked(() => geminiViolations(toGeminiContents(messages))),
  };
}

/** What the AI SDK itself refuses in this history, sent on as `ModelMessage`s; `undefined` if nothing. */
export async function aiSdkViolation(
  messages: readonly BaseMessage[],
): Promise<string | undefined> {
  try {
    return await aiSdkRefusal(modelMessagesOf(openAIMessagesOf(messages)));
  } catch (error) {
    return `the conversion threw: ${(error as Error).message}`;
  }
}

/** No client refuses anything. */
export const ACCEPTED_BY_ALL: Record<Client, Violation[]> = Object.freeze({
  openai: [],
  responses: [],
  anthropic: [],
  gemini: [],
});
