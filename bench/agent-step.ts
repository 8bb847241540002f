/**
 * The end-to-end figure: one `createAgent` invocation (input, model node, answer) on a clean
 * history, with and without our middleware, around a model that answers at once, so that
 * everything the step costs apart from the model is what is compared. The agent is the README's:
 * with a checkpointer, each step on a thread of its own that starts from the history; or, for
 * applications that keep their histories themselves, without one.
 */

import {
  type BaseChatModelParams,
  SimpleChatModel,
} from "@langchain/core/language_models/chat_models";
import type { BaseMessage } from "@langchain/core/messages";
import { AIMessage } from "@langchain/core/messages";
import { MemorySaver } from "@langchain/langgraph";
import { createAgent, createMiddleware } from "langchain";
import { danglingToolCallMiddleware } from "tool-call-resilience";

/** A chat model that answers every call at once with the same text. */
class AnsweringModel extends SimpleChatModel {
  constructor(params: BaseChatModelParams = {}) {
    super(params);
  }

  _llmType(): string {
    return "answering-fake";
  }

  async _call(): Promise<string> {
    return "Done.";
  }

  /** The agent binds its (empty) tool list; this model ignores tools. */
  override bindTools(): this {
    return this;
  }
}

/**
 * What runs around the model call: nothing, a middleware whose `wrapModelCall` only calls the
 * handler (what `createAgent` itself costs per middleware), or ours.
 */
export type StepMiddleware = "none" | "pass-through" | "ours";

const passThrough = createMiddleware({
  name: "PassThrough",
  wrapModelCall: (request, handler) => handler(request),
});

/** Where the agent keeps its threads: a `MemorySaver`, or nowhere. */
export type StepCheckpointer = "memory-saver" | "none";

/**
 * A function that runs one agent step on `history` and resolves to the number of messages the
 * step ended with (the history and the answer). With a checkpointer each step runs on a new
 * thread, deleted afterwards, so that every step starts from the same history.
 */
export function agentStep(
  history: readonly BaseMessage[],
  middleware: StepMiddleware,
  checkpointing: StepCheckpointer,
): () => Promise<number> {
  const checkpointer = checkpointing === "memory-saver" ? new MemorySaver() : undefined;
  const agent = createAgent({
    model: new AnsweringModel(),
    tools: [],
    checkpointer,
    middleware:
      middleware === "ours"
        ? [danglingToolCallMiddleware({ logger: false })]
        : middleware === "pass-through"
          ? [passThrough]
          : [],
  });
  let threads = 0;
  return async () => {
    const threadId = `bench-${threads++}`;
    const state = await agent.invoke(
      { messages: [...history] },
      { configurable: { thread_id: threadId } },
    );
    await checkpointer?.deleteThread(threadId);
    const last = state.messages.at(-1);
    if (!AIMessage.isInstance(last) || last.text !== "Done.") {
      throw new Error("the agent step did not end with the model's answer");
    }
    return state.messages.length;
  };
}
