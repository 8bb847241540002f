/**
 * What the LangChain attachments (the `createAgent` middleware and `withToolCallRepair`) read from
 * LangChain at run time: `ToolMessage` for the messages the engine writes, the current run's agent
 * name, and LangChain's guess of a provider from a model name. Kept here, apart from the steps
 * every attachment shares, so that the native-format adapters load no LangChain at all.
 */
import { AsyncLocalStorageProviderSingleton } from "@langchain/core/singletons";
// A namespace import: `_inferModelProvider` is exported but underscored, so it may go away in a
// minor release; a named import would then fail to link and take the whole package down.
import * as universal from "langchain/chat_models/universal";
import { newToolMessage } from "../core/repair-langchain.js";
import { chatModelIdentityOf, type ModelIdentity } from "../telemetry/model-identity.js";
import type { MessageLibrary } from "./repairer.js";

/** LangChain's own guess of a provider from a model name, as `initChatModel` makes it. */
function inferProvider(model: string): unknown {
  const infer: unknown = (universal as Record<string, unknown>)._inferModelProvider;
  return typeof infer === "function" ? infer(model) : undefined;
}

/** The agent name `createAgent({ name })` puts in the run's metadata, if any. */
function agentNameOfCurrentRun(): string | undefined {
  const name = AsyncLocalStorageProviderSingleton.getRunnableConfig()?.metadata?.lc_agent_name;
  return typeof name === "string" && name.length > 0 ? name : undefined;
}

/**
 * The provider and model of a chat model: {@link chatModelIdentityOf}, with the provider LangChain
 * infers from the model name for a `ConfigurableModel` that names none (`initChatModel`).
 *
 * @example
 * ```ts
 * modelIdentityOf(new ChatOpenAI({ model: "gpt-4.1" })); // { provider: "openai", model: "gpt-4.1" }
 * ```
 */
export function modelIdentityOf(chatModel: unknown): ModelIdentity {
  return chatModelIdentityOf(chatModel, inferProvider);
}

/** LangChain, as the attachments read it. */
export const LANGCHAIN_MESSAGES: MessageLibrary = Object.freeze({
  makeToolMessage: newToolMessage,
  agentNameOfCurrentRun,
  modelIdentityOf,
  inferProvider,
});
