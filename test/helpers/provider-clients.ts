/**
 * The real provider clients, pointed at the strict local server (`strict-provider-server.ts`):
 * a test key and no retries, so that a 400 reaches the test at once.
 */
import { ChatAnthropic } from "@langchain/anthropic";
import { ChatOpenAI } from "@langchain/openai";
import type { StrictProviderServer } from "./strict-provider-server.js";

/** `ChatOpenAI` on `gpt-4.1`: Chat Completions, or the Responses API with `useResponsesApi`. */
export function chatOpenAIOn(
  server: Pick<StrictProviderServer, "openAIBaseURL">,
  fields: { readonly useResponsesApi?: boolean } = {},
): ChatOpenAI {
  return new ChatOpenAI({
    model: "gpt-4.1",
    apiKey: "test-key",
    maxRetries: 0,
    configuration: { baseURL: server.openAIBaseURL },
    ...fields,
  });
}

/** `ChatAnthropic` on `claude-sonnet-4-5` (or `model`), with v0 (the default) or v1 output. */
export function chatAnthropicOn(
  server: Pick<StrictProviderServer, "anthropicApiUrl">,
  fields: { readonly outputVersion?: "v0" | "v1"; readonly model?: string } = {},
): ChatAnthropic {
  return new ChatAnthropic({
    model: "claude-sonnet-4-5",
    apiKey: "test-key",
    maxRetries: 0,
    anthropicApiUrl: server.anthropicApiUrl,
    ...fields,
  });
}
