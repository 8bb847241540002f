/**
 * The OpenAI Agents SDK's items, built as the SDK writes them, and a way to send any input through
 * the SDK's own OpenAI Responses model (its converter from items to a Responses request) to the
 * strict local server, which answers 400 as the API does.
 */
import {
  type AgentInputItem,
  OpenAIProvider,
  OpenAIResponsesModel,
  protocol,
  setTracingDisabled,
  withTrace,
} from "@openai/agents";
import OpenAI from "openai";
import type { StrictProviderServer } from "../helpers/strict-provider-server.js";

// Nothing in these tests goes to the network: no trace is exported.
setTracingDisabled(true);

export const user = (text: string): AgentInputItem => ({ role: "user", content: text });

export const assistant = (text: string): AgentInputItem => ({
  role: "assistant",
  status: "completed",
  content: [{ type: "output_text", text }],
});

export const functionCall = (
  callId: string,
  name = "search",
  extra: Record<string, unknown> = {},
): AgentInputItem =>
  ({
    type: "function_call",
    callId,
    name,
    arguments: '{"query":"x"}',
    status: "completed",
    ...extra,
  }) as AgentInputItem;

export const functionResult = (
  callId: string,
  name = "search",
  output = "found it",
): AgentInputItem => ({
  type: "function_call_result",
  callId,
  name,
  status: "completed",
  output,
});

export const computerCall = (callId: string): AgentInputItem => ({
  type: "computer_call",
  callId,
  status: "completed",
  action: { type: "click", x: 1, y: 2, button: "left" },
});

export const shellCall = (callId: string): AgentInputItem => ({
  type: "shell_call",
  callId,
  status: "completed",
  action: { commands: ["ls"] },
});

export const applyPatchCall = (callId: string): AgentInputItem => ({
  type: "apply_patch_call",
  callId,
  status: "completed",
  operation: { type: "delete_file", path: "notes.txt" },
});

export const toolSearchCall = (callId: string, execution: "client" | "server"): AgentInputItem => ({
  type: "tool_search_call",
  callId,
  execution,
  status: "completed",
  arguments: { query: "billing" },
});

export const reasoning = (text = "thinking"): AgentInputItem => ({
  type: "reasoning",
  content: [{ type: "input_text", text }],
});

/** A web search the provider ran, as the SDK keeps it. */
export const webSearch = (): AgentInputItem => ({
  type: "hosted_tool_call",
  name: "web_search_call",
  status: "completed",
  providerData: { type: "web_search_call", action: { type: "search", query: "news" } },
});

/** Whether an item is valid under the SDK's own protocol schema. */
export function isProtocolItem(item: unknown): boolean {
  return protocol.ModelItem.safeParse(item).success;
}

/** A value and everything in it frozen, so that any change to it throws. */
export function deepFrozen<T>(value: T): T {
  if (value !== null && typeof value === "object") {
    for (const key of Object.keys(value)) deepFrozen((value as Record<string, unknown>)[key]);
    Object.freeze(value);
  }
  return value;
}

/** A model provider whose OpenAI client goes to the strict server. */
export function providerFor(server: StrictProviderServer): OpenAIProvider {
  return new OpenAIProvider({
    openAIClient: new OpenAI({ baseURL: server.openAIBaseURL, apiKey: "test" }),
  });
}

/**
 * Sends items as a model call's input through the SDK's OpenAI Responses model to the strict
 * server: `200`, or the status and message of the API's refusal.
 */
export async function sentThroughResponses(
  server: StrictProviderServer,
  input: readonly unknown[],
): Promise<{ status: number; message?: string }> {
  const client = new OpenAI({ baseURL: server.openAIBaseURL, apiKey: "test", maxRetries: 0 });
  const model = new OpenAIResponsesModel(client, "gpt-4.1");
  try {
    await withTrace("test", () =>
      model.getResponse({
        input: input as AgentInputItem[],
        modelSettings: {},
        tools: [],
        outputType: "text",
        handoffs: [],
        tracing: false,
      }),
    );
    return { status: 200 };
  } catch (error) {
    const { status, message } = error as { status?: number; message?: string };
    return { status: status ?? 0, message };
  }
}
