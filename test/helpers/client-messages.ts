/**
 * AI messages as the real clients build them: ChatOpenAI's Responses client through its own
 * converter (`convertResponsesMessageToAIMessage`), ChatAnthropic's the way its response handler
 * does, and either one in LangChain's v1 output format the way `outputVersion: "v1"` casts it.
 */
import { AIMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import { convertResponsesMessageToAIMessage } from "@langchain/openai";

type Fields = Record<string, unknown>;

let responses = 0;

/** A Responses API response with these output items, as ChatOpenAI turns it into a message. */
export function responsesAIMessage(output: readonly Fields[]): AIMessage {
  responses++;
  return convertResponsesMessageToAIMessage({
    id: `resp_${responses}`,
    object: "response",
    created_at: 1_700_000_000,
    model: "gpt-4.1",
    status: "completed",
    output,
    usage: { input_tokens: 10, output_tokens: 5, total_tokens: 15 },
  } as unknown as Parameters<typeof convertResponsesMessageToAIMessage>[0]);
}

/** A `function_call` output item. */
export function functionCall(callId: string, name = "search", args = '{"query":"x"}'): Fields {
  return {
    type: "function_call",
    id: `fc_${callId}`,
    call_id: callId,
    name,
    arguments: args,
    status: "completed",
  };
}

/** A Messages API response's content, as ChatAnthropic turns it into a message. */
export function anthropicAIMessage(content: readonly Fields[]): AIMessage {
  const toolCalls = content
    .filter((block) => block.type === "tool_use")
    .map((block) => ({
      id: block.id as string,
      name: block.name as string,
      args: block.input as Record<string, unknown>,
      type: "tool_call" as const,
    }));
  return new AIMessage({
    content: content as AIMessage["content"],
    tool_calls: toolCalls,
    response_metadata: { model_provider: "anthropic", model: "claude-sonnet-4-5" },
  });
}

/** A `tool_use` content block. */
export function toolUse(id: string, name = "search", input: Fields = { query: "x" }): Fields {
  return { type: "tool_use", id, name, input };
}

/** The message as a model with `outputVersion: "v1"` returns it (LangChain's own cast). */
export function asOutputV1<M extends BaseMessage>(message: M): M {
  const Class = message.constructor as new (fields: unknown) => M;
  return new Class({
    ...message,
    content: message.contentBlocks,
    response_metadata: { ...message.response_metadata, output_version: "v1" },
  });
}

/**
 * What `humanInTheLoopMiddleware` does on approve + reject of parallel calls: `tool_calls` set
 * to the rejected call alone (the approved ones dropped), and a rejection result for it.
 */
export function approvedAndRejected(message: AIMessage, rejected: string): BaseMessage[] {
  const call = message.tool_calls?.find((candidate) => candidate.id === rejected);
  if (call === undefined) throw new Error(`no call ${rejected}`);
  message.tool_calls = [call];
  return [
    message,
    new ToolMessage({
      content: `User rejected the tool call for \`${call.name}\` with id ${rejected}`,
      name: call.name,
      tool_call_id: rejected,
      status: "error",
    }),
  ];
}
